// The policy's `team:` timer settings against one real relay (FerretDB + Redis): a handoff's first timer step is armed
// with the settings of the policy in force when it is written, the environment's where the policy sets none.
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { TestClock } from '../helpers/test-clock';
import { sendHandoff } from '../helpers/handoffs';
import { armedTimerOf } from '../helpers/thread-docs';
import { waitUntil } from '../helpers/wait-until';

const HOUR = 3_600_000;
let relay: TestRelay;
let aliceKey: string;

/**
 * The relay's clock at the next Wednesday noon (UTC): the escalation below waits for Sunday 09:00, which from there is
 * days ahead and before the handoff expires (its token lasts seven days). From the real clock, a run on a Sunday
 * between 07:01 and 09:00 found that minute a week off, after the expiry.
 */
function wednesdayNoon(): TestClock {
  const clock = new TestClock();
  const now = Date.now();
  const at = new Date(now);
  at.setUTCHours(12, 0, 0, 0);
  while (at.getUTCDay() !== 3 || at.getTime() <= now) at.setUTCDate(at.getUTCDate() + 1);
  clock.advance(at.getTime() - now);
  return clock;
}

beforeAll(async () => {
  // Working hours off in the environment, so each step is due exactly its duration after the handoff.
  relay = await startTestRelay({
    name: 'team_timer_settings',
    clock: wednesdayNoon(),
    env: { RELAY_WORKING_HOURS: 'off', RELAY_REMIND_AFTER: '4h' },
  });
  aliceKey = await relay.register({ handle: 'alice@acme', name: 'Alice' });
  await relay.register({ handle: 'bob@acme', name: 'Bob' });
});

afterAll(async () => {
  await relay?.stop();
});

async function applyPolicy(source: string): Promise<void> {
  const answer = await relay.rest('PUT', '/admin/policy', relay.adminKey, { source });
  expect(answer.status).toBe(200);
}

/** The first step a new question is armed with, and how long after the handoff it is due. */
async function firstStep(): Promise<{ step: string; afterMs: number; due: Date }> {
  const id = await sendHandoff(relay, aliceKey, 'bob@acme', 'Can you look?', {
    intent: 'ask_question',
    metadata: { question: 'Can you look?' },
  });
  const timer = await waitUntil(() => armedTimerOf(relay.store, id), `the first step of ${id}`);
  const thread = (await relay.store.readThread(id))!;
  return { step: timer.step, afterMs: timer.due_at.getTime() - thread.created_at.getTime(), due: timer.due_at };
}

test('the policy in force sets the team timings; without a team section the environment does', async () => {
  expect(await firstStep()).toMatchObject({ step: 'remind-1', afterMs: 4 * HOUR });

  await applyPolicy('default: allow\nteam:\n  remind_after: 1h\n');
  expect(await firstStep()).toMatchObject({ step: 'remind-1', afterMs: HOUR });

  await applyPolicy(
    'default: allow\nteam:\n  remind_after: off\n  remind_again: off\n  escalate_after: 2h\n  working_hours: 09:00-09:01\n  working_days: [sun]\n',
  );
  // Reminders off: the escalation comes first, moved into the team's working minute on Sunday.
  const escalation = await firstStep();
  expect(escalation.step).toBe('escalate');
  expect(escalation.afterMs).toBeGreaterThanOrEqual(2 * HOUR);
  expect([escalation.due.getUTCDay(), escalation.due.getUTCHours(), escalation.due.getUTCMinutes()]).toEqual([0, 9, 0]);

  await applyPolicy('default: allow\nrules: []\n');
  expect(await firstStep()).toMatchObject({ step: 'remind-1', afterMs: 4 * HOUR });
});
