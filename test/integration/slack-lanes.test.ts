// The `slack` queue's lanes (relay-core/queues/slack-lanes.ts) on a real relay, real Redis/BullMQ and the fake Slack:
// a new handoff's first DMs are posted before a backlog of DM syncs drains, and the syncs are still served while
// more first deliveries wait than the worker can take. The queue is paused (BullMQ's own pause, as when the worker
// is down) while the backlog is built; the assertions are on the order of the calls the fake Slack got. The
// backlogs are a few hundred calls: each test gets three minutes on a loaded box (60 s was not enough there).
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { ThreadDoc } from '../../relay-core/domain/documents';
import { FIRST_PER_SYNC } from '../../relay-core/queues/slack-lanes';
import { startFakeSlack, type FakeSlack, type FakeSlackCall } from '../../scripts/fake-slack/fake-slack-api';
import { sendHandoff } from '../helpers/handoffs';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { slackQueueProbe, type SlackQueueProbe } from '../helpers/slack-queue';
import { waitUntil } from '../helpers/wait-until';

const SENDER = 'U0LNSENDER';
const RECIPIENT = 'U0LNRECIPIENT';

let slack: FakeSlack;
let relay: TestRelay;
let probe: SlackQueueProbe;
let connection: Redis;
let queue: Queue;
let senderKey: string;
let recipientKey: string;

beforeAll(async () => {
  slack = await startFakeSlack();
  for (const user of [SENDER, RECIPIENT]) slack.addUser(user);
  relay = await startTestRelay({ name: 'slack_lanes', slack });
  senderKey = await relay.register({ handle: 'sender@acme', slack_user_id: SENDER });
  recipientKey = await relay.register({ handle: 'recipient@acme', slack_user_id: RECIPIENT });
  probe = slackQueueProbe(relay);
  connection = new Redis(relay.config.redisUrl, { maxRetriesPerRequest: null });
  queue = new Queue('slack', { connection, prefix: relay.config.queuePrefix });
});

afterAll(async () => {
  await queue?.resume();
  await probe?.close();
  await queue?.close();
  connection?.disconnect();
  await relay?.stop();
  await slack?.close();
});

/** Sends `n` handoffs (in parallel, a few at a time) and returns their ids. */
async function send(n: number, label: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i += 8) {
    ids.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(8, n - i) }, (_, j) =>
          sendHandoff(relay, senderKey, 'recipient@acme', `${label} ${i + j}`),
        ),
      )),
    );
  }
  return ids;
}

/** `n` handoffs whose recipient and sender DMs are posted and recorded. */
async function delivered(n: number, label: string): Promise<ThreadDoc[]> {
  const ids = await send(n, label);
  await probe.settled(60_000);
  return Promise.all(
    ids.map((id) =>
      waitUntil(async () => {
        const doc = await relay.store.readThread(id);
        return doc?.slack && doc.slack_sender ? doc : undefined;
      }, `both DMs of ${id}`),
    ),
  );
}

/** Where in the fake Slack's call log each call to `method` matching `pick` is. */
function positions(method: string, pick: (call: FakeSlackCall) => boolean): number[] {
  return slack.calls.flatMap((call, i) => (call.method === method && call.response.ok && pick(call) ? [i] : []));
}

/** What syncs of these threads do on Slack: redraw one of their DMs, or post a reply under one (by the DMs' ts). */
function syncWorkOf(threads: ThreadDoc[]): number[] {
  const dms = new Set(threads.flatMap((t) => [t.slack!.ts, t.slack_sender!.ts]));
  return slack.calls.flatMap((call, i) => {
    const under = call.method === 'chat.postMessage' && dms.has(String(call.args.thread_ts));
    return call.response.ok && (under || (call.method === 'chat.update' && dms.has(String(call.args.ts)))) ? [i] : [];
  });
}

/** The calls redrawing one of these threads' DMs (by the DMs' ts). */
function redrawsOf(threads: ThreadDoc[]): (call: FakeSlackCall) => boolean {
  const dms = new Set(threads.flatMap((t) => [t.slack!.ts, t.slack_sender!.ts]));
  return (call) => dms.has(String(call.args.ts));
}

const postOf = (threadId: string, kind: string) => (call: FakeSlackCall) =>
  (call.args.metadata as any)?.event_payload?.thread_id === threadId &&
  (call.args.metadata as any).event_payload.kind === kind;

async function accept(ids: string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 8) {
    const answers = await Promise.all(
      ids.slice(i, i + 8).map((id) => relay.rpc(recipientKey, 'tasks/update', { task_id: id, transition: 'accept' })),
    );
    for (const answer of answers) expect(answer.body.error).toBeUndefined();
  }
}

test('a new handoff’s first DMs are posted before a backlog of a few hundred DM syncs drains', async () => {
  const backlog = await delivered(50, 'backlog');
  const start = slack.calls.length;
  await queue.pause();
  // Two syncs per thread (an accept, then a message from the sender): 100 jobs. The first to run finds both
  // changes: it redraws both DMs (accepted) and posts the message as a reply under each; the second finds
  // nothing left to do (the DMs show nothing per message, so they are not redrawn again).
  await accept(backlog.map((t) => t._id));
  for (let i = 0; i < backlog.length; i += 8) {
    await Promise.all(
      backlog.slice(i, i + 8).map((t) =>
        relay.rpc(senderKey, 'message/send', {
          task_id: t._id,
          message: { parts: [{ type: 'text', text: 'one more thing' }] },
        }),
      ),
    );
  }
  const [fresh] = await send(1, 'the new one');
  expect(await queue.getPrioritizedCount()).toBe(100);
  await queue.resume();
  await probe.settled(120_000);

  const work = syncWorkOf(backlog).filter((i) => i >= start);
  // Every thread synced: both DMs redrawn and a reply under each (a job can redraw again when the thread moved meanwhile).
  expect(work.length).toBeGreaterThanOrEqual(200);
  expect(positions('chat.update', redrawsOf(backlog)).filter((i) => i >= start).length).toBeGreaterThanOrEqual(100);
  for (const kind of ['recipient', 'sender']) {
    const [posted] = positions('chat.postMessage', postOf(fresh!, kind));
    expect(posted).toBeDefined();
    // FIFO would post it after all of them; ahead of it is at most what the syncs the worker took beside it did
    // (8 jobs at a time, two redraws and two replies each).
    const before = work.filter((i) => i < posted!).length;
    expect(before).toBeLessThanOrEqual(Math.min(8 * 4, work.length / 4));
  }
}, 180_000);

test('DM syncs are still served while more first deliveries wait than the worker can take', async () => {
  const backlog = await delivered(20, 'starve');
  const start = slack.calls.length;
  await queue.pause();
  await accept(backlog.map((t) => t._id));
  // 40 first deliveries queued behind those 20 syncs: a stream the worker cannot keep up with.
  const stream = await send(40, 'stream');
  await queue.resume();
  await probe.settled(120_000);

  const firstPosts = stream
    .map((id) => positions('chat.postMessage', postOf(id, 'recipient'))[0]!)
    .sort((a, b) => a - b);
  expect(firstPosts).toHaveLength(40);
  const redraws = positions('chat.update', redrawsOf(backlog)).filter((i) => i >= start);
  expect(redraws.length).toBeGreaterThanOrEqual(40);
  // By the time half the stream was posted (20 first deliveries taken, the rest still queued), strict priority
  // would have served no sync at all; one in every FIRST_PER_SYNC + 1 jobs is a sync.
  const halfway = firstPosts[19]!;
  const syncedByThen = new Set(
    slack.calls.flatMap((call, i) =>
      i >= start && i < halfway && call.method === 'chat.update' && redrawsOf(backlog)(call)
        ? [String(call.args.ts)]
        : [],
    ),
  );
  expect(syncedByThen.size).toBeGreaterThanOrEqual(Math.floor(20 / FIRST_PER_SYNC / 2));
}, 180_000);
