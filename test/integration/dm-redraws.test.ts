// The handoff DMs (recipient's and sender's) and the approvers' DMs are redrawn only when what they show changes
// (each record keeps a digest of what it shows, `shown`): a handoff's life (create, accept, three messages,
// complete) and a quorum approval, on a real relay, real Redis/BullMQ and the fake Slack, counting its chat.update
// calls per DM. A message does not change the DMs (it is a thread reply under each); accept and complete do. The
// Slack Accept button's own redraws are recorded too: a refusal's notice goes at the next sync, while "Verifying
// acceptance…" stays until the accept job's verdict replaces it.
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { ThreadDoc } from '../../relay-core/domain/documents';
import { messageDigest } from '../../bot/delivery/slack-posts';
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { sendHandoff, text } from '../helpers/handoffs';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { dmBlocks, dmText, press, waitForExplanation } from '../helpers/slack-dm';
import { slackQueueProbe, type SlackQueueProbe } from '../helpers/slack-queue';
import { waitUntil } from '../helpers/wait-until';

const U = { sender: 'U0DRSENDER', recipient: 'U0DRRECIP', held: 'U0DRHELD', sre1: 'U0DRSREONE', sre2: 'U0DRSRETWO' };

const POLICY = `
rules:
  - id: held-needs-two-sre
    match: { action: handoff.create, recipient: { handle: held@acme } }
    effect: require_approval
    approvers: [role:sre]
    quorum: 2
`;

let slack: FakeSlack;
let relay: TestRelay;
let probe: SlackQueueProbe;
const keys: Record<string, string> = {};

beforeAll(async () => {
  slack = await startFakeSlack();
  for (const user of Object.values(U)) slack.addUser(user);
  relay = await startTestRelay({ name: 'dm_redraws', slack });
  keys.sender = await relay.register({ handle: 'sender@acme', name: 'Sam', slack_user_id: U.sender });
  keys.recipient = await relay.register({ handle: 'recipient@acme', name: 'Rae', slack_user_id: U.recipient });
  keys.held = await relay.register({ handle: 'held@acme', name: 'Hal', slack_user_id: U.held });
  keys.sre1 = await relay.register({ handle: 'sre1@acme', role: 'sre', slack_user_id: U.sre1 });
  keys.sre2 = await relay.register({ handle: 'sre2@acme', role: 'sre', slack_user_id: U.sre2 });
  expect((await relay.rest('PUT', '/admin/policy', relay.adminKey, { source: POLICY })).status).toBe(200);
  probe = slackQueueProbe(relay);
});

afterAll(async () => {
  await probe?.close();
  await relay?.stop();
  await slack?.close();
});

const read = async (id: string): Promise<ThreadDoc> => (await relay.store.readThread(id))!;

/** chat.update calls on this post so far. */
function updatesOf(post: { channel: string; ts: string }): number {
  return slack.callsTo('chat.update').filter((c) => c.args.channel === post.channel && c.args.ts === post.ts).length;
}

/** Waits until the slack queue has finished `n` jobs of this event type for the thread, then until it is idle. */
async function synced(threadId: string, type: string, n = 1): Promise<void> {
  await waitUntil(async () => {
    const jobs = (await probe.finished()).filter((j) => j.type === type && j.threadId === threadId);
    return jobs.length >= n || undefined;
  }, `${n} ${type} job(s) of ${threadId}`);
  await probe.settled();
}

/** The digest of what the fake Slack holds for that post. */
function digestOnSlack(post: { channel: string; ts: string }): string {
  const message = slack.messages.get(post.channel)!.find((m) => m.ts === post.ts)!;
  return messageDigest({ text: message.text as string, blocks: dmBlocks(slack, post.channel, post.ts) });
}

function shownMatches(post: { channel: string; ts: string; shown?: string }): boolean {
  return post.shown === digestOnSlack(post);
}

/** The record's `shown` is the digest of what the fake Slack holds for that post. */
function expectShownMatches(post: { channel: string; ts: string; shown?: string }): void {
  expect(post.shown).toBe(digestOnSlack(post));
}

let clicks = 0;
/** A click by `user` on a button of this DM as it stands now. */
function clickOn(dm: { channel: string; ts: string }, actionId: string, user: string) {
  clicks += 1;
  const button = dmBlocks(slack, dm.channel, dm.ts)
    .flatMap((b) => (b.type === 'actions' ? b.elements : []))
    .find((e: any) => e.action_id === actionId);
  return {
    user,
    channel: dm.channel,
    messageTs: dm.ts,
    actionId,
    value: button.value as string,
    responseUrl: slack.responseUrl(`dr-click-${clicks}`),
    triggerId: slack.triggerId(),
  };
}

test('a handoff’s life: messages redraw neither DM; accept and complete redraw each DM once', async () => {
  const id = await sendHandoff(relay, keys.sender, 'recipient@acme', 'The login page flickers on Safari');
  const sent = await waitUntil(async () => {
    const doc = await read(id);
    return doc.slack && doc.slack_sender ? doc : undefined;
  }, 'both DMs');
  await synced(id, 'thread.created');
  const recipientDm = sent.slack!;
  const senderDm = sent.slack_sender!;
  expect([updatesOf(recipientDm), updatesOf(senderDm)]).toEqual([0, 0]);
  expectShownMatches((await read(id)).slack!);
  expectShownMatches((await read(id)).slack_sender!);

  const accepted = await relay.rpc(keys.recipient, 'tasks/update', { task_id: id, transition: 'accept' });
  expect(accepted.body.error).toBeUndefined();
  await synced(id, 'thread.accepted');
  expect([updatesOf(recipientDm), updatesOf(senderDm)]).toEqual([1, 1]);
  expect(dmText(slack, recipientDm.channel, recipientDm.ts)).toContain('Accepted');
  const afterAccept = await read(id);
  expectShownMatches(afterAccept.slack!);
  expectShownMatches(afterAccept.slack_sender!);

  // Three messages from the sender: each a thread reply under both DMs; the DMs themselves show nothing per message.
  for (const n of [1, 2, 3]) {
    const sent = await relay.rpc(keys.sender, 'message/send', {
      task_id: id,
      message: text(`Detail ${n}: it only happens on retina screens`),
    });
    expect(sent.body.error).toBeUndefined();
  }
  await waitUntil(async () => {
    const doc = await read(id);
    return (
      [1, 2, 3].every((n) => doc.slack_replies?.[`recipient:${n}`] && doc.slack_replies?.[`sender:${n}`]) || undefined
    );
  }, 'the three replies under both DMs');
  await synced(id, 'thread.message', 3);
  const replies = slack
    .callsTo('chat.postMessage')
    .filter((c) => c.args.thread_ts === recipientDm.ts || c.args.thread_ts === senderDm.ts);
  // The three messages under each DM, and the accept's one notice to the sender.
  expect(replies).toHaveLength(7);
  expect(replies.filter((c) => String(c.args.text).startsWith('Sam replied'))).toHaveLength(6);
  expect([updatesOf(recipientDm), updatesOf(senderDm)]).toEqual([1, 1]);

  const completed = await relay.rpc(keys.recipient, 'tasks/update', {
    task_id: id,
    transition: 'complete',
    result_summary: 'fixed the repaint',
  });
  expect(completed.body.error).toBeUndefined();
  await synced(id, 'thread.completed');
  expect([updatesOf(recipientDm), updatesOf(senderDm)]).toEqual([2, 2]);
  expect(dmText(slack, senderDm.channel, senderDm.ts)).toContain('Completed');
  const done = await read(id);
  expectShownMatches(done.slack!);
  expectShownMatches(done.slack_sender!);
});

test('an approval vote redraws each approver’s DM once; the decision once more; a later sync of the thread none', async () => {
  const { body } = await relay.rpc(keys.sender, 'message/send', {
    recipient: 'held@acme',
    intent: 'inform',
    message: text('Scale prod to 12 nodes'),
  });
  expect(body.result).toMatchObject({ status: { state: 'awaiting_approval' } });
  const id: string = body.result.task_id;
  const approvalId: string = body.result.approval.approval_id;
  const dms = await waitUntil(async () => {
    const doc = await read(id);
    const both = [U.sre1, U.sre2].map((u) => doc.slack_approvals?.[`approval:${approvalId}:${u}`]);
    return both.every(Boolean) ? both.map((d) => d!) : undefined;
  }, 'both approvers’ DMs');
  await synced(id, 'thread.awaiting_approval');
  expect(dms.map(updatesOf)).toEqual([0, 0]);

  const first = clickOn(dms[0]!, 'approval_approve', U.sre1);
  expect((await press(relay, first)).status).toBe(200);
  await waitForExplanation(slack, first.responseUrl, /recorded/);
  await synced(id, 'approval.voted');
  expect(dms.map(updatesOf)).toEqual([1, 1]);
  for (const dm of dms) expect(dmText(slack, dm.channel, dm.ts)).toContain(`1 of 2 approved: <@${U.sre1}>`);

  const second = clickOn(dms[1]!, 'approval_approve', U.sre2);
  expect((await press(relay, second)).status).toBe(200);
  await waitForExplanation(slack, second.responseUrl, /^Approved/);
  // The quorum delivers the held create (one thread.created job, which redraws the approvers' DMs as decided).
  await synced(id, 'thread.created');
  expect(dms.map(updatesOf)).toEqual([2, 2]);
  const decided = await read(id);
  for (const u of [U.sre1, U.sre2]) expectShownMatches(decided.slack_approvals![`approval:${approvalId}:${u}`]!);

  // The delivered handoff moves on (accepted): its DMs change, the decided approval's DMs do not.
  expect((await read(id)).slack).toBeTruthy();
  const accepted = await relay.rpc(keys.held, 'tasks/update', { task_id: id, transition: 'accept' });
  expect(accepted.body.error).toBeUndefined();
  await synced(id, 'thread.accepted');
  expect(dms.map(updatesOf)).toEqual([2, 2]);
  expect(updatesOf((await read(id)).slack!)).toBe(1);
});

test('Slack Accept: "Verifying acceptance…" then accepted on the recipient’s DM, once on the sender’s; a refusal’s notice goes at the next sync', async () => {
  const id = await sendHandoff(relay, keys.sender, 'recipient@acme', 'Rotate the staging keys');
  const { slack: recipientDm, slack_sender: senderDm } = await waitUntil(async () => {
    const doc = await read(id);
    return doc.slack && doc.slack_sender ? doc : undefined;
  }, 'both DMs');
  await synced(id, 'thread.created');
  expect((await press(relay, clickOn(recipientDm!, 'handoff_accept', U.recipient))).status).toBe(200);
  await synced(id, 'thread.accepted');
  await waitUntil(async () => updatesOf(recipientDm!) >= 2 || undefined, 'the accepted DM');
  await probe.settled();
  expect([updatesOf(recipientDm!), updatesOf(senderDm!)]).toEqual([2, 1]);
  expect(dmText(slack, recipientDm!.channel, recipientDm!.ts)).not.toContain('Verifying');
  expectShownMatches((await read(id)).slack!);

  // Refused by the acceptance verdict: the notice is drawn (and recorded), the thread does not change.
  const refused = await sendHandoff(relay, keys.sender, 'recipient@acme', 'Apply the plan', {
    metadata: { required_tools: ['terraform'] },
  });
  const doc = await waitUntil(async () => {
    const d = await read(refused);
    return d.slack && d.slack_sender ? d : undefined;
  }, 'both DMs of the refused one');
  await synced(refused, 'thread.created');
  expect((await press(relay, clickOn(doc.slack!, 'handoff_accept', U.recipient))).status).toBe(200);
  await waitUntil(
    async () => dmText(slack, doc.slack!.channel, doc.slack!.ts).includes('CAPABILITY_UNAVAILABLE') || undefined,
    'the refusal on the DM',
  );
  // Recorded as shown: the record's digest is what Slack now holds. (Waiting only for the digest to change could
  // stop at the "Verifying acceptance…" draw's record, when it lands after the refusal was drawn.)
  await waitUntil(async () => shownMatches((await read(refused)).slack!) || undefined, 'the refusal recorded as shown');
  const drawn = updatesOf(doc.slack!);
  // A message then: the DMs show nothing of it, but the recipient's shows the notice, so it is drawn again without it.
  expect(
    (await relay.rpc(keys.sender, 'message/send', { task_id: refused, message: text('terraform is on the bastion') }))
      .body.error,
  ).toBeUndefined();
  await synced(refused, 'thread.message');
  expect([updatesOf(doc.slack!) - drawn, updatesOf(doc.slack_sender!)]).toEqual([1, 0]);
  expect(dmText(slack, doc.slack!.channel, doc.slack!.ts)).not.toContain('CAPABILITY_UNAVAILABLE');
});

test('"Verifying acceptance…" stays while the accept waits for a worker, through a sync that changes nothing on the DM', async () => {
  const connection = new Redis(relay.config.redisUrl, { maxRetriesPerRequest: null });
  const verify = new Queue('verify', { connection, prefix: relay.config.queuePrefix });
  try {
    const id = await sendHandoff(relay, keys.sender, 'recipient@acme', 'Bump the base image');
    const dm = await waitUntil(async () => {
      const doc = await read(id);
      return doc.slack && doc.slack_sender ? doc.slack : undefined;
    }, 'both DMs');
    await synced(id, 'thread.created');
    // The workers are busy: the accept job waits in the queue.
    await verify.pause();
    expect((await press(relay, clickOn(dm, 'handoff_accept', U.recipient))).status).toBe(200);
    await waitUntil(
      async () => dmText(slack, dm.channel, dm.ts).includes('Verifying acceptance') || undefined,
      'the verifying notice',
    );
    const drawn = updatesOf(dm);
    // A message meanwhile: its sync posts the reply under the DM and leaves the DM itself as it is.
    expect(
      (await relay.rpc(keys.sender, 'message/send', { task_id: id, message: text('the tag is 1.4.2') })).body.error,
    ).toBeUndefined();
    await synced(id, 'thread.message');
    expect(updatesOf(dm)).toBe(drawn);
    expect(dmText(slack, dm.channel, dm.ts)).toContain('Verifying acceptance');

    await verify.resume();
    await synced(id, 'thread.accepted');
    await waitUntil(async () => dmText(slack, dm.channel, dm.ts).includes('Accepted') || undefined, 'the accepted DM');
    await probe.settled();
    expect(dmText(slack, dm.channel, dm.ts)).not.toContain('Verifying');
    expect(updatesOf(dm)).toBe(drawn + 1);
    expectShownMatches((await read(id)).slack!);
  } finally {
    await verify.resume();
    await verify.close();
    connection.disconnect();
  }
});

test('Accept clicked while the sender’s DM is still being posted redraws the recipient’s DM at once; the sender’s follows', async () => {
  const senderIm = slack.imChannelId(U.sender);
  const recipientIm = slack.imChannelId(U.recipient);
  // Slack is slow to take the sender's DM: the thread.created job holds that post's claim the whole time.
  const slow = slack.holdNext('chat.postMessage', (args) => args.channel === senderIm && !args.thread_ts);
  const id = await sendHandoff(relay, keys.sender, 'recipient@acme', 'Renew the edge TLS certificates');
  await slow.arrived;
  const recipientDm = (await read(id)).slack!;
  expect((await press(relay, clickOn(recipientDm, 'handoff_accept', U.recipient))).status).toBe(200);

  // The accept job redraws the recipient's DM without waiting for the sender's to be posted (its lease is 60 s).
  await waitUntil(async () => {
    const shown = dmText(slack, recipientDm.channel, recipientDm.ts);
    return (shown.includes('Accepted') && !shown.includes('Verifying')) || undefined;
  }, 'the recipient’s DM redrawn as accepted while the sender’s DM is held');
  expect((await read(id)).slack_sender).toBeUndefined();

  slow.release();
  await synced(id, 'thread.accepted');
  await probe.settled();
  const doc = await read(id);
  expect(dmText(slack, doc.slack_sender!.channel, doc.slack_sender!.ts)).toContain('Accepted');
  expectShownMatches(doc.slack!);
  expectShownMatches(doc.slack_sender!);
  const dmsPosted = (channel: string) =>
    slack
      .callsTo('chat.postMessage')
      .filter((c) => c.args.channel === channel && !c.args.thread_ts && JSON.stringify(c.args.metadata).includes(id))
      .length;
  expect([dmsPosted(recipientIm), dmsPosted(senderIm)]).toEqual([1, 1]);
});

test('the DM channel with a person is opened once: a second handoff between the same two people calls conversations.open for neither', async () => {
  const people = { sender: 'U0DROPENS1', recipient: 'U0DROPENR1' };
  for (const user of Object.values(people)) slack.addUser(user);
  const sender = await relay.register({ handle: 'opens-sender@acme', slack_user_id: people.sender });
  await relay.register({ handle: 'opens-recipient@acme', slack_user_id: people.recipient });
  const opens = (user: string) => slack.callsTo('conversations.open').filter((c) => c.args.users === user).length;
  const delivered = async (id: string) => {
    const doc = await waitUntil(async () => {
      const d = await read(id);
      return d.slack && d.slack_sender ? d : undefined;
    }, `both DMs of ${id}`);
    await synced(id, 'thread.created');
    return doc;
  };

  const first = await delivered(
    await sendHandoff(relay, sender, 'opens-recipient@acme', 'Bump the Node version in CI'),
  );
  expect([opens(people.sender), opens(people.recipient)]).toEqual([1, 1]);
  const second = await delivered(await sendHandoff(relay, sender, 'opens-recipient@acme', 'And the Docker base image'));
  expect([opens(people.sender), opens(people.recipient)]).toEqual([1, 1]);
  // Both handoffs went to the same DM channels, the ones Slack opened.
  expect([second.slack!.channel, second.slack_sender!.channel]).toEqual([
    first.slack!.channel,
    first.slack_sender!.channel,
  ]);
  expect([first.slack!.channel, first.slack_sender!.channel]).toEqual([
    slack.imChannelId(people.recipient),
    slack.imChannelId(people.sender),
  ]);
});
