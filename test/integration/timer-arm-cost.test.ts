// What arming a handoff's timer costs, counted on the driver's command monitoring: a create arms its first step on
// the thread it inserts and an accept its next one in its own write (no other command, no arm job), a late arm job
// never arms an outdated step, and a create whose own arm failed still gets its timer from the job.
import { Queue, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import type { CommandStartedEvent } from 'mongodb';
import type { AgentDoc, ThreadDoc, TimerDoc } from '../../relay-core/domain/documents';
import { newHandoffSchema } from '../../relay-core/domain/schemas';
import { createLogger } from '../../relay-core/ops/logger';
import { BullmqEventPublisher, producerQueues, type ProducerQueues } from '../../relay-core/queues/bullmq-queues';
import { TIMER_ARM_JOB } from '../../relay-core/queues/bullmq-timer-queue';
import { nextTimerStep, withArmedTimer } from '../../relay-core/domain/timer-schedule';
import { BullmqTimerQueue } from '../../relay-core/queues/bullmq-timer-queue';
import { HandoffTimers } from '../../relay-core/service/handoff-timers';
import { Outbox } from '../../relay-core/service/outbox';
import { createRelay, type Relay } from '../../relay-core/service/relay-service';
import { Teammates } from '../../relay-core/service/teammates';
import { IndexedTimerDue, timerDueFor } from '../../relay-core/store/timer-due';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { sendHandoff } from '../helpers/handoffs';
import { TestClock } from '../helpers/test-clock';
import { testMongoUrl, testRedisUrl } from '../helpers/test-env';
import { waitUntil } from '../helpers/wait-until';
import { noPublisher } from '../helpers/no-publisher';
import { armedTimerOf } from '../helpers/thread-docs';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const TIMER_COLLECTIONS = new Set(['timers']);
const clock = new TestClock();
let relay: TestRelay;
let aliceKey: string;
let bobKey: string;
let redis: Redis;
let verify: Queue;
let webhooksQueue: Queue;

beforeAll(async () => {
  const url = new URL(testMongoUrl());
  url.searchParams.set('monitorCommands', 'true');
  // The worker's timer sweep stays out of the way (the test runs it when the clock has moved); a step due later
  // than two sweep intervals has no job yet, so the first reminder (4 hours) is armed without one.
  relay = await startTestRelay({
    name: 'timer_arm_cost',
    clock,
    env: { MONGODB_URL: url.toString(), RELAY_TIMER_SWEEP_INTERVAL: '1h', RELAY_WORKING_HOURS: 'off' },
  });
  aliceKey = await relay.register({ handle: 'alice@acme' });
  bobKey = await relay.register({ handle: 'bob@acme' });
  redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
  verify = new Queue('verify', { connection: redis, prefix: relay.config.queuePrefix });
  webhooksQueue = new Queue('webhooks', { connection: redis, prefix: relay.config.queuePrefix });
});

afterAll(async () => {
  await verify?.close();
  await webhooksQueue?.close();
  redis?.disconnect();
  await relay?.stop();
});

/** Every command the relay's client sends while `work` runs: `<command> <collection> <_id filter or document _id>`. */
async function commands<T>(work: () => Promise<T>): Promise<{ result: T; sent: string[] }> {
  const client = relay.store.db.client;
  const sent: string[] = [];
  const started = (event: CommandStartedEvent) => {
    const command = event.command as Record<string, any>;
    const collection = String(event.commandName === 'getMore' ? command.collection : command[event.commandName]);
    const target =
      command.filter?._id ??
      command.documents?.[0]?._id ??
      command.updates?.[0]?.q?._id ??
      command.deletes?.[0]?.q?._id ??
      '';
    // The workers' marks of finished jobs select their threads by `jobs_pending` (store/outbox-ledger.ts).
    const mark = command.updates?.[0]?.q?.jobs_pending !== undefined ? 'mark ' : '';
    sent.push(
      `${event.commandName} ${collection} ${mark}${typeof target === 'string' ? target : JSON.stringify(target)}`,
    );
  };
  client.on('commandStarted', started);
  try {
    return { result: await work(), sent };
  } finally {
    client.off('commandStarted', started);
  }
}

/** The workers' batched marks of finished jobs (store/outbox-ledger.ts), on their own timer. */
const isMark = (line: string) => line.startsWith('update threads mark ');
const onTimers = (sent: string[]) => sent.filter((line) => TIMER_COLLECTIONS.has(line.split(' ')[1]!));

/** Waits until the thread.created arm job of `threadId` has run; returns what it answered. */
async function createdArmJob(threadId: string): Promise<unknown> {
  return waitUntil(async () => {
    const done = await verify.getJobs(['completed']);
    const job = done.find(
      (j) => j.name === TIMER_ARM_JOB && j.data.thread_id === threadId && j.data.type === 'thread.created',
    );
    return job ? (job.returnvalue ?? {}) : undefined;
  }, `the thread.created arm job of ${threadId}`);
}

async function row(id: string): Promise<TimerDoc | null> {
  return armedTimerOf(relay.store, id);
}

/** The create's thread.created jobs: its webhooks job and its arm job on `verify` (undefined when none was added). */
async function createdJobs(threadId: string): Promise<{ webhooks: Job | undefined; arm: Job | undefined }> {
  // Not inside `commands`: reading the thread would count among the create's commands.
  const event = (await relay.store.threads.findOne({ _id: threadId }))!.outbox[0]!;
  return { webhooks: await webhooksQueue.getJob(event.id), arm: await verify.getJob(`arm.${event.id}`) };
}

/** The teammates whose event logs hold the event. */
async function loggedFor(eventId: string): Promise<string[]> {
  return (await relay.store.eventLog.entries.find({ event_id: eventId }).toArray()).map((e) => e.handle).sort();
}

/** A create (its event logs written in the request), counted. */
async function countedCreate(summary: string): Promise<{ id: string; sent: string[] }> {
  const { result: id, sent } = await commands(() => sendHandoff(relay, aliceKey, 'bob@acme', summary));
  return { id, sent };
}

test('a create arms its first step on the thread it inserts: no other command, no arm job, and the reminder fires when due', async () => {
  const { id, sent } = await countedCreate('armed at create');
  // Its event went out (both event logs hold it when the call answers) without an arm job: the create armed the
  // step. Nobody hears of it by webhook, so it has no webhooks job either.
  const jobs = await createdJobs(id);
  expect(await loggedFor((await relay.store.readThread(id))!.outbox[0]!.id)).toEqual(['alice@acme', 'bob@acme']);
  expect(jobs).toEqual({ webhooks: undefined, arm: undefined });
  // No timer collection, no thread read or write beside the insert (before: a row in `timers`, and before that the
  // arm job's find threads, find timers, update timers, and until layout 3 an entry in a minute bucket).
  expect(onTimers(sent)).toEqual([]);
  // The request's one insert of the thread's words for the inbox search (service/thread-search-index.ts) is
  // the search's, not the timers': it is counted on its own.
  const words = (c: string) => c.startsWith('insert thread_text ');
  expect(sent.filter((c) => c.includes(id) && !isMark(c) && !words(c))).toEqual([`insert threads ${id}`]);
  // (Once by the request; a sweep that found the create still pending under load may write them again: twice is once.)
  expect(sent.filter((c) => c.includes(id) && words(c)).length).toBeGreaterThanOrEqual(1);

  const thread = (await relay.store.readThread(id))!;
  const timer = (await row(id))!;
  expect(timer).toMatchObject({ step: 'remind-1', attempt: 0, status: 'pending' });
  expect(timer.due_at.getTime()).toBe(thread.created_at.getTime() + 4 * HOUR);
  expect(thread.timer_version).toBe(thread.version);

  clock.advance(4 * HOUR + MINUTE);
  expect(await relay.timers.sweep()).toBeGreaterThanOrEqual(1);
  await waitUntil(
    async () => ((await relay.store.readThread(id))?.timers?.fired?.['remind-1'] ? true : undefined),
    'remind-1 to fire',
  );
  // The fire's own write armed the next step.
  await waitUntil(async () => ((await row(id))?.step === 'remind-2' ? true : undefined), 'remind-2 armed');
});

test('the look-ahead lists the steps due in the minutes asked for, and the due steps are those due by then', async () => {
  const db = relay.store.db;
  const now = clock.now();
  const base = Math.floor(now.getTime() / MINUTE) * MINUTE + 3 * HOUR;
  const threads = db.collection<ThreadDoc>('probe_ahead_threads');
  await threads.createIndex({ next_due_at: 1 }, { name: 'due' });
  const ledger = new IndexedTimerDue(threads);
  const steps: Array<[string, number]> = [
    ['first-minute', base],
    ['second-minute', base + MINUTE + 30_000],
    ['third-minute', base + 2 * MINUTE],
    ['next-hour', base + HOUR + 5 * MINUTE],
  ];
  for (const [id, at] of steps) {
    await threads.insertOne({
      _id: id,
      next_timer: { step: 'remind-1', attempt: 0, status: 'pending', armed_at: now },
      next_due_at: new Date(at),
    } as unknown as ThreadDoc);
  }
  await threads.insertOne({ _id: 'closed', status: 'completed' } as unknown as ThreadDoc);
  const ids = async (rows: Promise<TimerDoc[]>) => (await rows).map((r) => r._id).sort();
  expect(await ids(ledger.ahead(base, base + 2 * MINUTE))).toEqual(['first-minute', 'second-minute']);
  expect(await ids(ledger.ahead(base + 2 * MINUTE, base + 2 * HOUR))).toEqual(['next-hour', 'third-minute']);
  expect(await ids(ledger.ahead(base - HOUR, base))).toEqual([]);
  expect(await ids(ledger.due(new Date(base + MINUTE)))).toEqual(['first-minute']);
  expect(await ids(ledger.due(new Date(base + 2 * HOUR)))).toEqual([
    'first-minute',
    'next-hour',
    'second-minute',
    'third-minute',
  ]);
  const all: string[] = [];
  for await (const r of ledger.all()) all.push(r._id);
  expect(all.sort()).toEqual(['first-minute', 'next-hour', 'second-minute', 'third-minute']);
  const first = (await ledger.due(new Date(base + MINUTE)))[0]!;
  expect(first).toEqual({
    _id: 'first-minute',
    step: 'remind-1',
    attempt: 0,
    status: 'pending',
    armed_at: now,
    due_at: new Date(base),
  });
});

test('an accept arms the next step in its own write (no arm job, no other command), and a late thread.created arm job changes nothing', async () => {
  const id = await sendHandoff(relay, aliceKey, 'bob@acme', 'accepted before its created job');
  const created = (await row(id))!;
  const accept = await commands(() => relay.rpc(bobKey, 'tasks/update', { task_id: id, transition: 'accept' }));
  expect(accept.result.body.result?.status).toBe('accepted');
  const accepted = (await row(id))!;
  expect(accepted).toMatchObject({ step: 'stale', attempt: created.attempt + 1, status: 'accepted' });
  const thread = (await relay.store.readThread(id))!;
  expect(thread.timer_version).toBe(thread.version);
  // One write of the thread, which armed the step too (beside the workers' batched marks of finished jobs, by `$in`).
  expect(accept.sent.filter((c) => c.startsWith('update threads') && !isMark(c))).toEqual([`update threads ${id}`]);
  expect(onTimers(accept.sent)).toEqual([]);
  const acceptEvent = thread.outbox.find((e) => e.type === 'thread.accepted')!;
  expect(await loggedFor(acceptEvent.id)).toEqual(['alice@acme', 'bob@acme']);
  expect(await verify.getJob(`arm.${acceptEvent.id}`)).toBeUndefined();

  // The thread.created job after all, as a process that did not arm the create would run it, late: nothing written.
  const late = await commands(() => relay.timers.arm(id));
  expect(late.result).toEqual(accepted);
  expect(late.sent.filter((c) => /^(insert|update|delete) /.test(c) && c.includes(id) && !isMark(c))).toEqual([]);
  expect(await row(id)).toEqual(accepted);
  // A job of a version this process has not seen (another process wrote it) reads the thread; one it wrote reads nothing.
  const behind = await commands(() => relay.timers.arm(id, { version: thread.version + 1 }));
  expect(behind.sent).toContain(`find threads ${id}`);
  const own = await commands(() => relay.timers.arm(id, { version: thread.version }));
  expect(own.result).toEqual(accepted);
  expect(own.sent.filter((c) => c.includes(id) && !isMark(c))).toEqual([]);
});

test('a create retried with the same idempotency key gets the same thread and leaves its timer as it was', async () => {
  const key = `timer-retry-${Date.now()}`;
  const id = await sendHandoff(relay, aliceKey, 'bob@acme', 'sent twice', {
    metadata: { client_idempotency_key: key },
  });
  const first = (await row(id))!;
  clock.advance(2 * MINUTE);
  const retried = await commands(() =>
    sendHandoff(relay, aliceKey, 'bob@acme', 'sent twice', { metadata: { client_idempotency_key: key } }),
  );
  expect(retried.result).toBe(id);
  expect(retried.sent.filter((c) => /^(update|delete) threads /.test(c) && !isMark(c))).toEqual([]);
  expect(await row(id)).toEqual(first);
});

/** A second relay service on the same database, whose create-time arm is `timers` (its events on the same queues). */
async function withService(
  timers: Pick<HandoffTimers, 'withFirstStep'>,
  run: (service: Relay, sender: AgentDoc) => Promise<void>,
): Promise<void> {
  const log = createLogger('silent');
  const webhooks = {
    newEndpoint: async () => {
      throw new Error('not in this test');
    },
    onEndpointSet: async () => {},
  };
  const teammates = new Teammates({ store: relay.store, keyPepper: relay.config.keyPepper!, log, webhooks, clock });
  const producer = new Redis(testRedisUrl(), { maxRetriesPerRequest: 1 });
  const queues: ProducerQueues = producerQueues(producer, relay.config.queuePrefix);
  try {
    const events = new BullmqEventPublisher({
      queues,
      slackEnabled: false,
      database: await relay.store.identity(),
      armTimers: true,
    });
    const service = createRelay({ store: relay.store, teammates, events, clock, publicUrl: relay.url, log, timers });
    await run(service, (await teammates.get('alice@acme'))!);
  } finally {
    await Promise.all(Object.values(queues).map((q) => q.close()));
    producer.disconnect();
  }
}

test('a create whose own arm failed gets its first timer from the thread.created job, and it fires when due', async () => {
  let tried = 0;
  const failing = {
    withFirstStep: async () => {
      tried += 1;
      throw new Error('the zone lookup failed');
    },
  };
  await withService(failing, async (service, sender) => {
    const created = await service.creates.create(
      sender,
      newHandoffSchema.parse({ to: 'bob@acme', intent: 'inform', summary: 'armed by its job' }),
      'api',
    );
    expect(tried).toBe(1);
    const id = created.task_id;
    await waitUntil(
      async () => ((await createdJobs(id)).webhooks ? true : undefined),
      'the thread.created webhooks job',
    );
    expect((await createdJobs(id)).arm).toBeDefined();
    await createdArmJob(id);
    const timer = (await row(id))!;
    const thread = (await relay.store.readThread(id))!;
    expect(timer).toMatchObject({ step: 'remind-1', attempt: 0, status: 'pending' });
    expect(timer.due_at.getTime()).toBe(thread.created_at.getTime() + 4 * HOUR);
    clock.advance(4 * HOUR + MINUTE);
    expect(await relay.timers.sweep()).toBeGreaterThanOrEqual(1);
    await waitUntil(
      async () => ((await relay.store.readThread(id))?.timers?.fired?.['remind-1'] ? true : undefined),
      'remind-1 to fire',
    );
  });
});

test('with working hours, a write arms a step only from a remembered zone: it never waits on Slack for one', async () => {
  const log = createLogger('silent');
  const webhooks = {
    newEndpoint: async () => {
      throw new Error('not in this test');
    },
    onEndpointSet: async () => {},
  };
  const teammates = new Teammates({ store: relay.store, keyPepper: relay.config.keyPepper!, log, webhooks, clock });
  let remembered: string | undefined;
  const asked: string[] = [];
  const zones = {
    zoneOf: async (agent: { handle: string }) => {
      asked.push(agent.handle);
      remembered = 'Asia/Tokyo';
      return remembered;
    },
    known: () => remembered,
  };
  const settings = {
    ...relay.config.timers,
    workingHours: { startMinute: 9 * 60, endMinute: 17 * 60, days: [1, 2, 3, 4, 5] },
  };
  const queue = new BullmqTimerQueue(verify, redis, `${relay.config.queuePrefix}:timers:armed`);
  const timers = new HandoffTimers({
    store: relay.store,
    due: timerDueFor(relay.store),
    teammates,
    queue,
    outbox: new Outbox({ store: relay.store, events: noPublisher, clock, log }),
    zones,
    clock,
    log,
    settings,
  });
  // A thread as a create holds it before it is stored.
  const stored = (await relay.store.readThread(await sendHandoff(relay, aliceKey, 'bob@acme', 'a thread to copy')))!;
  const thread = withArmedTimer({ ...stored, _id: randomUUID(), timers: undefined }, null);
  // A write's settle neither asks nor arms without the zone: the event's arm job does.
  const accepted = { ...thread, status: 'accepted' as const, accepted_at: clock.now() };
  expect(timers.settle(thread, accepted)).toBe(accepted);
  expect(asked).toEqual([]);
  expect(await timers.withFirstStep(thread)).toBe(thread);
  // Asked meanwhile, for the next create (this one's thread.created job arms it in full).
  await waitUntil(async () => (asked.length > 0 ? true : undefined), 'the zone asked for');
  expect(asked).toEqual(['bob@acme']);
  const armed = await timers.withFirstStep(thread);
  expect(armed.next_due_at).toEqual(nextTimerStep(thread, settings, 'Asia/Tokyo')!.due);
  expect(timers.settle(thread, accepted).next_due_at).toEqual(nextTimerStep(accepted, settings, 'Asia/Tokyo')!.due);
  expect(asked).toHaveLength(1);
});
