// Claim cards are redrawn only when what they show changes (each copy's record keeps a digest of what it shows):
// a role handoff with three candidate DM copies, reminded with the relay's clock moved forward (TestClock), then
// claimed, on a real relay, real Redis/BullMQ and the fake Slack (counting its chat.update calls).
import type { ThreadDoc } from '../../relay-core/domain/documents';
import { messageDigest } from '../../bot/delivery/slack-posts';
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { sendHandoff } from '../helpers/handoffs';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { dmText, press, waitForExplanation } from '../helpers/slack-dm';
import { slackQueueProbe, type SlackQueueProbe } from '../helpers/slack-queue';
import { TestClock } from '../helpers/test-clock';
import { timerSteps } from '../helpers/timer-steps';
import { waitUntil } from '../helpers/wait-until';

const SENDER = 'U0CRSENDER';
const CANDIDATES = ['U0CRANA', 'U0CRBEN', 'U0CRCY'];
const HOUR = 3_600_000;

let slack: FakeSlack;
let relay: TestRelay;
let probe: SlackQueueProbe;
let senderKey: string;
const candidateKeys: string[] = [];
const clock = new TestClock();

beforeAll(async () => {
  slack = await startFakeSlack();
  for (const user of [SENDER, ...CANDIDATES]) slack.addUser(user);
  relay = await startTestRelay({
    name: 'claim_redraws',
    slack,
    clock,
    env: { RELAY_TIMER_SWEEP_INTERVAL: '200ms', RELAY_WORKING_HOURS: 'off' },
  });
  senderKey = await relay.register({ handle: 'sender@acme', name: 'Sam', role: 'backend', slack_user_id: SENDER });
  for (const [i, user] of CANDIDATES.entries())
    candidateKeys.push(
      await relay.register({ handle: `c${i}@acme`, name: `C${i}`, role: 'frontend', slack_user_id: user }),
    );
  probe = slackQueueProbe(relay);
});

afterAll(async () => {
  await probe?.close();
  await relay?.stop();
  await slack?.close();
});

const { read, at, posted, fired } = timerSteps(() => ({ relay, slack }), clock);

/** chat.update calls on these cards so far. */
function updatesOf(doc: ThreadDoc): number {
  const cards = new Set(Object.values(doc.slack_claims ?? {}).map((c) => c.ts));
  return slack.callsTo('chat.update').filter((c) => cards.has(String(c.args.ts))).length;
}

test('a reminder or an accept redraws none of a role handoff’s three unchanged Claim cards; the claim redraws each once', async () => {
  const id = await sendHandoff(relay, senderKey, 'role:frontend', 'The login page flickers on Safari');
  const sent = await waitUntil(async () => {
    const doc = await read(id);
    return CANDIDATES.every((u) => doc.slack_claims?.[u]) && doc.slack_sender ? doc : undefined;
  }, 'the three Claim cards');
  await probe.settled();
  // Each copy's record says what it shows: the card as posted.
  for (const user of CANDIDATES) {
    const card = sent.slack_claims![user]!;
    const message = slack.messages.get(card.channel)!.find((m) => m.ts === card.ts)!;
    expect(card.shown).toBe(messageDigest({ text: message.text as string, blocks: message.blocks as any }));
  }
  expect(updatesOf(sent)).toBe(0);

  // remind-1 (4 h): a reply under each card, and the cards themselves stay as they are.
  await at(id, 4 * HOUR + 60_000);
  await fired(id, 'remind-1');
  for (const user of CANDIDATES) await posted(id, `unclaimed:t:remind-1:${user}`);
  await probe.settled();
  const reminded = (await probe.finished()).filter((j) => j.type === 'thread.reminded');
  expect(reminded).toHaveLength(1);
  expect(updatesOf(sent)).toBe(0);

  // A claim changes every card: each copy is redrawn, once.
  const card = sent.slack_claims![CANDIDATES[1]!]!;
  const click = {
    user: CANDIDATES[1]!,
    channel: card.channel,
    messageTs: card.ts,
    actionId: 'handoff_claim',
    value: JSON.stringify({ t: id, s: 'unclaimed' }),
    responseUrl: slack.responseUrl('claim-1'),
  };
  expect((await press(relay, click)).status).toBe(200);
  await waitForExplanation(slack, click.responseUrl, /You claimed this handoff/);
  await waitUntil(async () => ((await read(id)).slack ? true : undefined), 'the claimer’s DM');
  await probe.settled();
  expect(updatesOf(sent)).toBe(3);
  const claimed = await read(id);
  for (const user of CANDIDATES) {
    const copy = claimed.slack_claims![user]!;
    expect(dmText(slack, copy.channel, copy.ts)).toContain('Claimed by');
    expect(copy.shown).not.toBe(sent.slack_claims![user]!.shown);
  }
  // A later sync that changes the DMs but not the cards (the claimer accepting) leaves the cards alone.
  const accepted = await relay.rpc(candidateKeys[1], 'tasks/update', { task_id: id, transition: 'accept' });
  expect(accepted.body.error).toBeUndefined();
  await waitUntil(
    async () => ((await probe.finished()).some((j) => j.type === 'thread.accepted') ? true : undefined),
    'the accept’s sync',
  );
  await probe.settled();
  expect(updatesOf(sent)).toBe(3);
});
