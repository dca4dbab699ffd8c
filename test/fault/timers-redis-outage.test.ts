// Fault: Redis dies (and comes back empty) while handoffs wait for their reminders. The `timers` collection keeps
// every armed step, so the timer sweep runs the ones that came due and re-arms the rest: no reminder is lost, none
// is sent twice — for a handoff armed before the outage and one created during it.
import type { ThreadDoc } from '../../relay-core/domain/documents';
import { startRedis } from '../../scripts/local-services/redis';
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { sendHandoff } from '../helpers/handoffs';
import { TestClock } from '../helpers/test-clock';
import { waitUntil } from '../helpers/wait-until';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { timerJobId } from '../../relay-core/service/timer-queue';
import { armedTimerOf } from '../helpers/thread-docs';

const ALICE = 'U0ROALICE';
const BOB = 'U0ROBOB';
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const clock = new TestClock();
let slack: FakeSlack;
let relay: TestRelay;
let redis: Awaited<ReturnType<typeof startRedis>>;
let aliceKey: string;
let bobKey: string;

beforeAll(async () => {
  redis = await startRedis({ log: () => {} });
  slack = await startFakeSlack();
  slack.addUser(ALICE);
  slack.addUser(BOB);
  relay = await startTestRelay({
    name: 'timers_redis_outage',
    slack,
    clock,
    env: { REDIS_URL: redis.url, RELAY_TIMER_SWEEP_INTERVAL: '200ms', RELAY_WORKING_HOURS: 'off' },
  });
  aliceKey = await relay.register({ handle: 'alice@acme', slack_user_id: ALICE });
  bobKey = await relay.register({ handle: 'bob@acme', slack_user_id: BOB });
});

afterAll(async () => {
  await relay?.stop();
  await slack?.close();
  await redis?.stop();
});

const read = async (id: string): Promise<ThreadDoc> => (await relay.store.readThread(id))!;

function posts(id: string, kind: string) {
  return slack
    .callsTo('chat.postMessage')
    .filter(
      (c) =>
        (c.args.metadata as any)?.event_payload?.thread_id === id &&
        (c.args.metadata as any).event_payload.kind === kind,
    );
}

async function reminded(id: string, step: string): Promise<void> {
  await waitUntil(
    async () =>
      ((await read(id)).timers?.fired as Record<string, unknown> | undefined)?.[step] &&
      posts(id, `recipient:t:${step}`).length > 0,
    `${step} of ${id} fired and posted`,
    30_000,
  );
}

test('reminders due during a Redis outage each fire once after Redis comes back empty, for handoffs armed before and created during it', async () => {
  const question = { intent: 'ask_question', metadata: { question: 'Which client?' } };
  const before = await sendHandoff(relay, aliceKey, 'bob@acme', 'armed before the outage', question);
  await waitUntil(
    async () => (await armedTimerOf(relay.store, before))?.step === 'remind-1',
    'the first handoff armed',
  );

  // An accepted one, whose nudge (3 days) is still far off when Redis comes back: it must still fire, from the new one.
  const accepted = await sendHandoff(relay, aliceKey, 'bob@acme', 'accepted before the outage');
  await waitUntil(async () => (await read(accepted)).slack, 'its DM');
  expect(
    (await relay.rpc(bobKey, 'tasks/update', { task_id: accepted, transition: 'accept' })).body.result?.status,
  ).toBe('accepted');
  await waitUntil(async () => (await armedTimerOf(relay.store, accepted))?.step === 'stale', 'the nudge armed');

  await redis.kill();
  const during = await sendHandoff(relay, aliceKey, 'bob@acme', 'created during the outage', question);
  clock.advance(4 * HOUR + MINUTE);
  // The sweeps fail while Redis is down (logged); nothing was fired meanwhile.
  expect((await read(before)).timers?.fired ?? {}).toEqual({});

  redis = await startRedis({ port: redis.port, log: () => {} });
  await reminded(before, 'remind-1');
  await reminded(during, 'remind-1');
  const nudge = (await armedTimerOf(relay.store, accepted))!;
  expect(nudge.step).toBe('stale');
  // The next step was armed again in the new Redis: the second reminder fires once too.
  await waitUntil(
    async () =>
      (await armedTimerOf(relay.store, during))?.step === 'remind-2' &&
      (await armedTimerOf(relay.store, before))?.step === 'remind-2',
    'both armed for remind-2',
  );
  clock.advance(24 * HOUR + MINUTE);
  await reminded(before, 'remind-2');
  await reminded(during, 'remind-2');
  await waitUntil(
    async () =>
      (await armedTimerOf(relay.store, before))?.step === 'escalate' &&
      (await armedTimerOf(relay.store, during))?.step === 'escalate',
    'both armed for the escalation',
  );

  for (const id of [before, during]) {
    const doc = await read(id);
    expect(doc.outbox.filter((e) => e.type === 'thread.reminded')).toHaveLength(2);
    expect(posts(id, 'recipient:t:remind-1')).toHaveLength(1);
    expect(posts(id, 'recipient:t:remind-2')).toHaveLength(1);
    expect(posts(id, 'recipient')).toHaveLength(1);
  }

  // The accepted one's nudge, days off, waits in the due ledger rather than in Redis; half a minute before it is due
  // a sweep's look-ahead adds its job to the new Redis, delayed for the rest.
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const verify = new Queue('verify', { connection, prefix: relay.config.queuePrefix });
  try {
    const nudgeJob = timerJobId({ thread_id: accepted, step: 'stale', attempt: nudge.attempt });
    expect(await verify.getJob(nudgeJob)).toBeUndefined();
    clock.advance(nudge.due_at.getTime() - clock.now().getTime() - 30_000);
    const job = await waitUntil(async () => verify.getJob(nudgeJob), 'the nudge armed ahead in the new Redis');
    expect(await job.getState()).toBe('delayed');
  } finally {
    await verify.close();
    connection.disconnect();
  }
}, 90_000);
