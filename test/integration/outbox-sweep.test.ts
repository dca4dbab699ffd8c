// A thread keeps its event's jobs pending until they finished, and the sweep enqueues again only what is missing
// from its queue: a job still queued is left to its workers, and one that finished (then was removed from Redis a
// day later) is never added again, which would deliver it again.
import { Queue, Worker } from 'bullmq';
import { SLACK_LANES } from '../../relay-core/queues/slack-lanes';
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { testRedisUrl } from '../helpers/test-env';
import { waitUntil } from '../helpers/wait-until';

let slack: FakeSlack;
let relay: TestRelay;
let queues: Queue[];
let webhooks: Queue;

beforeAll(async () => {
  slack = await startFakeSlack();
  // No worker role: jobs stay on the queue where the test can count them.
  relay = await startTestRelay({ name: 'outbox_sweep', slack, env: { RELAY_ROLES: 'api,bot' } });
  queues = SLACK_LANES.map(
    (lane) => new Queue(lane, { connection: { url: testRedisUrl() }, prefix: relay.config.queuePrefix }),
  );
  webhooks = new Queue('webhooks', { connection: { url: testRedisUrl() }, prefix: relay.config.queuePrefix });
});

afterAll(async () => {
  await Promise.all((queues ?? []).map((queue) => queue.close()));
  await webhooks?.close();
  await relay?.stop();
  await slack?.close();
});

/** The ids of the events in the teammate's event log (GET /events from its start). */
async function loggedEventIds(key: string): Promise<string[]> {
  const response = await fetch(`${relay.url}/events?since=0`, { headers: { authorization: `Bearer ${key}` } });
  return ((await response.json()) as { events: Array<{ event_id: string }> }).events.map((e) => e.event_id);
}

/** The Slack jobs on either lane. */
async function jobEventIds(): Promise<string[]> {
  const states = ['waiting', 'prioritized', 'delayed', 'active', 'completed', 'failed'] as const;
  const jobs = (await Promise.all(queues.map((queue) => queue.getJobs([...states])))).flat();
  return jobs.map((j) => j.id!).sort();
}

/** Runs the queued jobs of `name` as a worker would (they do nothing) and waits until none is left. */
async function runJobs(name: 'slack' | 'webhooks', ids: string[]): Promise<void> {
  const worker = new Worker(name, async () => 'done', {
    connection: { url: testRedisUrl() },
    prefix: relay.config.queuePrefix,
  });
  const other = new Queue(name, { connection: { url: testRedisUrl() }, prefix: relay.config.queuePrefix });
  try {
    await waitUntil(
      async () => (await Promise.all(ids.map((id) => other.getJobState(id)))).every((s) => s === 'completed'),
      `${name} jobs run`,
    );
  } finally {
    await worker.close();
    await other.close();
  }
}

test('an event stays in the outbox while its jobs are queued, leaves once they finished, and is not enqueued again', async () => {
  const sender = await relay.register({ handle: 'sender@acme' });
  const recipient = await relay.register({ handle: 'recipient@acme' });
  const { body } = await relay.rpc(sender, 'message/send', {
    recipient: 'recipient@acme',
    intent: 'inform',
    message: { parts: [{ text: 'x' }] },
  });
  const threadId = body.result.task_id as string;
  const thread = (await relay.store.threads.findOne({ _id: threadId }))!;
  const created = thread.outbox[0]!.id;
  expect(await jobEventIds()).toEqual([created]);
  // Written with the thread itself, in the same insert.
  expect(thread.jobs_pending).toEqual([`events:${created}`, `webhooks:${created}`, `slack:${created}`]);
  expect(thread.pending_since).toBeInstanceOf(Date);
  // In both event logs when the call answered; nobody hears of it by webhook, so it has no webhooks job: both are
  // taken out of the thread with the next marks.
  for (const key of [sender, recipient]) expect(await loggedEventIds(key)).toContain(created);
  expect(await webhooks.getJob(created)).toBeUndefined();
  await relay.store.outbox.flush();
  expect((await relay.store.readThread(threadId))!.jobs_pending).toEqual([`slack:${created}`]);

  // Queued: left to the workers.
  expect(await relay.relay.outbox.sweep(0)).toBe(0);
  expect(await relay.store.outbox.count()).toBe(1);

  // Run by workers whose marks were lost (this relay runs none): the sweep finds them finished and takes them out.
  await runJobs('slack', [created]);
  expect(await relay.relay.outbox.sweep(0)).toBe(0);
  expect(await relay.store.outbox.count()).toBe(0);
  const swept = (await relay.store.threads.findOne({ _id: threadId }))!;
  expect(swept.jobs_pending).toBeUndefined();
  expect(swept.pending_since).toBeUndefined();

  // The created job is removed a day later (removeOnComplete), then the thread changes again: only the new event goes.
  await queues[0]!.remove(created);
  const appended = await relay.rpc(sender, 'message/send', {
    task_id: threadId,
    message: { parts: [{ text: 'more' }] },
  });
  expect(appended.body.error).toBeUndefined();
  const message = (await relay.store.threads.findOne({ _id: threadId }))!.outbox[1]!.id;
  await relay.relay.outbox.sweep(0);
  expect(await jobEventIds()).toEqual([message]);
});

test("the workers' marks take each job out of its thread as it finished, and a write that read the thread before does not put it back", async () => {
  const sender = await relay.register({ handle: 'sender4@acme' });
  await relay.register({ handle: 'recipient4@acme' });
  const { body } = await relay.rpc(sender, 'message/send', {
    recipient: 'recipient4@acme',
    intent: 'inform',
    message: { parts: [{ text: 'w' }] },
  });
  const threadId = body.result.task_id as string;
  const read = (await relay.store.threads.findOne({ _id: threadId }))!;
  const eventId = read.outbox[0]!.id;
  expect(read.jobs_pending).toEqual([`events:${eventId}`, `webhooks:${eventId}`, `slack:${eventId}`]);
  // The event logs' entries and the webhooks job nobody needed are marked finished by the publish itself.
  await relay.store.outbox.flush();
  expect((await relay.store.readThread(threadId))!.jobs_pending).toEqual([`slack:${eventId}`]);
  // A write from the version read before the marks (still the version: marks do not move it) writes only what it
  // changed, and puts no finished job back.
  const { after } = await relay.store.writeThread(threadId, (doc) => ({ ...doc, summary: 'changed' }), read);
  expect(after?.version).toBe(read.version + 1);
  expect(await relay.store.readThread(threadId)).toMatchObject({
    summary: 'changed',
    version: read.version + 1,
    jobs_pending: [`slack:${eventId}`],
  });
  relay.store.outbox.finished(threadId, 'slack', eventId);
  await relay.store.outbox.flush();
  const done = (await relay.store.readThread(threadId))!;
  expect(done.jobs_pending).toBeUndefined();
  expect(done.pending_since).toBeUndefined();
  expect(done.summary).toBe('changed');
});

test('a job Redis lost is enqueued again by the sweep', async () => {
  const sender = await relay.register({ handle: 'sender3@acme' });
  await relay.register({ handle: 'recipient3@acme' });
  const { body } = await relay.rpc(sender, 'message/send', {
    recipient: 'recipient3@acme',
    intent: 'inform',
    message: { parts: [{ text: 'z' }] },
  });
  const event = (await relay.store.threads.findOne({ _id: body.result.task_id }))!.outbox[0]!;
  await queues[0]!.remove(event.id);
  expect(await jobEventIds()).not.toContain(event.id);
  expect(await relay.relay.outbox.sweep(0)).toBe(1);
  expect(await jobEventIds()).toContain(event.id);
});

test('an event whose writer died after the write is enqueued by the sweep once it settled; a pending job of an event the thread lacks is dropped', async () => {
  const sender = await relay.register({ handle: 'sender2@acme' });
  await relay.register({ handle: 'recipient2@acme' });
  const { body } = await relay.rpc(sender, 'message/send', {
    recipient: 'recipient2@acme',
    intent: 'inform',
    message: { parts: [{ text: 'y' }] },
  });
  const threadId = body.result.task_id as string;
  const event = (await relay.store.threads.findOne({ _id: threadId }))!.outbox[0]!;
  await queues[0]!.remove(event.id);
  // Not settled yet: a writer may be enqueueing it right now.
  expect(await relay.relay.outbox.sweep(60_000)).toBe(0);
  // As a process leaves it when it dies between its write and the add: the job pending on the thread, on no queue.
  const never = '00000000-0000-4000-8000-000000000001';
  await relay.store.threads.updateOne(
    { _id: threadId },
    { $set: { pending_since: new Date(Date.now() - 60_000) }, $push: { jobs_pending: `slack:${never}` } },
  );
  expect(await relay.relay.outbox.sweep(1_000)).toBe(1);
  expect((await jobEventIds()).filter((id) => id === event.id || id === never)).toEqual([event.id]);
  await relay.store.outbox.flush();
  expect((await relay.store.readThread(threadId))!.jobs_pending).toEqual([`slack:${event.id}`]);
});

test('an event a teammate hears of by webhook gets its webhooks job; one whose log entries were lost is recorded again by the sweep', async () => {
  const sender = await relay.register({ handle: 'sender5@acme' });
  const recipient = await relay.register({ handle: 'recipient5@acme' });
  const card = await fetch(`${relay.url}/agents/me/card`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${recipient}`, 'content-type': 'application/json' },
    body: JSON.stringify({ notification_url: 'https://hooks.example.com/relay' }),
  });
  expect(card.status).toBe(200);
  const { body } = await relay.rpc(sender, 'message/send', {
    recipient: 'recipient5@acme',
    intent: 'inform',
    message: { parts: [{ text: 'v' }] },
  });
  const threadId = body.result.task_id as string;
  const event = (await relay.store.threads.findOne({ _id: threadId }))!.outbox[0]!;
  expect(await webhooks.getJob(event.id)).toMatchObject({ name: 'thread.created', data: { logged: true } });
  await relay.store.outbox.flush();
  expect((await relay.store.readThread(threadId))!.jobs_pending).toEqual([`webhooks:${event.id}`, `slack:${event.id}`]);

  // As a process leaves it when it dies between its write and the log entries: pending on the thread, in no log.
  await relay.store.eventLog.entries.deleteMany({ event_id: event.id });
  await relay.store.threads.updateOne(
    { _id: threadId },
    { $set: { pending_since: new Date(Date.now() - 60_000) }, $push: { jobs_pending: `events:${event.id}` } },
  );
  await relay.relay.outbox.sweep(1_000);
  const logged = await relay.store.eventLog.entries.find({ event_id: event.id }).toArray();
  expect(logged.map((entry) => entry.handle).sort()).toEqual(['recipient5@acme', 'sender5@acme']);
  await relay.store.outbox.flush();
  expect((await relay.store.readThread(threadId))!.jobs_pending).toEqual([`webhooks:${event.id}`, `slack:${event.id}`]);
});
