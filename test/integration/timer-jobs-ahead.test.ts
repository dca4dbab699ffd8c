// A timer step's delayed job is added only when the step is about to come due (within two sweep intervals, at least
// two minutes): a create whose first reminder is hours away adds none, so no worker waiting on the `verify` queue is
// woken for it. The sweep that first sees the step within that horizon adds its job, re-reading the row (a step that
// moved on meanwhile gets none), and the step fires when due, once.
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { timerJobId } from '../../relay-core/service/timer-queue';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { sendHandoff } from '../helpers/handoffs';
import { TestClock } from '../helpers/test-clock';
import { testRedisUrl } from '../helpers/test-env';
import { waitUntil } from '../helpers/wait-until';
import { armedTimerOf } from '../helpers/thread-docs';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const clock = new TestClock();
let relay: TestRelay;
let aliceKey: string;
let bobKey: string;
let redis: Redis;
let verify: Queue;

beforeAll(async () => {
  // The default sweep interval (a minute: steps within two minutes get their jobs when armed); the test runs the
  // sweeps itself, on the relay's clock.
  relay = await startTestRelay({
    name: 'timer_jobs_ahead',
    clock,
    env: { RELAY_TIMER_SWEEP_INTERVAL: '1m', RELAY_WORKING_HOURS: 'off' },
  });
  aliceKey = await relay.register({ handle: 'alice@acme' });
  bobKey = await relay.register({ handle: 'bob@acme' });
  redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
  verify = new Queue('verify', { connection: redis, prefix: relay.config.queuePrefix });
});

afterAll(async () => {
  await verify?.close();
  redis?.disconnect();
  await relay?.stop();
});

const row = (id: string) => armedTimerOf(relay.store, id);
const remindJob = (id: string) => verify.getJob(timerJobId({ thread_id: id, step: 'remind-1', attempt: 0 }));

test('a reminder hours away gets its job from the sweep that sees it within the horizon, not from the create; one that moved on gets none; it fires when due', async () => {
  const pending = await sendHandoff(relay, aliceKey, 'bob@acme', 'reminded four hours on');
  const answered = await sendHandoff(relay, aliceKey, 'bob@acme', 'accepted at once');
  expect(
    (await relay.rpc(bobKey, 'tasks/update', { task_id: answered, transition: 'accept' })).body.result?.status,
  ).toBe('accepted');
  const first = (await waitUntil(
    async () => ((await row(pending))?.step === 'remind-1' ? row(pending) : undefined),
    'the first reminder armed',
  ))!;
  const nudge = (await waitUntil(
    async () => ((await row(answered))?.step === 'stale' ? row(answered) : undefined),
    'the accepted one re-armed for its nudge',
  ))!;
  expect(first.due_at.getTime()).toBeGreaterThan(clock.now().getTime() + 3 * HOUR);

  // Armed, in the due ledger, but no delayed job in Redis for either step yet.
  expect(await remindJob(pending)).toBeUndefined();
  expect(await remindJob(answered)).toBeUndefined();
  expect(
    await verify.getJob(timerJobId({ thread_id: answered, step: 'stale', attempt: nudge.attempt })),
  ).toBeUndefined();

  // 45 s before the reminder (well within the horizon, which counts whole minutes: two minutes ahead, rounded down
  // to a minute's start): the sweep adds its job, delayed for the rest. The accepted handoff's remind-1 was noted for
  // the same minute, but its row now names the nudge, days off: no job for it.
  clock.advance(first.due_at.getTime() - clock.now().getTime() - 45_000);
  expect(await relay.timers.sweep()).toBe(0);
  const job = await remindJob(pending);
  expect(job).toBeDefined();
  expect(await job!.getState()).toBe('delayed');
  expect(await remindJob(answered)).toBeUndefined();
  expect(
    await verify.getJob(timerJobId({ thread_id: answered, step: 'stale', attempt: nudge.attempt })),
  ).toBeUndefined();

  // Due: the sweep runs it (the job is promoted), and it fires once.
  clock.advance(MINUTE);
  expect(await relay.timers.sweep()).toBe(1);
  const reminded = await waitUntil(async () => {
    const doc = await relay.store.readThread(pending);
    return doc?.timers?.fired?.['remind-1'] ? doc : undefined;
  }, 'remind-1 to fire');
  expect(reminded.outbox.filter((e) => e.type === 'thread.reminded')).toHaveLength(1);
  await waitUntil(async () => ((await row(pending))?.step === 'remind-2' ? true : undefined), 'remind-2 armed');
  expect((await relay.store.readThread(answered))!.timers?.fired ?? {}).toEqual({});
});
