// The outbox sweep re-enqueues only the events it has not seen on their queues yet. An older event's job may
// have completed and been removed from Redis long ago; adding it again would deliver it again.
import { Queue } from 'bullmq';
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { testRedisUrl } from '../helpers/test-env';

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

test('a sweep after a new event enqueues that event, not the ones whose jobs already ran and were removed', async () => {
  const sender = await relay.register({ handle: 'sender@acme' });
  await relay.register({ handle: 'recipient@acme' });
  const { body } = await relay.rpc(sender, 'message/send', { recipient: 'recipient@acme', intent: 'inform', message: { parts: [{ text: 'x' }] } });
  const threadId = body.result.task_id as string;
  const created = (await relay.store.threads.findOne({ _id: threadId }))!.outbox[0]!.id;
  expect(await jobEventIds()).toEqual([created]);

  await relay.relay.sweepOutbox(0);
  expect(await jobEventIds()).toEqual([created]);
  expect(await relay.store.outbox.count()).toBe(0);

  // The created job ran and was removed (removeOnComplete), then the thread changed again.
  await queue.remove(created);
  const appended = await relay.rpc(sender, 'message/send', { task_id: threadId, message: { parts: [{ text: 'more' }] } });
  expect(appended.body.error).toBeUndefined();
  const message = (await relay.store.threads.findOne({ _id: threadId }))!.outbox[1]!.id;
  await relay.relay.sweepOutbox(0);
  expect(await jobEventIds()).toEqual([message]);
});

test('an event whose writer died after the write is enqueued by the sweep; one whose write never happened is dropped', async () => {
  const sender = await relay.register({ handle: 'sender2@acme' });
  await relay.register({ handle: 'recipient2@acme' });
  const { body } = await relay.rpc(sender, 'message/send', { recipient: 'recipient2@acme', intent: 'inform', message: { parts: [{ text: 'y' }] } });
  const threadId = body.result.task_id as string;
  const event = (await relay.store.threads.findOne({ _id: threadId }))!.outbox[0]!;
  await relay.relay.sweepOutbox(0);
  await queue.remove(event.id);
  // As a process leaves it when it dies between its write and the add: the entry is still in the outbox.
  const old = new Date(Date.now() - 60_000);
  await relay.store.outboxEntries.insertOne({ _id: event.id, thread_id: threadId, event, at: old });
  const never = { ...event, id: '00000000-0000-4000-8000-000000000001' };
  await relay.store.outboxEntries.insertOne({ _id: never.id, thread_id: threadId, event: never, at: old });
  expect(await relay.relay.sweepOutbox(1_000)).toBe(1);
  expect((await jobEventIds()).filter((id) => id === event.id || id === never.id)).toEqual([event.id]);
  expect(await relay.store.outbox.count()).toBe(0);
});
