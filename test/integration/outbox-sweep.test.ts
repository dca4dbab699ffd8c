// The outbox sweep re-enqueues only the events it has not seen on their queues yet. An older event's job may
// have completed and been removed from Redis long ago; adding it again would deliver it again.
import { Queue } from 'bullmq';
import { startFakeSlack, type FakeSlack } from '../fake-slack/fake-slack-api';
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
  const jobs = await queue.getJobs(['waiting', 'delayed', 'active', 'completed', 'failed']);
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
  expect((await relay.store.threads.findOne({ _id: threadId }))!.outbox_dirty).toBe(false);

  // The created job ran and was removed (removeOnComplete), then the thread changed again.
  await queue.remove(created);
  const appended = await relay.rpc(sender, 'message/send', { task_id: threadId, message: { parts: [{ text: 'more' }] } });
  expect(appended.body.error).toBeUndefined();
  const message = (await relay.store.threads.findOne({ _id: threadId }))!.outbox[1]!.id;
  await relay.relay.sweepOutbox(0);
  expect(await jobEventIds()).toEqual([message]);
});
