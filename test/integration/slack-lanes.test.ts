// Slack delivery's lanes (relay-core/queues/slack-lanes.ts, a queue each) on a real relay, real Redis/BullMQ and the
// fake Slack: a new handoff's first DMs are posted before a backlog of DM syncs drains, the syncs are still served
// while more first deliveries wait than the first lane can take, and a sync job an older relay left on the single
// `slack` queue is still delivered, once. The lanes are paused (BullMQ's own pause, as when the worker is down)
// while a backlog is built; the assertions are on the order of the calls the fake Slack got. The backlogs are a
// few hundred calls: each test gets three minutes on a loaded box (60 s was not enough there).
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { ThreadDoc } from '../../relay-core/domain/documents';
import { DELIVERY_JOB_OPTIONS } from '../../relay-core/queues/bullmq-queues';
import { SLACK_FIRST_LANE, SLACK_SYNC_LANE } from '../../relay-core/queues/slack-lanes';
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
let firstLane: Queue;
let syncLane: Queue;
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
  firstLane = new Queue(SLACK_FIRST_LANE, { connection, prefix: relay.config.queuePrefix });
  syncLane = new Queue(SLACK_SYNC_LANE, { connection, prefix: relay.config.queuePrefix });
});

afterAll(async () => {
  await resume();
  await probe?.close();
  await firstLane?.close();
  await syncLane?.close();
  connection?.disconnect();
  await relay?.stop();
  await slack?.close();
});

/** Both lanes stop handing out jobs (as with no worker running), or start again. */
async function pause(): Promise<void> {
  await Promise.all([firstLane.pause(), syncLane.pause()]);
}
async function resume(): Promise<void> {
  await Promise.all([firstLane?.resume(), syncLane?.resume()]);
}

/** Jobs a lane holds that no worker took yet. */
async function queued(lane: Queue): Promise<number> {
  const counts = await lane.getJobCounts('waiting', 'prioritized', 'delayed');
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

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
  await pause();
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
  expect(await queued(syncLane)).toBe(100);
  expect(await queued(firstLane)).toBe(1);
  await resume();
  await probe.settled(120_000);

  const work = syncWorkOf(backlog).filter((i) => i >= start);
  // Every thread synced: both DMs redrawn and a reply under each (a job can redraw again when the thread moved meanwhile).
  expect(work.length).toBeGreaterThanOrEqual(200);
  expect(positions('chat.update', redrawsOf(backlog)).filter((i) => i >= start).length).toBeGreaterThanOrEqual(100);
  for (const kind of ['recipient', 'sender']) {
    const [posted] = positions('chat.postMessage', postOf(fresh!, kind));
    expect(posted).toBeDefined();
    // FIFO would post it after all of them; ahead of it is at most what the syncs the sync lane's worker took
    // beside it did (8 jobs at a time, two redraws and two replies each).
    const before = work.filter((i) => i < posted!).length;
    expect(before).toBeLessThanOrEqual(Math.min(8 * 4, work.length / 4));
  }
}, 180_000);

test('DM syncs are still served while more first deliveries wait than the first lane can take', async () => {
  const backlog = await delivered(20, 'starve');
  const start = slack.calls.length;
  await pause();
  await accept(backlog.map((t) => t._id));
  // 40 first deliveries queued after those 20 syncs: a stream the first lane's worker cannot keep up with.
  const stream = await send(40, 'stream');
  expect([await queued(firstLane), await queued(syncLane)]).toEqual([40, 20]);
  await resume();
  await probe.settled(120_000);

  const firstPosts = stream
    .map((id) => positions('chat.postMessage', postOf(id, 'recipient'))[0]!)
    .sort((a, b) => a - b);
  expect(firstPosts).toHaveLength(40);
  const redraws = positions('chat.update', redrawsOf(backlog)).filter((i) => i >= start);
  expect(redraws.length).toBeGreaterThanOrEqual(40);
  // By the time half the stream was posted (20 first deliveries taken, the rest still queued), strict priority
  // would have served no sync at all; the sync lane's own worker has served a good share of them.
  const halfway = firstPosts[19]!;
  const syncedByThen = new Set(
    slack.calls.flatMap((call, i) =>
      i >= start && i < halfway && call.method === 'chat.update' && redrawsOf(backlog)(call)
        ? [String(call.args.ts)]
        : [],
    ),
  );
  expect(syncedByThen.size).toBeGreaterThanOrEqual(10);
}, 180_000);

test('a sync job an older relay left on the single `slack` queue at priority 1 is delivered once by the first lane', async () => {
  const [thread] = await delivered(1, 'upgrade');
  await pause();
  await accept([thread!._id]);
  // What the older relay's publisher did with the accept: the same job on `slack`, in its prioritized set. Added
  // there before it leaves the sync lane, so the outbox sweep (every 5 s) never finds it on neither.
  const accepted = (await relay.store.readThread(thread!._id))!.outbox.find((e) => e.type === 'thread.accepted')!;
  const job = (await syncLane.getJob(accepted.id))!;
  await firstLane.add(job.name, job.data, { ...DELIVERY_JOB_OPTIONS, jobId: accepted.id, priority: 1 });
  await job.remove();
  expect(await relay.relay.outbox.sweep(0)).toBe(0);
  expect(await syncLane.getJob(accepted.id)).toBeUndefined();
  await resume();
  await probe.settled(60_000);

  const ran = (await probe.finished()).filter((j) => j.id === accepted.id);
  expect(ran).toEqual([expect.objectContaining({ type: 'thread.accepted', attemptsMade: 1 })]);
  expect(await firstLane.getJobState(accepted.id)).toBe('completed');
  expect(await syncLane.getJob(accepted.id)).toBeUndefined();
  // The sender heard of the accept once, both DMs show it, and the thread no longer waits for the job.
  const notices = slack.calls.filter(
    (c) => c.method === 'chat.postMessage' && c.response.ok && String(c.args.thread_ts) === thread!.slack_sender!.ts,
  );
  expect(notices.map((c) => String(c.args.text))).toEqual([expect.stringContaining('accepted your handoff')]);
  for (const dm of [thread!.slack!, thread!.slack_sender!]) {
    const last = slack.messages.get(dm.channel)!.find((m) => m.ts === dm.ts)!;
    expect(JSON.stringify(last.blocks)).toContain('Accepted by');
  }
  await waitUntil(
    async () =>
      !(await relay.store.readThread(thread!._id))!.jobs_pending?.includes(`slack:${accepted.id}`) || undefined,
    'the accept to leave the thread’s outbox',
  );
}, 180_000);
