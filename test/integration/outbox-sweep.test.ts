// The outbox keeps an event until its jobs finished, and the sweep enqueues again only what is missing from its
// queue: a job still queued is left to its workers, and one that finished (then was removed from Redis a day
// later) is never added again, which would deliver it again.
import { Queue, Worker } from 'bullmq';
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { testRedisUrl } from '../helpers/test-env';
import { waitUntil } from '../helpers/wait-until';

let slack: FakeSlack;
let relay: TestRelay;
let queue: Queue;

beforeAll(async () => {
  slack = await startFakeSlack();
  // No worker role: jobs stay on the queue where the test can count them.
  relay = await startTestRelay({ name: 'outbox_sweep', slack, env: { RELAY_ROLES: 'api,bot' } });
  queue = new Queue('slack', { connection: { url: testRedisUrl() }, prefix: relay.config.queuePrefix });
});

afterAll(async () => {
  await queue?.close();
  await relay?.stop();
  await slack?.close();
});

async function jobEventIds(): Promise<string[]> {
  const jobs = await queue.getJobs(['waiting', 'prioritized', 'delayed', 'active', 'completed', 'failed']);
  return jobs.map((j) => j.id!).sort();
}

/** Runs the queued jobs of `name` as a worker would (they do nothing) and waits until none is left. */
async function runJobs(name: 'slack' | 'webhooks', ids: string[]): Promise<void> {
  const worker = new Worker(name, async () => 'done', { connection: { url: testRedisUrl() }, prefix: relay.config.queuePrefix });
  const other = new Queue(name, { connection: { url: testRedisUrl() }, prefix: relay.config.queuePrefix });
  try {
    await waitUntil(async () => (await Promise.all(ids.map((id) => other.getJobState(id)))).every((s) => s === 'completed'), `${name} jobs run`);
  } finally {
    await worker.close();
    await other.close();
  }
}

test('an event stays in the outbox while its jobs are queued, leaves once they finished, and is not enqueued again', async () => {
  const sender = await relay.register({ handle: 'sender@acme' });
  await relay.register({ handle: 'recipient@acme' });
  const { body } = await relay.rpc(sender, 'message/send', { recipient: 'recipient@acme', intent: 'inform', message: { parts: [{ text: 'x' }] } });
  const threadId = body.result.task_id as string;
  const created = (await relay.store.threads.findOne({ _id: threadId }))!.outbox[0]!.id;
  expect(await jobEventIds()).toEqual([created]);
  expect(await relay.store.outboxEntries.findOne({ _id: created })).toMatchObject({ jobs: ['webhooks', 'slack'] });

  // Queued: left to the workers.
  expect(await relay.relay.sweepOutbox(0)).toBe(0);
  expect(await relay.store.outbox.count()).toBe(1);

  // Run by workers whose marks were lost (this relay runs none): the sweep finds them finished and removes the entry.
  await runJobs('slack', [created]);
  await runJobs('webhooks', [created]);
  expect(await relay.relay.sweepOutbox(0)).toBe(0);
  expect(await relay.store.outbox.count()).toBe(0);

  // The created job is removed a day later (removeOnComplete), then the thread changes again: only the new event goes.
  await queue.remove(created);
  const appended = await relay.rpc(sender, 'message/send', { task_id: threadId, message: { parts: [{ text: 'more' }] } });
  expect(appended.body.error).toBeUndefined();
  const message = (await relay.store.threads.findOne({ _id: threadId }))!.outbox[1]!.id;
  await relay.relay.sweepOutbox(0);
  expect(await jobEventIds()).toEqual([message]);
});

test("the workers' marks remove an entry once the job of each of its queues finished", async () => {
  const sender = await relay.register({ handle: 'sender4@acme' });
  await relay.register({ handle: 'recipient4@acme' });
  const { body } = await relay.rpc(sender, 'message/send', { recipient: 'recipient4@acme', intent: 'inform', message: { parts: [{ text: 'w' }] } });
  const eventId = (await relay.store.threads.findOne({ _id: body.result.task_id }))!.outbox[0]!.id;
  relay.store.outbox.finished('slack', eventId);
  await relay.store.outbox.flush();
  expect(await relay.store.outboxEntries.findOne({ _id: eventId })).toMatchObject({ jobs: ['webhooks'] });
  relay.store.outbox.finished('webhooks', eventId);
  await relay.store.outbox.flush();
  expect(await relay.store.outboxEntries.findOne({ _id: eventId })).toBeNull();
});

test('a job Redis lost is enqueued again by the sweep', async () => {
  const sender = await relay.register({ handle: 'sender3@acme' });
  await relay.register({ handle: 'recipient3@acme' });
  const { body } = await relay.rpc(sender, 'message/send', { recipient: 'recipient3@acme', intent: 'inform', message: { parts: [{ text: 'z' }] } });
  const event = (await relay.store.threads.findOne({ _id: body.result.task_id }))!.outbox[0]!;
  await queue.remove(event.id);
  expect(await jobEventIds()).not.toContain(event.id);
  expect(await relay.relay.sweepOutbox(0)).toBe(1);
  expect(await jobEventIds()).toContain(event.id);
});

test('an event whose writer died after the write is enqueued by the sweep; one whose write never happened is dropped', async () => {
  const sender = await relay.register({ handle: 'sender2@acme' });
  await relay.register({ handle: 'recipient2@acme' });
  const { body } = await relay.rpc(sender, 'message/send', { recipient: 'recipient2@acme', intent: 'inform', message: { parts: [{ text: 'y' }] } });
  const threadId = body.result.task_id as string;
  const event = (await relay.store.threads.findOne({ _id: threadId }))!.outbox[0]!;
  await queue.remove(event.id);
  // As a process leaves it when it dies between its write and the add: the entry is in the outbox, the job nowhere.
  const old = new Date(Date.now() - 60_000);
  await relay.store.outboxEntries.updateOne({ _id: event.id }, { $set: { at: old } });
  const never = { ...event, id: '00000000-0000-4000-8000-000000000001' };
  await relay.store.outboxEntries.insertOne({ _id: never.id, thread_id: threadId, event: never, at: old, jobs: ['slack'] });
  expect(await relay.relay.sweepOutbox(1_000)).toBe(1);
  expect((await jobEventIds()).filter((id) => id === event.id || id === never.id)).toEqual([event.id]);
  expect(await relay.store.outboxEntries.findOne({ _id: never.id })).toBeNull();
  expect(await relay.store.outboxEntries.findOne({ _id: event.id })).not.toBeNull();
});
