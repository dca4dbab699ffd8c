// Timers of unclaimed handoffs (a role with several candidates) with the relay's clock moved forward (TestClock):
// reminders under the Claim card (the bound channel's, or each candidate's DM copy), the escalation back to the
// sender with Reassign, expiry at expire_after; a claim ends that chain and starts the claimer's pending one.
import type { ThreadDoc } from '../../relay-core/domain/documents';
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { REASSIGN_VIEW, TIMER_ACTION_IDS } from '../../bot/blocks/timer-action-ids';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { dmText, press, waitForExplanation } from '../helpers/slack-dm';
import { sendSlashCommand, submitViewState, type ButtonClick } from '../../scripts/fake-slack/slack-requests';
import { sendHandoff } from '../helpers/handoffs';
import { TestClock } from '../helpers/test-clock';
import { timerSteps } from '../helpers/timer-steps';
import { waitUntil } from '../helpers/wait-until';
import { armedTimerOf } from '../helpers/thread-docs';

const SENDER = 'U0UTSENDER';
const ANA = 'U0UTANA';
const BEN = 'U0UTBEN';
const CY = 'U0UTCY';
const DEE = 'U0UTDEE';
const QUINN = 'U0UTQUINN';
const WEB_CHANNEL = 'C0UTWEB';
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

let slack: FakeSlack;
let relay: TestRelay;
const keys: Record<string, string> = {};
const clock = new TestClock();
let seq = 0;

beforeAll(async () => {
  slack = await startFakeSlack();
  for (const user of [SENDER, ANA, BEN, CY, DEE, QUINN]) slack.addUser(user);
  slack.addChannel(WEB_CHANNEL);
  relay = await startTestRelay({
    name: 'unclaimed_timers',
    slack,
    clock,
    env: { RELAY_TIMER_SWEEP_INTERVAL: '200ms', RELAY_WORKING_HOURS: 'off' },
  });
  keys.sender = await relay.register({ handle: 'sender@acme', name: 'Sam', role: 'backend', slack_user_id: SENDER });
  keys.ana = await relay.register({ handle: 'ana@acme', name: 'Ana', role: 'frontend', slack_user_id: ANA });
  keys.ben = await relay.register({ handle: 'ben@acme', name: 'Ben', role: 'frontend', slack_user_id: BEN });
  keys.cy = await relay.register({ handle: 'cy@acme', name: 'Cy', role: 'design', slack_user_id: CY });
  keys.dee = await relay.register({ handle: 'dee@acme', name: 'Dee', role: 'design', slack_user_id: DEE });
  await relay.register({ handle: 'quinn@acme', name: 'Quinn', role: 'qa', slack_user_id: QUINN });
  const name = `bind-${++seq}`;
  await sendSlashCommand(`${relay.url}/slack/events`, relay.signingSecret, {
    user: ANA,
    text: 'channel role:frontend',
    channel: WEB_CHANNEL,
    responseUrl: slack.responseUrl(name),
    triggerId: slack.triggerId(),
  });
  expect(String((await slack.waitFor('response_url', (c) => c.args.response_url === name)).args.text)).toMatch(
    /Bound `role:frontend`/,
  );
});

afterAll(async () => {
  await relay?.stop();
  await slack?.close();
});

const { read, at, posts, posted, fired, armed } = timerSteps(() => ({ relay, slack }), clock);

async function cards(id: string, copies: string[]): Promise<ThreadDoc> {
  return waitUntil(
    async () => {
      const doc = await read(id);
      return copies.every((c) => doc.slack_claims?.[c]) && doc.slack_sender ? doc : undefined;
    },
    `the claim cards ${copies.join(', ')} of ${id}`,
  );
}

function click(call: { channel: string; ts: string }, user: string, actionId: string, value: string): ButtonClick {
  return {
    user,
    channel: call.channel,
    messageTs: call.ts,
    actionId,
    value,
    responseUrl: slack.responseUrl(`click-${++seq}`),
    triggerId: slack.triggerId(),
  };
}

const question = { intent: 'ask_question', metadata: { question: 'Can someone take the login page?' } };

test('a role handoff in a bound channel is reminded under its Claim card, escalated to the sender, claimed, then accepted: the timeline', async () => {
  const id = await sendHandoff(relay, keys.sender!, 'role:frontend', 'The login page flickers on Safari', question);
  const sent = await cards(id, ['channel']);
  const card = sent.slack_claims!.channel!;
  expect(card.channel).toBe(WEB_CHANNEL);
  expect(sent.status).toBe('unclaimed');
  await armed(id, 'remind-1');

  await at(id, 4 * HOUR + MINUTE);
  await fired(id, 'remind-1');
  const reminder = await posted(id, 'unclaimed:t:remind-1:channel');
  expect(reminder.args.channel).toBe(WEB_CHANNEL);
  expect(reminder.args.thread_ts).toBe(card.ts);
  expect(String(reminder.args.text)).toContain('nobody has claimed this handoff for role:frontend');
  // No DM for the candidates when the channel has the card.
  expect(posts(id, `claim:${ANA}`)).toHaveLength(0);
  await armed(id, 'remind-2');

  await at(id, 28 * HOUR + 2 * MINUTE);
  await fired(id, 'remind-2');
  await posted(id, 'unclaimed:t:remind-2:channel');
  await armed(id, 'escalate');

  await at(id, 48 * HOUR + MINUTE);
  const escalated = await fired(id, 'escalate');
  expect(escalated.timers?.escalated_to).toEqual({ kind: 'sender', handle: 'sender@acme', slack: SENDER });
  const back = await posted(id, 'unclaimed:t:escalate:sender');
  expect(back.args.thread_ts).toBe(escalated.slack_sender!.ts);
  expect(JSON.stringify(back.args.blocks)).toContain(TIMER_ACTION_IDS.reassign);
  expect(String(back.args.text)).toContain('Nobody (role:frontend) has claimed your handoff yet');
  await waitUntil(
    async () =>
      dmText(slack, escalated.slack_sender!.channel, escalated.slack_sender!.ts).includes('escalated back to you') ||
      undefined,
    'the sender DM to say so',
  );
  expect(dmText(slack, escalated.slack_sender!.channel, escalated.slack_sender!.ts)).toContain(
    'reminded the candidates · reminded the candidates again · escalated back to you',
  );
  await armed(id, 'expire');

  // Ben claims from the channel card: the unclaimed chain ends, his pending chain starts from the claim.
  clock.advance(HOUR);
  const claim = click(card, BEN, 'handoff_claim', JSON.stringify({ t: id, s: 'unclaimed' }));
  await press(relay, claim);
  await waitForExplanation(slack, claim.responseUrl!, /You claimed this handoff/);
  const claimed = await waitUntil(async () => ((await read(id)).slack ? read(id) : undefined), 'the claimer DM');
  expect(claimed).toMatchObject({ status: 'pending', to: 'ben@acme', claimed_by: 'ben@acme' });
  expect(claimed.timers?.fired).toEqual({});
  expect(Object.keys(claimed.timers?.unclaimed_fired ?? {}).sort()).toEqual(['escalate', 'remind-1', 'remind-2']);
  await waitUntil(async () => {
    const row = await armedTimerOf(relay.store, id);
    return row?.step === 'remind-1' && row.due_at.getTime() === claimed.claimed_at!.getTime() + 4 * HOUR
      ? row
      : undefined;
  }, 'the claimer’s first reminder armed 4 h after the claim');
  await waitUntil(
    async () =>
      dmText(slack, claimed.slack_sender!.channel, claimed.slack_sender!.ts).includes(`claimed by <@${BEN}>`) ||
      undefined,
    'the sender DM to name the claimer',
  );
  expect(dmText(slack, claimed.slack_sender!.channel, claimed.slack_sender!.ts)).toContain(
    `escalated · claimed by <@${BEN}>`,
  );

  clock.advance(HOUR);
  const { body } = await relay.rpc(keys.ben!, 'tasks/update', { task_id: id, transition: 'accept' });
  expect(body.result?.status).toBe('accepted');
  await armed(id, 'stale');

  // Each step once; nothing of the unclaimed chain after the claim.
  const final = await read(id);
  expect(final.outbox.map((e) => e.type)).toEqual([
    'thread.created',
    'thread.reminded',
    'thread.reminded',
    'thread.escalated',
    'thread.claimed',
    'thread.accepted',
  ]);
  for (const kind of [
    'unclaimed:t:remind-1:channel',
    'unclaimed:t:remind-2:channel',
    'unclaimed:t:escalate:sender',
    'claim:channel',
    'recipient',
  ])
    expect(posts(id, kind)).toHaveLength(1);
  expect(posts(id, 'recipient:t:remind-1')).toHaveLength(0);
  const before = final.timers!.unclaimed_fired!;
  const rows: Array<[Date, string]> = [
    [
      final.created_at,
      'created: sender → role:frontend (ask_question), unclaimed: candidates ana, ben; Claim card in #web (bound channel), sender DM',
    ],
    [before['remind-1']!, 'remind-1: reminder reply under the Claim card in #web'],
    [before['remind-2']!, 'remind-2: second reminder under the Claim card in #web'],
    [
      before.escalate!,
      'escalate: back to the sender under their DM, with Reassign; sender DM "reminded the candidates · … · escalated back to you"',
    ],
    [
      final.claimed_at!,
      'claimed by ben (Claim button in #web): card redrawn "Claimed by @ben", ben gets the DM; unclaimed chain ends, ben’s remind-1 armed for +4 h',
    ],
    [final.accepted_at!, 'accepted by ben (tasks/update): pending timers gone, the 3-day nudge armed'],
  ];
  const line = ([when, what]: [Date, string]) =>
    `${new Date(when).toISOString()}  +${((new Date(when).getTime() - final.created_at.getTime()) / HOUR).toFixed(2).padStart(6)} h  ${what}`;
  console.info(`timeline of unclaimed handoff ${id} (the relay's injected clock):\n${rows.map(line).join('\n')}`);
});

test('with no channel bound: reminders under each candidate’s DM copy, and it expires at expire_after with Resend for the sender', async () => {
  const id = await sendHandoff(relay, keys.sender!, 'role:design', 'Pick the icon set', { intent: 'inform' });
  const sent = await cards(id, [CY, DEE]);
  await at(id, 4 * HOUR + MINUTE);
  await fired(id, 'remind-1');
  for (const user of [CY, DEE]) {
    const reminder = await posted(id, `unclaimed:t:remind-1:${user}`);
    expect(reminder.args.thread_ts).toBe(sent.slack_claims![user]!.ts);
    expect(reminder.args.channel).toBe(slack.imChannelId(user));
  }
  // An inform does not escalate: after the second reminder, expiry (14 days; an unclaimed handoff has no token yet).
  await at(id, 28 * HOUR + 2 * MINUTE);
  await fired(id, 'remind-2');
  await armed(id, 'expire');
  expect((await armedTimerOf(relay.store, id))!.due_at.getTime()).toBe(sent.created_at.getTime() + 14 * DAY);
  await at(id, 14 * DAY + MINUTE);
  const expired = await waitUntil(async () => ((await read(id)).status === 'expired' ? read(id) : undefined), 'expiry');
  expect(expired.timers?.expire_reason).toBe('expire_after');
  const notice = await posted(id, 'sender:t:expire');
  expect(JSON.stringify(notice.args.blocks)).toContain(TIMER_ACTION_IDS.resend);
  expect(JSON.stringify(notice.args.blocks)).toContain('without anyone claiming it');
  for (const user of [CY, DEE]) {
    const copy = sent.slack_claims![user]!;
    await waitUntil(
      async () => dmText(slack, copy.channel, copy.ts).includes('Expired') || undefined,
      `${user}'s card redrawn as expired`,
    );
    expect(dmText(slack, copy.channel, copy.ts)).not.toContain('"action_id":"handoff_claim"');
    expect(posts(id, `unclaimed:t:remind-1:${user}`)).toHaveLength(1);
    expect(posts(id, `unclaimed:t:remind-2:${user}`)).toHaveLength(1);
  }
  await armed(id, null);
  // A claim after expiry changes nothing.
  const late = click(sent.slack_claims![CY]!, CY, 'handoff_claim', JSON.stringify({ t: id, s: 'unclaimed' }));
  await press(relay, late);
  await waitForExplanation(slack, late.responseUrl!, /Nothing was changed/);
  expect((await read(id)).status).toBe('expired');
});

test('Reassign from the unclaimed escalation hands it to one teammate: pending with a token, the cards redrawn, the timers start over', async () => {
  const id = await sendHandoff(relay, keys.sender!, 'role:design', 'Review the colour tokens', question);
  const sent = await cards(id, [CY, DEE]);
  await at(id, 48 * HOUR + MINUTE);
  await fired(id, 'escalate');
  const back = await posted(id, 'unclaimed:t:escalate:sender');
  const reassign = click(
    { channel: String(back.response.channel), ts: String(back.response.ts) },
    SENDER,
    TIMER_ACTION_IDS.reassign,
    JSON.stringify({ t: id, s: 'unclaimed' }),
  );
  await press(relay, reassign);
  const opened = await slack.waitFor('views.open', (c) => c.args.trigger_id === reassign.triggerId);
  const view = opened.args.view as any;
  expect(JSON.stringify(view.blocks)).toContain('Nobody (role:design) has claimed');
  // Reassign passes the policy as a create to the new recipient would: a rule denying handoffs to QA refuses it.
  const policy =
    'rules:\n  - id: no-handoffs-to-qa\n    match: { action: handoff.create, recipient: { role: qa } }\n    effect: deny\n    reason: QA takes work from the board\n';
  expect((await relay.rest('PUT', '/admin/policy', relay.adminKey, { source: policy })).status).toBe(200);
  const denied = await submitViewState(`${relay.url}/slack/events`, relay.signingSecret, {
    user: SENDER,
    viewId: String((opened.response.view as any).id),
    callbackId: REASSIGN_VIEW.callbackId,
    privateMetadata: view.private_metadata,
    values: { [REASSIGN_VIEW.block]: { [REASSIGN_VIEW.action]: { type: 'users_select', selected_user: QUINN } } },
  });
  expect(denied.text).toMatch(
    /Policy rule no-handoffs-to-qa denies handoffs from sender@acme to quinn@acme.*Nothing was changed/,
  );
  expect(await read(id)).toMatchObject({ status: 'unclaimed', to: 'role:design' });
  const done = await submitViewState(`${relay.url}/slack/events`, relay.signingSecret, {
    user: SENDER,
    viewId: String((opened.response.view as any).id),
    callbackId: REASSIGN_VIEW.callbackId,
    privateMetadata: view.private_metadata,
    values: { [REASSIGN_VIEW.block]: { [REASSIGN_VIEW.action]: { type: 'users_select', selected_user: DEE } } },
  });
  expect(done.status).toBe(200);
  const moved = await waitUntil(async () => ((await read(id)).slack ? read(id) : undefined), 'Dee’s DM');
  expect(moved).toMatchObject({ status: 'pending', to: 'dee@acme', claimed_by: null });
  expect(moved.status_history.at(-1)?.policy).toMatchObject({ effect: 'allow' });
  expect(moved.handoff_token).toBeTruthy();
  expect(moved.timers).toMatchObject({ fired: {} });
  await armed(id, 'remind-1');
  for (const user of [CY, DEE]) {
    const copy = sent.slack_claims![user]!;
    await waitUntil(
      async () => dmText(slack, copy.channel, copy.ts).includes('Handed to') || undefined,
      `${user}'s card redrawn`,
    );
    expect(dmText(slack, copy.channel, copy.ts)).not.toContain('"action_id":"handoff_claim"');
  }
  // Cy can no longer claim it; Dee can accept it.
  const cyTries = await relay.rpc(keys.cy!, 'tasks/update', { task_id: id, transition: 'claim' });
  expect(cyTries.body.error).toBeDefined();
  expect((await relay.rpc(keys.dee!, 'tasks/update', { task_id: id, transition: 'accept' })).body.result?.status).toBe(
    'accepted',
  );
});
