// Reminders, escalation and expiry with the relay's clock moved forward (TestClock): each step exactly once, in
// Slack as the README says, cancelled by any transition; Snooze, Reassign and Resend through signed clicks.
import { startFakeSlack, type FakeSlack, type FakeSlackCall } from '../../scripts/fake-slack/fake-slack-api';
import { TIMER_ACTION_IDS, REASSIGN_VIEW } from '../../bot/blocks/timer-action-ids';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { clickButton, submitViewState } from '../../scripts/fake-slack/slack-requests';
import { sendHandoff } from '../helpers/handoffs';
import { TestClock } from '../helpers/test-clock';
import { timerSteps } from '../helpers/timer-steps';
import { connectMcpHttp, toolOk } from '../helpers/mcp-http-client';
import { waitUntil } from '../helpers/wait-until';
import { armedTimerOf } from '../helpers/thread-docs';

const ALICE = 'U0TALICE';
const BOB = 'U0TBOB';
const CAROL = 'U0TCAROL';
const DAVE = 'U0TDAVE';
const ERIN = 'U0TERIN';
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

let slack: FakeSlack;
let relay: TestRelay;
let aliceKey: string;
let bobKey: string;
let erinKey: string;
let carolKey: string;
let daveKey: string;
const clock = new TestClock();

beforeAll(async () => {
  slack = await startFakeSlack();
  slack.addUser(ALICE, { real_name: 'Alice' });
  slack.addUser(BOB, { real_name: 'Bob', tz: 'America/New_York' });
  slack.addUser(CAROL, { real_name: 'Carol' });
  slack.addUser(DAVE, { real_name: 'Dave' });
  slack.addUser(ERIN, { real_name: 'Erin' });
  relay = await startTestRelay({
    name: 'handoff_timers',
    slack,
    clock,
    // Working hours are the unit tests' (test/unit/timer-schedule.test.ts); here every step is due on the dot.
    env: { RELAY_TIMER_SWEEP_INTERVAL: '200ms', RELAY_WORKING_HOURS: 'off' },
  });
  aliceKey = await relay.register({ handle: 'alice@acme', name: 'Alice', slack_user_id: ALICE });
  bobKey = await relay.register({ handle: 'bob@acme', name: 'Bob', slack_user_id: BOB });
  carolKey = await relay.register({ handle: 'carol@acme', name: 'Carol', slack_user_id: CAROL });
  daveKey = await relay.register({ handle: 'dave@acme', name: 'Dave', slack_user_id: DAVE });
  erinKey = await relay.register({
    handle: 'erin@acme',
    name: 'Erin',
    slack_user_id: ERIN,
    lead: 'dave@acme',
  } as Parameters<TestRelay['register']>[0]);
});

afterAll(async () => {
  await relay?.stop();
  await slack?.close();
});

const { read, at, posts, posted, fired, armed } = timerSteps(() => ({ relay, slack }), clock);

async function handoff(summary: string, intent = 'ask_question', to = 'bob@acme'): Promise<string> {
  const extra = intent === 'ask_question' ? { intent, metadata: { question: 'Can you look?' } } : { intent };
  const id = await sendHandoff(relay, aliceKey, to, summary, extra);
  await waitUntil(
    async () => ((await read(id)).slack_sender && (await read(id)).slack ? true : undefined),
    `both DMs of ${id}`,
  );
  await armed(id, 'remind-1');
  return id;
}

function lastText(channel: string, ts: string): string {
  return JSON.stringify(slack.messages.get(channel)?.find((m) => m.ts === ts)?.blocks ?? []);
}

let responses = 0;

/** A click on a notice's button (a reply under the DM), as Slack sends it; `responseName` finds the app's answer. */
function noticeClick(call: FakeSlackCall, user: string, actionId: string, value?: string) {
  const button = ((call.args.blocks as any[]) ?? [])
    .flatMap((b) => (b.type === 'actions' ? b.elements : []))
    .find((e: any) => e.action_id === actionId);
  if (!button && value === undefined)
    throw new Error(`no ${actionId} on the notice: ${JSON.stringify(call.args.blocks)}`);
  const ts = String(call.response.ts);
  const responseName = `answer-${(responses += 1)}`;
  return {
    responseName,
    user,
    channel: String(call.response.channel),
    messageTs: ts,
    actionId,
    value: value ?? button.value,
    responseUrl: slack.responseUrl(responseName),
    triggerId: slack.triggerId(),
  };
}

const eventsUrl = () => `${relay.url}/slack/events`;

test('a pending question is reminded, reminded again, escalated back to the sender and expires, each step exactly once', async () => {
  const id = await handoff('Does the web client page through users?');
  // What each step did, printed at the end against the times the relay recorded (its injected clock).
  const said: Record<string, string> = {};
  const note = async (step: string, what: string) => {
    said[step] = what;
  };
  await note('created', 'created (ask_question, pending); DMs posted to bob and alice');

  await at(id, 4 * HOUR + MINUTE);
  await fired(id, 'remind-1');
  const first = await posted(id, 'recipient:t:remind-1');
  expect(first.args.thread_ts).toBe((await read(id)).slack!.ts);
  expect(JSON.stringify(first.args.blocks)).toContain('Snooze 1 hour');
  await note('remind-1', 'remind-1: reminder reply under bob’s DM (with Snooze)');
  await armed(id, 'remind-2');

  await at(id, 28 * HOUR + 2 * MINUTE);
  await fired(id, 'remind-2');
  await posted(id, 'recipient:t:remind-2');
  await note('remind-2', 'remind-2: second reminder under bob’s DM');
  await armed(id, 'escalate');

  await at(id, 48 * HOUR + MINUTE);
  const escalated = await fired(id, 'escalate');
  expect(escalated.timers?.escalated_to).toEqual({ kind: 'sender', handle: 'alice@acme', slack: ALICE });
  const back = await posted(id, 'sender:t:escalate');
  expect(back.args.thread_ts).toBe(escalated.slack_sender!.ts);
  expect(JSON.stringify(back.args.blocks)).toContain(TIMER_ACTION_IDS.reassign);
  // The sender's DM says what happened, redrawn in place.
  await waitUntil(
    async () =>
      lastText(escalated.slack_sender!.channel, escalated.slack_sender!.ts).includes('escalated back to you') ||
      undefined,
    'the sender DM to show the escalation',
  );
  expect(lastText(escalated.slack_sender!.channel, escalated.slack_sender!.ts)).toContain(
    `reminded <@${BOB}> · reminded <@${BOB}> again · escalated back to you`,
  );
  await note(
    'escalate',
    'escalate: back to alice under her DM, with Reassign; alice’s DM reads "reminded @bob · reminded @bob again · escalated back to you"',
  );
  await armed(id, 'expire');

  // The handoff token (7 days) runs out before expire_after (14 days).
  await at(id, 7 * DAY + MINUTE);
  const expired = await waitUntil(
    async () => ((await read(id)).status === 'expired' ? read(id) : undefined),
    'the thread to expire',
  );
  expect(expired.timers?.expire_reason).toBe('token_expired');
  expect(expired.outbox.map((e) => e.type)).toEqual([
    'thread.created',
    'thread.reminded',
    'thread.reminded',
    'thread.escalated',
    'thread.expired',
  ]);
  await posted(id, 'recipient:t:expire');
  const resendNotice = await posted(id, 'sender:t:expire');
  expect(JSON.stringify(resendNotice.args.blocks)).toContain(TIMER_ACTION_IDS.resend);
  await waitUntil(
    async () => lastText(expired.slack!.channel, expired.slack!.ts).includes('Expired') || undefined,
    'the recipient DM redrawn as expired',
  );
  await waitUntil(
    async () =>
      lastText(expired.slack_sender!.channel, expired.slack_sender!.ts).includes(TIMER_ACTION_IDS.resend) || undefined,
    'the sender DM with Resend',
  );
  await note(
    'expire',
    'expire: the handoff token ran out; both DMs redrawn as expired, a notice under each, Resend for alice',
  );
  await armed(id, null);

  // Nothing is left to fire, and an old job run again changes nothing.
  for (const step of ['remind-1', 'remind-2', 'escalate', 'expire'] as const) {
    expect(await relay.timers.fire({ thread_id: id, step, attempt: 0 })).toBe('no_timer');
  }
  const settled = await read(id);
  expect(settled.outbox).toHaveLength(expired.outbox.length);
  expect(settled.timers?.fired).toEqual(expired.timers?.fired);
  for (const kind of [
    'recipient:t:remind-1',
    'recipient:t:remind-2',
    'sender:t:escalate',
    'recipient:t:expire',
    'sender:t:expire',
  ]) {
    expect(posts(id, kind)).toHaveLength(1);
  }
  // A2A and tasks/get read the new final state.
  const task = await relay.rpc(aliceKey, 'GetTask', { id });
  expect(task.body.result?.status?.state ?? task.body.result?.task?.status?.state).toBe('TASK_STATE_CANCELED');
  const wire = await relay.rpc(aliceKey, 'tasks/get', { task_id: id });
  expect(wire.body.result.status).toBe('expired');
  const final = await read(id);
  const stamps: Array<[string, Date]> = [
    ['created', final.created_at],
    ...Object.entries(final.timers!.fired).map(([step, when]) => [step, new Date(when as Date)] as [string, Date]),
  ];
  const line = ([step, when]: [string, Date]) =>
    `${when.toISOString()}  +${((when.getTime() - final.created_at.getTime()) / HOUR).toFixed(2).padStart(6)} h  ${said[step]}`;
  console.info(
    `timeline of handoff ${id} (the relay's injected clock):\n${stamps
      .sort((a, b) => a[1].getTime() - b[1].getTime())
      .map(line)
      .join('\n')}`,
  );
});

test('acceptance cancels the timers at any step: after it, only the accepted nudge is armed', async () => {
  const before = await handoff('accept before any reminder');
  const afterFirst = await handoff('accept after the first reminder');
  const afterEscalation = await handoff('accept after the escalation');
  const accept = async (id: string) => {
    const { body } = await relay.rpc(bobKey, 'tasks/update', { task_id: id, transition: 'accept' });
    expect(body.result?.status).toBe('accepted');
    await armed(id, 'stale');
  };
  await accept(before);
  await at(afterFirst, 4 * HOUR + MINUTE);
  await fired(afterFirst, 'remind-1');
  await accept(afterFirst);
  await at(afterEscalation, 48 * HOUR + MINUTE);
  await fired(afterEscalation, 'escalate');
  await accept(afterEscalation);

  // Well past every pending step, the gentler nudge (3 days after acceptance) fires once for each.
  clock.advance(3 * DAY + HOUR);
  for (const id of [before, afterFirst, afterEscalation]) {
    await fired(id, 'stale');
    const nudge = await posted(id, 'recipient:t:stale');
    expect(JSON.stringify(nudge.args.blocks)).toContain('gentle nudge');
    await armed(id, null);
  }
  expect(Object.keys((await read(before)).timers!.fired).sort()).toEqual(['stale']);
  expect(Object.keys((await read(afterFirst)).timers!.fired).sort()).toEqual(['remind-1', 'stale']);
  expect(Object.keys((await read(afterEscalation)).timers!.fired).sort()).toEqual([
    'escalate',
    'remind-1',
    'remind-2',
    'stale',
  ]);
  for (const id of [before, afterFirst, afterEscalation]) expect((await read(id)).status).toBe('accepted');
  expect(posts(afterFirst, 'recipient:t:remind-2')).toHaveLength(0);
});

test('five runs of the same due step at once record it once', async () => {
  const id = await handoff('a step raced by five jobs', 'inform');
  await at(id, 4 * HOUR + MINUTE);
  const row = (await armedTimerOf(relay.store, id))!;
  const outcomes = await Promise.all(
    Array.from({ length: 5 }, () => relay.timers.fire({ thread_id: id, step: row.step, attempt: row.attempt })),
  );
  expect(outcomes.filter((o) => o === 'fired').length).toBeLessThanOrEqual(1);
  const doc = await fired(id, 'remind-1');
  expect(doc.outbox.filter((e) => e.type === 'thread.reminded')).toHaveLength(1);
  // An inform has no escalation: after its reminders, expiry is next.
  await at(id, 28 * HOUR + 2 * MINUTE);
  await fired(id, 'remind-2');
  await armed(id, 'expire');
});

test('Snooze moves the next reminder; bad Snooze, Reassign and Resend clicks are refused and change nothing', async () => {
  const id = await handoff('snooze me');
  await at(id, 4 * HOUR + MINUTE);
  await fired(id, 'remind-1');
  const reminder = await posted(id, 'recipient:t:remind-1');
  const outboxLength = (await read(id)).outbox.length;

  // Refused: a value that is not a handoff's, the sender pressing the recipient's Snooze, a Reassign by the recipient.
  for (const [user, actionId, value] of [
    [BOB, TIMER_ACTION_IDS.snooze1h, '{"t":"not-a-thread","s":"pending"}'],
    [BOB, TIMER_ACTION_IDS.snoozeWeek, 'garbage'],
    [ALICE, TIMER_ACTION_IDS.snooze1h, undefined],
    [BOB, TIMER_ACTION_IDS.reassign, JSON.stringify({ t: id, s: 'pending' })],
    [BOB, TIMER_ACTION_IDS.resend, JSON.stringify({ t: id, s: 'expired' })],
  ] as const) {
    const click = noticeClick(reminder, user, actionId, value);
    expect((await clickButton(eventsUrl(), relay.signingSecret, click)).status).toBe(200);
    const answer = await slack.waitFor('response_url', (c) => c.args.response_url === click.responseName);
    expect(String(answer.args.text)).toMatch(/nothing was changed/i);
  }
  const unchanged = await read(id);
  expect(unchanged.timers?.snoozed_until ?? null).toBeNull();
  expect(unchanged.outbox).toHaveLength(outboxLength);

  // Snooze 1 hour: the next reminder comes an hour from now instead of 24 hours after the first.
  const click = noticeClick(reminder, BOB, TIMER_ACTION_IDS.snooze1h);
  const snoozedAt = clock.now().getTime();
  await clickButton(eventsUrl(), relay.signingSecret, click);
  const answer = await slack.waitFor('response_url', (c) => String(c.args.text).startsWith('Snoozed'));
  expect(String(answer.args.text)).toContain('the next reminder comes');
  const snoozed = await waitUntil(
    async () => (await read(id)).timers?.snoozed_until ?? undefined,
    'the snooze recorded',
  );
  expect(Math.abs(new Date(snoozed).getTime() - (snoozedAt + HOUR))).toBeLessThan(5_000);
  await waitUntil(async () => {
    const row = await armedTimerOf(relay.store, id);
    return row?.step === 'remind-2' && row.due_at.getTime() === new Date(snoozed).getTime() ? row : undefined;
  }, 'remind-2 armed for the snooze');
  clock.advance(HOUR + MINUTE);
  const again = await fired(id, 'remind-2');
  expect(again.timers?.fired['remind-2']!.getTime()).toBeLessThan(again.created_at.getTime() + 6 * HOUR);
  expect(again.timers?.snoozed_until).toBeNull();

  // "Tomorrow morning" is 09:00 in Bob's Slack time zone (America/New_York).
  const second = await posted(id, 'recipient:t:remind-2');
  await clickButton(eventsUrl(), relay.signingSecret, noticeClick(second, BOB, TIMER_ACTION_IDS.snoozeTomorrow));
  const tomorrow = await waitUntil(
    async () => (await read(id)).timers?.snoozed_until ?? undefined,
    'the second snooze recorded',
  );
  const local = new Intl.DateTimeFormat('en-US', {
    timeZone: 'America/New_York',
    hourCycle: 'h23',
    hour: '2-digit',
    minute: '2-digit',
  }).format(tomorrow);
  expect(local).toBe('09:00');
  expect(new Date(tomorrow).getTime()).toBeGreaterThan(clock.now().getTime());
  expect(new Date(tomorrow).getTime()).toBeLessThan(clock.now().getTime() + 2 * DAY);
});

test('Reassign hands an escalated handoff to another teammate: a new DM for them, the old one redrawn, the timers start over', async () => {
  const id = await handoff('nobody picks this up');
  await at(id, 48 * HOUR + MINUTE);
  await fired(id, 'escalate');
  const back = await posted(id, 'sender:t:escalate');
  const oldDm = (await read(id)).slack!;

  await clickButton(eventsUrl(), relay.signingSecret, noticeClick(back, ALICE, TIMER_ACTION_IDS.reassign));
  const opened = await slack.waitFor(
    'views.open',
    (c) => (c.args.view as any)?.callback_id === REASSIGN_VIEW.callbackId,
  );
  const view = opened.args.view as any;

  // A person not linked to any teammate is refused on the field.
  slack.addUser('U0TNOBODY');
  const refused = await submitViewState(eventsUrl(), relay.signingSecret, {
    user: ALICE,
    viewId: String(opened.response.view && (opened.response.view as any).id),
    callbackId: REASSIGN_VIEW.callbackId,
    privateMetadata: view.private_metadata,
    values: { [REASSIGN_VIEW.block]: { [REASSIGN_VIEW.action]: { type: 'users_select', selected_user: 'U0TNOBODY' } } },
  });
  expect(refused.text).toContain('not linked');
  expect((await read(id)).to).toBe('bob@acme');

  const done = await submitViewState(eventsUrl(), relay.signingSecret, {
    user: ALICE,
    viewId: String((opened.response.view as any).id),
    callbackId: REASSIGN_VIEW.callbackId,
    privateMetadata: view.private_metadata,
    values: { [REASSIGN_VIEW.block]: { [REASSIGN_VIEW.action]: { type: 'users_select', selected_user: CAROL } } },
  });
  expect(done.status).toBe(200);
  const moved = await waitUntil(async () => ((await read(id)).slack ? read(id) : undefined), 'the new recipient’s DM');
  expect(moved.to).toBe('carol@acme');
  expect(moved.slack!.channel).toBe(slack.imChannelId(CAROL));
  expect(moved.timers).toMatchObject({ fired: {} });
  await armed(id, 'remind-1');
  await waitUntil(
    async () => lastText(oldDm.channel, oldDm.ts).includes('Reassigned') || undefined,
    'bob’s old DM redrawn',
  );
  // Bob is not part of it any more.
  const bobTries = await relay.rpc(bobKey, 'tasks/update', { task_id: id, transition: 'accept' });
  expect(bobTries.body.error?.data?.code).toBe('not_a_participant');
});

test('the lead’s escalation DM: Nudge reaches the recipient, only the lead may use it, Reassign hands it on', async () => {
  const id = await handoff('Rotate the deploy keys', 'ask_question', 'erin@acme');
  await at(id, 48 * HOUR + MINUTE);
  await fired(id, 'escalate');
  const toLead = await posted(id, 'escalation');

  // Bob is not the lead: refused, nothing sent.
  const stranger = noticeClick(toLead, BOB, TIMER_ACTION_IDS.escalationNudge);
  await clickButton(eventsUrl(), relay.signingSecret, stranger);
  const refusal = await slack.waitFor('response_url', (c) => c.args.response_url === stranger.responseName);
  expect(refusal.args.text).toBe(
    'Only the lead this handoff was escalated to (dave@acme) can nudge the recipient of it from here. Nothing was changed.',
  );

  const erinDm = (await read(id)).slack!;
  const under = () =>
    slack
      .callsTo('chat.postMessage')
      .filter((c) => c.args.thread_ts === erinDm.ts && c.args.channel === erinDm.channel);
  const before = under().length;
  const nudge = noticeClick(toLead, DAVE, TIMER_ACTION_IDS.escalationNudge);
  await clickButton(eventsUrl(), relay.signingSecret, nudge);
  const told = await slack.waitFor('response_url', (c) => c.args.response_url === nudge.responseName);
  expect(told.args.text).toBe(`Nudged <@${ERIN}>: a reminder from you is under their DM of this handoff.`);
  expect(under()).toHaveLength(before + 1);
  expect((under().at(-1)!.args.blocks as any[])[0].text.text).toMatch(
    new RegExp(
      `^:wave: <@${DAVE}> nudges you: <@${ALICE}> is still waiting for you to accept or decline “Rotate the deploy keys” \\(sent <!date\\^`,
    ),
  );

  // Reassign: the same modal as the sender's, and the same use case; Dave hands it to Carol.
  await clickButton(eventsUrl(), relay.signingSecret, noticeClick(toLead, DAVE, TIMER_ACTION_IDS.escalationReassign));
  const opened = await slack.waitFor(
    'views.open',
    (c) =>
      (c.args.view as any)?.callback_id === REASSIGN_VIEW.callbackId &&
      String((c.args.view as any).private_metadata).includes(id),
  );
  const view = opened.args.view as any;
  const done = await submitViewState(eventsUrl(), relay.signingSecret, {
    user: DAVE,
    viewId: String((opened.response.view as any).id),
    callbackId: REASSIGN_VIEW.callbackId,
    privateMetadata: view.private_metadata,
    values: { [REASSIGN_VIEW.block]: { [REASSIGN_VIEW.action]: { type: 'users_select', selected_user: CAROL } } },
  });
  expect(done.status).toBe(200);
  const moved = await waitUntil(async () => ((await read(id)).slack ? read(id) : undefined), 'Carol’s DM');
  expect(moved).toMatchObject({ to: 'carol@acme', from: 'alice@acme' });
  expect(moved.reassigned_from?.at(-1)).toMatchObject({ handle: 'erin@acme', by: 'dave@acme' });
  // Alice and Erin each hear of it under their DMs, once.
  const event = moved.outbox.find((e) => e.type === 'thread.reassigned')!;
  const notices = await waitUntil(async () => {
    const doc = await read(id);
    return doc.slack_replies?.[`sender:e:${event.id}`] && doc.slack_replies?.[`recipient:e:${event.id}`]
      ? doc
      : undefined;
  }, 'both reassignment notices');
  const textOf = (channel: string, ts: string) =>
    (slack.messages.get(channel)!.find((m) => m.ts === ts)!.blocks as any[])[0].text.text;
  expect(textOf(notices.slack_sender!.channel, notices.slack_replies![`sender:e:${event.id}`]!)).toBe(
    `:arrows_counterclockwise: <@${DAVE}> reassigned your handoff “Rotate the deploy keys” to <@${CAROL}>.`,
  );
  expect(textOf(erinDm.channel, notices.slack_replies![`recipient:e:${event.id}`]!)).toBe(
    `:arrows_counterclockwise: <@${DAVE}> handed “Rotate the deploy keys” to <@${CAROL}>; nothing more to do here.`,
  );
});

test('Nudge posts once per press: a click Slack sends twice and a double click nudge once, a press 10 minutes on again', async () => {
  const id = await handoff('Renew the TLS certificate', 'ask_question', 'erin@acme');
  await at(id, 48 * HOUR + MINUTE);
  await fired(id, 'escalate');
  const toLead = await posted(id, 'escalation');
  const erinDm = (await read(id)).slack!;
  const nudges = () =>
    slack
      .callsTo('chat.postMessage')
      .filter(
        (c) =>
          c.args.thread_ts === erinDm.ts &&
          c.args.channel === erinDm.channel &&
          JSON.stringify(c.args.blocks).includes(`<@${DAVE}> nudges you`),
      );
  const press = (actionTs: string) => ({
    ...noticeClick(toLead, DAVE, TIMER_ACTION_IDS.escalationNudge),
    actionTs,
  });
  const answer = (click: { responseName: string }) =>
    slack.waitFor('response_url', (c) => c.args.response_url === click.responseName);
  const now = Date.now() / 1000;

  // The same click twice (Slack sending it again), and a double click: two payloads a fraction of a second apart.
  const first = press(now.toFixed(6));
  const again = { ...first, responseName: 'answer-again', responseUrl: slack.responseUrl('answer-again') };
  const second = press((now + 0.3).toFixed(6));
  await Promise.all([first, again, second].map((click) => clickButton(eventsUrl(), relay.signingSecret, click)));
  const answers = (await Promise.all([first, again, second].map(answer))).map((c) => String(c.args.text));
  expect(nudges()).toHaveLength(1);
  expect(answers.filter((t) => t.startsWith(`Nudged <@${ERIN}>`))).toHaveLength(1);
  for (const text of answers.filter((t) => !t.startsWith('Nudged')))
    expect(text).toMatch(
      new RegExp(
        `^(You nudged <@${ERIN}> <!date\\^.*; nothing more was sent\\.|Your nudge to <@${ERIN}> is being sent already)`,
      ),
    );
  expect((await read(id)).slack_replies?.['recipient:t:nudge-1']).toBe(String(nudges()[0]!.response.ts));

  // A deliberate press once the window has passed (Slack's clock: its action_ts) nudges again, once.
  const later = press((now + 10 * 60 + 1).toFixed(6));
  await clickButton(eventsUrl(), relay.signingSecret, later);
  expect((await answer(later)).args.text).toBe(
    `Nudged <@${ERIN}>: a reminder from you is under their DM of this handoff.`,
  );
  expect(nudges()).toHaveLength(2);
  expect((await read(id)).slack_replies?.['recipient:t:nudge-2']).toBe(String(nudges()[1]!.response.ts));
});

test('a question answered by a reply is marked answered everywhere, and its reminders and escalation stop', async () => {
  const answered = await handoff('Which Postgres version does staging run?');
  const control = await handoff('Which Redis version does staging run?');
  const reply = await relay.rpc(bobKey, 'message/send', {
    task_id: answered,
    message: { role: 'user', parts: [{ type: 'text', text: 'Postgres 16.4' }] },
  });
  expect(reply.body.error).toBeUndefined();
  // Nothing left to remind of: the next step is the expiry.
  await armed(answered, 'expire');
  const doc = await read(answered);
  expect(doc).toMatchObject({ status: 'pending', answer_seq: 1 });
  expect(doc.answered_at).toBeInstanceOf(Date);

  // Every surface says so the same way: tasks/get, tasks/list, MCP view_thread and check_inbox, the DMs.
  const wire = (await relay.rpc(aliceKey, 'tasks/get', { task_id: answered })).body.result;
  expect(wire).toMatchObject({ status: 'pending', answered_at: doc.answered_at!.toISOString(), answer_sequence_no: 1 });
  const listed = (await relay.rpc(aliceKey, 'tasks/list', { filter: { role: 'sender' } })).body.result.items;
  expect(listed.find((i: any) => i.thread_id === answered).answered_at).toBe(wire.answered_at);
  expect(listed.find((i: any) => i.thread_id === control).answered_at).toBeUndefined();
  const mcp = await connectMcpHttp(relay.url, aliceKey, 'timers-answered');
  try {
    const view = toolOk(await mcp.callTool({ name: 'view_thread', arguments: { thread_id: answered } }));
    expect(view).toMatchObject({ answered_at: wire.answered_at, answer_sequence_no: 1 });
    expect(JSON.stringify(view.messages)).toContain('Postgres 16.4');
    const inbox = toolOk(await mcp.callTool({ name: 'check_inbox', arguments: { box: 'sent' } }));
    expect(inbox.items.find((i: any) => i.thread_id === answered).answered_at).toBe(wire.answered_at);
  } finally {
    await mcp.close();
  }
  const senderDm = doc.slack_sender!;
  await waitUntil(
    async () => lastText(senderDm.channel, senderDm.ts).includes('Answered — Bob replied (below)') || undefined,
    'the sender DM to say it was answered',
  );
  expect(lastText(senderDm.channel, senderDm.ts)).toContain(`:speech_balloon: Answered by <@${BOB}> · <!date^`);
  expect(lastText(doc.slack!.channel, doc.slack!.ts)).toContain('Answered — you replied');

  // Past the first reminder: the unanswered one is reminded, the answered one is not.
  await at(control, 4 * HOUR + MINUTE);
  await fired(control, 'remind-1');
  await posted(control, 'recipient:t:remind-1');
  expect(posts(answered, 'recipient:t:remind-1')).toEqual([]);
  expect((await read(answered)).timers?.fired ?? {}).toEqual({});
  await armed(answered, 'expire');
});

test('Resend after expiry creates one new handoff with the same body, linked to the old one', async () => {
  const id = await handoff('this one expires');
  await at(id, 7 * DAY + MINUTE);
  await waitUntil(async () => ((await read(id)).status === 'expired' ? true : undefined), 'expiry');
  const notice = await posted(id, 'sender:t:expire');
  const click = noticeClick(notice, ALICE, TIMER_ACTION_IDS.resend);
  await clickButton(eventsUrl(), relay.signingSecret, click);
  await slack.waitFor('response_url', (c) => c.args.response_url === click.responseName);
  await clickButton(eventsUrl(), relay.signingSecret, { ...click, responseUrl: slack.responseUrl('resend-again') });
  const old = await waitUntil(async () => (await read(id)).resent_as ?? undefined, 'the old thread linked');
  const fresh = await read(old);
  expect(fresh).toMatchObject({
    status: 'pending',
    from: 'alice@acme',
    to: 'bob@acme',
    summary: 'this one expires',
    intent: 'ask_question',
  });
  expect(fresh.metadata.resent_from).toBe(id);
  await waitUntil(
    async () =>
      slack.callsTo('response_url').filter((c) => String(c.args.text).includes(old)).length === 2 || undefined,
    'both clicks answered with the same new thread',
  );
  const { body } = await relay.rpc(aliceKey, 'tasks/list', { filter: { role: 'sender' } });
  expect(body.result.items.filter((i: any) => i.summary_preview === 'this one expires')).toHaveLength(2);

  // view_thread over MCP says the same as tasks/get: when it expired, what it was resent as, and where a resend came from.
  const mcp = await connectMcpHttp(relay.url, aliceKey, 'timers-view-thread');
  try {
    const expiredView = toolOk(await mcp.callTool({ name: 'view_thread', arguments: { thread_id: id } }));
    const wire = (await relay.rpc(aliceKey, 'tasks/get', { task_id: id })).body.result;
    expect(expiredView).toMatchObject({ status: 'expired', expired_at: wire.expired_at, resent_as: old });
    expect(expiredView.resent_from).toBeUndefined();
    const resentView = toolOk(await mcp.callTool({ name: 'view_thread', arguments: { thread_id: old } }));
    expect(resentView).toMatchObject({ status: 'pending', resent_from: id });
    expect(resentView.expired_at).toBeUndefined();
  } finally {
    await mcp.close();
  }
});

test('a handoff to someone with a lead is escalated to the lead by DM, then accepted: the timeline', async () => {
  const id = await handoff('Review the migration before Friday', 'ask_question', 'erin@acme');
  await at(id, 4 * HOUR + MINUTE);
  await fired(id, 'remind-1');
  await armed(id, 'remind-2');
  await at(id, 28 * HOUR + 2 * MINUTE);
  await fired(id, 'remind-2');
  await armed(id, 'escalate');
  await at(id, 48 * HOUR + MINUTE);
  const escalated = await fired(id, 'escalate');
  expect(escalated.timers?.escalated_to).toEqual({ kind: 'lead', handle: 'dave@acme', slack: DAVE });
  const toLead = await posted(id, 'escalation');
  expect(toLead.args.channel).toBe(slack.imChannelId(DAVE));
  expect(toLead.args.thread_ts).toBeUndefined();
  // The lead reads who waits on whom since when and the handoff's title (not its content), with what they can do.
  const leadBlocks = toLead.args.blocks as any[];
  expect(leadBlocks[0].text.text).toBe(
    `:rotating_light: *Escalated:* <@${ALICE}> asked a question of <@${ERIN}> on <!date^${Math.floor(escalated.created_at.getTime() / 1000)}^{date_short_pretty} at {time}|${escalated.created_at.toISOString().slice(0, 16).replace('T', ' ')} UTC> — “Review the migration before Friday” — and it has not been accepted yet.`,
  );
  const open = leadBlocks[1].elements.at(-1).url as string;
  expect(leadBlocks[1].elements.map((e: any) => [e.text.text, e.url ?? null])).toEqual([
    ['Nudge Erin', null],
    ['Reassign', null],
    ['Open', expect.stringMatching(new RegExp(`^${relay.url}/inbox/${id}\\?as=dave%40acme&sig=`))],
  ]);
  expect(JSON.stringify(leadBlocks)).not.toContain('Can you look?');
  // Open lets the lead read the whole thread, though not a participant: its signed link, and the web inbox signed in.
  const page = async (url: string, cookie?: string) => {
    const answer = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
    return { status: answer.status, html: await answer.text() };
  };
  const byLink = await page(open);
  expect(byLink.status).toBe(200);
  expect(byLink.html).toContain('Can you look?');
  expect(byLink.html).toContain('you are dave@acme');
  // The lead's signature names the lead: it does not open the thread for anyone else.
  expect((await page(open.replace('as=dave%40acme', 'as=carol%40acme'))).status).toBe(403);
  const signedIn = async (key: string) => {
    const link = new URL((await relay.rest('POST', '/agents/me/web-link', key)).body.url as string);
    const answer = await fetch(`${relay.url}/inbox/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: relay.url },
      body: new URLSearchParams({ token: link.searchParams.get('token')! }).toString(),
    });
    expect(answer.status).toBe(303);
    return answer.headers.get('set-cookie')!.split(';')[0]!;
  };
  const asLead = await page(`${relay.url}/inbox/${id}`, await signedIn(daveKey));
  expect(asLead.status).toBe(200);
  expect(asLead.html).toContain('Can you look?');
  expect(asLead.html).not.toContain(`/inbox/${id}/accept`);
  // Carol is neither a participant nor its lead: the same 404 as a thread that does not exist.
  const asStranger = await page(`${relay.url}/inbox/${id}`, await signedIn(carolKey));
  expect(asStranger.status).toBe(404);
  expect(asStranger.html).not.toContain('Can you look?');
  const senderDm = escalated.slack_sender!;
  await waitUntil(
    async () => lastText(senderDm.channel, senderDm.ts).includes(`escalated to <@${DAVE}>`) || undefined,
    'the sender DM to name the lead',
  );
  expect(lastText(senderDm.channel, senderDm.ts)).toContain(
    `reminded <@${ERIN}> · reminded <@${ERIN}> again · escalated to <@${DAVE}>`,
  );

  clock.advance(2 * HOUR);
  const { body } = await relay.rpc(erinKey, 'tasks/update', { task_id: id, transition: 'accept' });
  expect(body.result?.status).toBe('accepted');
  await armed(id, 'stale');
  const final = await read(id);
  expect(posts(id, 'escalation')).toHaveLength(1);
  const rows: Array<[Date, string]> = [
    [final.created_at, 'created: alice → erin (ask_question, pending); DMs to erin and alice'],
    [final.timers!.fired['remind-1']!, 'remind-1: reminder under erin’s DM, with Snooze'],
    [final.timers!.fired['remind-2']!, 'remind-2: second reminder under erin’s DM'],
    [
      final.timers!.fired.escalate!,
      'escalate: DM to erin’s lead dave; alice’s DM: "reminded @erin · reminded @erin again · escalated to @dave"',
    ],
    [final.accepted_at!, 'accepted by erin (tasks/update); the pending timers are gone, the 3-day nudge is armed'],
  ];
  const line = ([when, what]: [Date, string]) =>
    `${new Date(when).toISOString()}  +${((new Date(when).getTime() - final.created_at.getTime()) / HOUR).toFixed(2).padStart(6)} h  ${what}`;
  console.info(`timeline of handoff ${id} (the relay's injected clock):\n${rows.map(line).join('\n')}`);
});
