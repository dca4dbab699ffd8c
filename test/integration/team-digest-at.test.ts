// The policy's `team.digest_at` against one relay with the fake Slack and an injected clock: the digest tick goes by
// the time of the policy in force, RELAY_DIGEST_AT where it sets none, and `off` there stops it for everyone.
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { digestTicks, nextWeekdayMorning, type DigestTicks } from '../helpers/digest-ticks';
import { sendHandoff } from '../helpers/handoffs';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { TestClock } from '../helpers/test-clock';

const ANA = 'U0TDANA01';
let slack: FakeSlack;
let relay: TestRelay;
let ticks: DigestTicks;

beforeAll(async () => {
  slack = await startFakeSlack();
  slack.addUser(ANA, { tz: 'UTC' });
  const clock = new TestClock();
  // 08:45 UTC on a weekday: before RELAY_DIGEST_AT (09:30), after the team's 08:00.
  clock.advance(nextWeekdayMorning(Date.now()) - clock.now().getTime());
  relay = await startTestRelay({ name: 'team_digest_at', slack, clock, env: { RELAY_DIGEST_AT: '09:30' } });
  ticks = await digestTicks(relay);
  await relay.register({ handle: 'ana@acme', slack_user_id: ANA });
  const samKey = await relay.register({ handle: 'sam@acme' });
  await sendHandoff(relay, samKey, 'ana@acme', 'Waiting on Ana');
}, 60_000);

afterAll(async () => {
  await ticks?.close();
  await relay?.stop();
  await slack?.close();
});

async function applyPolicy(source: string): Promise<void> {
  expect((await relay.rest('PUT', '/admin/policy', relay.adminKey, { source })).status).toBe(200);
}

test('the tick goes by the team digest time of the policy in force, the environment otherwise', async () => {
  await applyPolicy('default: allow\nteam:\n  digest_at: "off"\n');
  expect(await ticks.tick()).toEqual({ due: 0, outcomes: {} });
  // 08:45 is before the environment's 09:30: nobody's digest is due.
  await applyPolicy('default: allow\nrules: []\n');
  expect(await ticks.tick()).toEqual({ due: 0, outcomes: {} });
  await applyPolicy('default: allow\nteam:\n  digest_at: "08:00"\n');
  expect(await ticks.tick()).toEqual({ due: 1, outcomes: { 'ana@acme': 'posted' } });
});
