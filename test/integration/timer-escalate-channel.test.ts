// Working hours on (the default 09:00-18:00 on weekdays) and RELAY_ESCALATE_CHANNEL set: a handoff sent late on a
// Friday afternoon in the recipient's Slack time zone is first reminded on Monday at 09:00 there, and its
// escalation (the recipient has no lead) is one message in the escalation channel.
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { sendHandoff } from '../helpers/handoffs';
import { dmText } from '../helpers/slack-dm';
import { TestClock } from '../helpers/test-clock';
import { timerSteps } from '../helpers/timer-steps';
import { waitUntil } from '../helpers/wait-until';
import { armedTimerOf } from '../helpers/thread-docs';

const ALICE = 'U0ECALICE';
const BOB = 'U0ECBOB';
const ESCALATIONS = 'C0ESCALATE';
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const clock = new TestClock();
let slack: FakeSlack;
let relay: TestRelay;
let aliceKey: string;
const { read, posts, posted, fired, armed } = timerSteps(() => ({ relay, slack }), clock);

/** The next Friday at least a week ahead, 15:00 in Tokyo (06:00 UTC; Tokyo has no daylight saving time). */
function fridayAfternoonInTokyo(): Date {
  const day = new Date(Date.now() + 7 * DAY);
  day.setUTCHours(6, 0, 0, 0);
  while (day.getUTCDay() !== 5) day.setTime(day.getTime() + DAY);
  return day;
}

beforeAll(async () => {
  slack = await startFakeSlack();
  slack.addUser(ALICE, { real_name: 'Alice', tz: 'Europe/Berlin' });
  slack.addUser(BOB, { real_name: 'Bob', tz: 'Asia/Tokyo' });
  slack.addChannel(ESCALATIONS);
  relay = await startTestRelay({
    name: 'timer_escalate_channel',
    slack,
    clock,
    env: { RELAY_TIMER_SWEEP_INTERVAL: '200ms', RELAY_ESCALATE_CHANNEL: ESCALATIONS },
  });
  expect(relay.config.timers.workingHours).not.toBeNull();
  aliceKey = await relay.register({ handle: 'alice@acme', name: 'Alice', slack_user_id: ALICE });
  await relay.register({ handle: 'bob@acme', name: 'Bob', slack_user_id: BOB });
});

afterAll(async () => {
  await relay?.stop();
  await slack?.close();
});

test('sent Friday 15:00 in Tokyo: reminded Monday 09:00 Tokyo, then escalated once to RELAY_ESCALATE_CHANNEL', async () => {
  const friday = fridayAfternoonInTokyo();
  clock.advance(friday.getTime() - clock.now().getTime());
  const id = await sendHandoff(relay, aliceKey, 'bob@acme', 'Rotate the staging keys', {
    intent: 'ask_question',
    metadata: { question: 'Can you do it before the release?' },
  });
  await waitUntil(async () => ((await read(id)).slack_sender && (await read(id)).slack ? true : undefined), 'both DMs');
  await armed(id, 'remind-1');

  // Four hours after sending is 19:00 in Tokyo, after working hours: the reminder moves to Monday 09:00 Tokyo (00:00 UTC).
  const monday = new Date(friday.getTime() + 2 * DAY + 18 * HOUR);
  expect(monday.toISOString().slice(11, 16)).toBe('00:00');
  expect(monday.getUTCDay()).toBe(1);
  const row = (await armedTimerOf(relay.store, id))!;
  expect(row.due_at.toISOString()).toBe(monday.toISOString());

  // Monday 09:01 Tokyo: the reminder, then the escalation (48 h after sending was Sunday, also moved to Monday 09:00).
  clock.advance(monday.getTime() + MINUTE - clock.now().getTime());
  const reminded = await fired(id, 'remind-1');
  expect(reminded.timers!.fired['remind-1']!.getTime()).toBeGreaterThanOrEqual(monday.getTime());
  await posted(id, 'recipient:t:remind-1');
  const escalated = await fired(id, 'escalate');
  expect(escalated.timers?.escalated_to).toEqual({ kind: 'channel', slack: ESCALATIONS });
  const message = await posted(id, 'escalation');
  expect(message.args.channel).toBe(ESCALATIONS);
  expect(message.args.thread_ts).toBeUndefined();
  expect(JSON.stringify(message.args.blocks)).toContain('Escalated');
  // The channel hears who waits on whom since when, not what the handoff says.
  expect(JSON.stringify(message.args.blocks)).not.toContain('staging keys');
  const senderDm = escalated.slack_sender!;
  await waitUntil(
    async () => dmText(slack, senderDm.channel, senderDm.ts).includes(`escalated to <#${ESCALATIONS}>`) || undefined,
    'the sender DM to name the channel',
  );
  await armed(id, 'remind-2');
  // The second reminder is Tuesday 09:00 Tokyo (24 h after the first, already in working hours).
  expect((await armedTimerOf(relay.store, id))!.due_at.getTime()).toBe(
    reminded.timers!.fired['remind-1']!.getTime() + DAY,
  );

  // Sweeps kept running meanwhile: the escalation channel got the message exactly once, nothing went to a lead.
  await waitUntil(
    async () => ((await read(id)).slack_replies?.escalation ? true : undefined),
    'the escalation recorded',
  );
  expect(posts(id, 'escalation')).toHaveLength(1);
  expect((slack.messages.get(ESCALATIONS) ?? []).filter((m) => JSON.stringify(m.blocks).includes(id))).toHaveLength(1);
  expect(posts(id, 'sender:t:escalate')).toHaveLength(0);
});
