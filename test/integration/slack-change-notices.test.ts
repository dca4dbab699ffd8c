// A sender (or recipient) hears of every change the other party makes by one short reply under their own DM, so
// Slack notifies them: accepted, declined with its reason, completed with its result, cancelled, reassigned; a
// message is itself the reply. Exactly once per change, also when Slack's answer to the post is lost, when a
// worker died between the post and its record (the rerun finds it by its marker), and when a finished job is run
// again. Real relay, BullMQ, fake Slack.
import type { ThreadDoc } from '../../relay-core/domain/documents';
import { SLACK_SYNC_LANE } from '../../relay-core/queues/slack-lanes';
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { sendHandoff, text } from '../helpers/handoffs';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { slackQueueProbe, type SlackQueueProbe } from '../helpers/slack-queue';
import { waitUntil } from '../helpers/wait-until';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';

const U = { sam: 'U0CNSAM', rae: 'U0CNRAE', lou: 'U0CNLOU' };

let slack: FakeSlack;
let relay: TestRelay;
let probe: SlackQueueProbe;
const keys: Record<string, string> = {};

beforeAll(async () => {
  slack = await startFakeSlack();
  for (const user of Object.values(U)) slack.addUser(user);
  relay = await startTestRelay({ name: 'change_notices', slack });
  keys.sam = await relay.register({ handle: 'sam@acme', name: 'Sam', slack_user_id: U.sam });
  keys.rae = await relay.register({ handle: 'rae@acme', name: 'Rae', slack_user_id: U.rae });
  keys.lou = await relay.register({ handle: 'lou@acme', name: 'Lou', slack_user_id: U.lou });
  probe = slackQueueProbe(relay);
});

afterAll(async () => {
  await probe?.close();
  await relay?.stop();
  await slack?.close();
});

const read = async (id: string): Promise<ThreadDoc> => (await relay.store.readThread(id))!;

/** Both DMs of a new handoff from Sam to `to`, once posted. */
async function handoff(summary: string, to = 'rae@acme'): Promise<ThreadDoc> {
  const id = await sendHandoff(relay, keys.sam, to, summary);
  return waitUntil(async () => {
    const doc = await read(id);
    return doc.slack && doc.slack_sender ? doc : undefined;
  }, 'both DMs');
}

/** What a person reads in each reply under this DM, oldest first (the first block's text). */
function repliesUnder(dm: { channel: string; ts: string }): string[] {
  return slack
    .callsTo('chat.postMessage')
    .filter((c) => c.args.channel === dm.channel && c.args.thread_ts === dm.ts && c.response.ok)
    .map((c) => ((c.args.blocks as any[])[0].text?.text ?? JSON.stringify(c.args.blocks)) as string);
}

/** The event of this type on the thread, once the slack queue has synced it and is idle. */
async function synced(id: string, type: string) {
  const event = await waitUntil(async () => (await read(id)).outbox.find((e) => e.type === type), type);
  await waitUntil(async () => {
    const jobs = await probe.finished();
    return jobs.some((j) => j.id.includes(event.id) && j.returnvalue !== undefined) || undefined;
  }, `the slack job of ${type}`);
  await probe.settled();
  return event;
}

test('accept, a message, complete: the sender gets one notice each (the message is its own reply), with the result', async () => {
  const doc = await handoff('The login page flickers on Safari');
  const senderDm = doc.slack_sender!;
  const recipientDm = doc.slack!;
  await synced(doc._id, 'thread.created');
  expect(repliesUnder(senderDm)).toEqual([]);

  expect((await relay.rpc(keys.rae, 'tasks/update', { task_id: doc._id, transition: 'accept' })).body.error).toBe(
    undefined,
  );
  await synced(doc._id, 'thread.accepted');
  expect(repliesUnder(senderDm)).toEqual([
    `:white_check_mark: <@${U.rae}> accepted your handoff “The login page flickers on Safari”.`,
  ]);
  // The one who acted hears nothing new: their DM is redrawn.
  expect(repliesUnder(recipientDm)).toEqual([]);

  const said = await relay.rpc(keys.rae, 'message/send', { task_id: doc._id, message: text('Only on retina') });
  expect(said.body.error).toBeUndefined();
  await synced(doc._id, 'thread.message');
  expect(repliesUnder(senderDm)).toHaveLength(2);
  expect(repliesUnder(senderDm)[1]).toContain('Only on retina');

  const done = await relay.rpc(keys.rae, 'tasks/update', {
    task_id: doc._id,
    transition: 'complete',
    result_summary: 'Fixed the repaint in Safari 17',
  });
  expect(done.body.error).toBeUndefined();
  await synced(doc._id, 'thread.completed');
  expect(repliesUnder(senderDm)).toHaveLength(3);
  expect(repliesUnder(senderDm)[2]).toBe(
    `:tada: Your handoff “The login page flickers on Safari” was completed by <@${U.rae}>.\n*Result:* Fixed the repaint in Safari 17`,
  );
  expect(repliesUnder(recipientDm).filter((t) => !t.includes('Only on retina'))).toEqual([]);
});

test('a decline tells the sender why; a cancel tells the recipient', async () => {
  const declined = await handoff('Rotate the staging keys');
  await relay.rpc(keys.rae, 'tasks/update', {
    task_id: declined._id,
    transition: 'decline',
    reason: 'Not my area: ask the SRE team',
  });
  await synced(declined._id, 'thread.declined');
  expect(repliesUnder(declined.slack_sender!)).toEqual([
    `:no_entry_sign: <@${U.rae}> declined your handoff “Rotate the staging keys”:\n>Not my area: ask the SRE team`,
  ]);

  const cancelled = await handoff('Bump the SDK');
  expect((await relay.rpc(keys.sam, 'tasks/cancel', { task_id: cancelled._id })).body.error).toBeUndefined();
  await synced(cancelled._id, 'thread.cancelled');
  expect(repliesUnder(cancelled.slack!)).toEqual([
    `:wastebasket: <@${U.sam}> cancelled the handoff “Bump the SDK”; nothing more to do.`,
  ]);
  expect(repliesUnder(cancelled.slack_sender!)).toEqual([]);
});

test('a reassignment tells the earlier recipient under their old DM', async () => {
  const doc = await handoff('Review the cache patch');
  // Reassign is Slack's (the escalation's button and modal); the use case behind it, as Sam.
  const sam = (await relay.relay.teammates.get('sam@acme'))!;
  await relay.relay.reassignments.reassign(sam, doc._id, 'lou@acme', 'slack');
  await synced(doc._id, 'thread.reassigned');
  expect(repliesUnder(doc.slack!)).toEqual([
    `:arrows_counterclockwise: <@${U.sam}> handed “Review the cache patch” to <@${U.lou}>; nothing more to do here.`,
  ]);
});

test('Slack’s answer to the notice is lost: the retried job finds it by its marker; a finished job run again posts nothing', async () => {
  const doc = await handoff('Migrate the billing cron');
  await synced(doc._id, 'thread.created');
  slack.dropResponseNext('chat.postMessage');
  await relay.rpc(keys.rae, 'tasks/update', { task_id: doc._id, transition: 'accept' });
  const accepted = await synced(doc._id, 'thread.accepted');
  const jobs = (await probe.finished()).filter((j) => j.id.includes(accepted.id));
  expect(jobs.map((j) => j.attemptsMade)).toEqual([2]);
  expect(repliesUnder(doc.slack_sender!)).toEqual([
    `:white_check_mark: <@${U.rae}> accepted your handoff “Migrate the billing cron”.`,
  ]);
  // The lost answer's post is on Slack once, recorded once.
  const key = `sender:e:${accepted.id}`;
  const noticed = await read(doc._id);
  expect(noticed.slack_replies?.[key]).toBeDefined();
  expect(noticed.slack_pending?.[key]).toBeUndefined();

  // The same job run again (a worker that stalled after finishing, say): nothing more reaches Slack.
  const connection = new Redis(relay.config.redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue(SLACK_SYNC_LANE, { connection, prefix: relay.config.queuePrefix });
  try {
    const job = (await queue.getJob(jobs[0]!.id))!;
    await job.retry('completed');
    await waitUntil(
      async () => ((await queue.getJob(jobs[0]!.id))!.finishedOn ?? 0) > job.finishedOn! || undefined,
      'the rerun',
    );
    await probe.settled();
  } finally {
    await queue.close();
    connection.disconnect();
  }
  expect(repliesUnder(doc.slack_sender!)).toHaveLength(1);
});

test('a worker that died after Slack took the notice and before recording it: the rerun job finds it, posts nothing', async () => {
  const doc = await handoff('Renew the TLS certificate');
  await relay.rpc(keys.rae, 'tasks/update', { task_id: doc._id, transition: 'accept' });
  const accepted = await synced(doc._id, 'thread.accepted');
  const key = `sender:e:${accepted.id}`;
  const posted = slack.messages.get(doc.slack_sender!.channel)!.find((m) => m.metadata?.event_payload.kind === key)!;
  // The state a SIGKILL between chat.postMessage and the record leaves: Slack has the post (with its marker), the
  // thread only the dead job's claim, older than the lease.
  const longAgo = new Date(Date.now() - 5 * 60_000);
  await relay.store.threads.updateOne({ _id: doc._id }, {
    $unset: { [`slack_replies.${key}`]: '' },
    $set: {
      [`slack_pending.${key}`]: {
        marker: posted.metadata!.event_payload.marker,
        lease: 'dead-lease',
        channel: doc.slack_sender!.channel,
        thread_ts: doc.slack_sender!.ts,
        owner: 'job-of-a-dead-worker',
        claimed_at: longAgo,
        at: longAgo,
      },
    },
    $inc: { version: 1 },
  } as any);

  // BullMQ hands the stalled job to another worker: the same job runs again.
  const connection = new Redis(relay.config.redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue(SLACK_SYNC_LANE, { connection, prefix: relay.config.queuePrefix });
  try {
    const [job] = (await probe.finished()).filter((j) => j.id.includes(accepted.id));
    const before = (await queue.getJob(job!.id))!;
    await before.retry('completed');
    await waitUntil(async () => (await read(doc._id)).slack_replies?.[key], 'the notice recorded again');
    await probe.settled();
  } finally {
    await queue.close();
    connection.disconnect();
  }
  const after = await read(doc._id);
  expect(after.slack_replies?.[key]).toBe(posted.ts);
  expect(after.slack_pending?.[key]).toBeUndefined();
  expect(repliesUnder(doc.slack_sender!)).toEqual([
    `:white_check_mark: <@${U.rae}> accepted your handoff “Renew the TLS certificate”.`,
  ]);
});
