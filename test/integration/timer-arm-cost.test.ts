// What arming a handoff's timer costs, counted on the driver's command monitoring: a create arms its first step
// itself (the row alone, no thread read, and no thread.created arm job at all), a late thread.created job never arms
// an outdated step, and a create whose own arm failed still gets its timer from the job.
import { Queue, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import type { CommandStartedEvent } from 'mongodb';
import type { AgentDoc, ThreadDoc, TimerDoc } from '../../relay-core/domain/documents';
import { newHandoffSchema } from '../../relay-core/domain/schemas';
import { createLogger } from '../../relay-core/ops/logger';
import { BullmqEventPublisher, producerQueues, type ProducerQueues } from '../../relay-core/queues/bullmq-queues';
import { TIMER_ARM_JOB } from '../../relay-core/queues/bullmq-timer-queue';
import { nextTimerStep } from '../../relay-core/domain/timer-schedule';
import { BullmqTimerQueue } from '../../relay-core/queues/bullmq-timer-queue';
import { HandoffTimers } from '../../relay-core/service/handoff-timers';
import { Outbox } from '../../relay-core/service/outbox';
import { RelayService } from '../../relay-core/service/relay-service';
import { Teammates } from '../../relay-core/service/teammates';
import { IndexedTimerDue } from '../../relay-core/store/timer-due';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { sendHandoff } from '../helpers/handoffs';
import { TestClock } from '../helpers/test-clock';
import { testMongoUrl, testRedisUrl } from '../helpers/test-env';
import { waitUntil } from '../helpers/wait-until';
import { noPublisher } from '../helpers/no-publisher';

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
  // The worker's timer sweep stays out of the way; the test runs it when the clock has moved.
  relay = await startTestRelay({ name: 'timer_arm_cost', clock, env: { MONGODB_URL: url.toString(), RELAY_TIMER_SWEEP_INTERVAL: '24h', RELAY_WORKING_HOURS: 'off' } });
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
    const target = command.filter?._id ?? command.documents?.[0]?._id ?? command.updates?.[0]?.q?._id ?? command.deletes?.[0]?.q?._id ?? '';
    sent.push(`${event.commandName} ${collection} ${typeof target === 'string' ? target : JSON.stringify(target)}`);
  };
  client.on('commandStarted', started);
  try {
    return { result: await work(), sent };
  } finally {
    client.off('commandStarted', started);
  }
}

const onTimers = (sent: string[]) => sent.filter((line) => TIMER_COLLECTIONS.has(line.split(' ')[1]!));
const threadReads = (sent: string[], id: string) => sent.filter((line) => /^find threads /.test(line) && line.includes(id));

/** Waits until the thread.created arm job of `threadId` has run; returns what it answered. */
async function createdArmJob(threadId: string): Promise<unknown> {
  return waitUntil(async () => {
    const done = await verify.getJobs(['completed']);
    const job = done.find((j) => j.name === TIMER_ARM_JOB && j.data.thread_id === threadId && j.data.type === 'thread.created');
    return job ? (job.returnvalue ?? {}) : undefined;
  }, `the thread.created arm job of ${threadId}`);
}

async function row(id: string): Promise<TimerDoc | null> {
  return relay.store.timers.findOne({ _id: id });
}

/** The create's thread.created jobs: its webhooks job and its arm job on `verify` (undefined when none was added). */
async function createdJobs(threadId: string): Promise<{ webhooks: Job | undefined; arm: Job | undefined }> {
  // Found by the jobs' data, not the thread's outbox: reading the thread would count among the create's commands.
  const webhooks = (await webhooksQueue.getJobs(['waiting', 'active', 'completed'])).find((j) => j.data.thread_id === threadId && j.data.type === 'thread.created');
  return { webhooks, arm: webhooks ? await verify.getJob(`arm.${webhooks.data.event_id}`) : undefined };
}

/** A create and its thread.created webhooks job (the event logs, the endpoint lookup), counted together. */
async function countedCreate(summary: string): Promise<{ id: string; sent: string[] }> {
  const { result: id, sent } = await commands(async () => {
    const created = await sendHandoff(relay, aliceKey, 'bob@acme', summary);
    await waitUntil(async () => ((await (await createdJobs(created)).webhooks?.isCompleted()) ? true : undefined), `the thread.created webhooks job of ${created}`);
    return created;
  });
  return { id, sent };
}

test('a create arms its first timer with one command (the row), reads no thread for it, and the reminder fires when due', async () => {
  const { id, sent } = await countedCreate('armed at create');
  // Its event went out (the webhooks job is there) without an arm job: the create armed the step.
  const jobs = await createdJobs(id);
  expect(jobs.webhooks).toBeDefined();
  expect(jobs.arm).toBeUndefined();
  // Nothing read, no job to read it (before: the arm job's find threads, find timers, update timers; then its job
  // with nothing to do; and until layout 3 an entry in a minute bucket beside the row).
  expect(onTimers(sent)).toEqual([`insert timers ${id}`]);
  // The thread goes in before the row: its insert (and so its DM's job) waits for no timer write.
  const at = (prefix: string) => sent.findIndex((c) => c.startsWith(prefix));
  expect(at(`insert threads ${id}`)).toBeGreaterThanOrEqual(0);
  expect(at(`insert threads ${id}`)).toBeLessThan(at(`insert timers ${id}`));
  expect(threadReads(sent.slice(sent.indexOf(`insert timers ${id}`)), id)).toEqual([]);

  const thread = (await relay.store.readThread(id))!;
  const timer = (await row(id))!;
  expect(timer).toMatchObject({ step: 'remind-1', attempt: 0, status: 'pending' });
  expect(timer.due_at.getTime()).toBe(thread.created_at.getTime() + 4 * HOUR);

  clock.advance(4 * HOUR + MINUTE);
  expect(await relay.timers.sweep()).toBeGreaterThanOrEqual(1);
  await waitUntil(async () => ((await relay.store.readThread(id))?.timers?.fired?.['remind-1'] ? true : undefined), 'remind-1 to fire');
  await waitUntil(async () => ((await row(id))?.step === 'remind-2' ? true : undefined), 'remind-2 armed');
});

test('the look-ahead lists the steps due in the minutes asked for, and the due rows are those due by then', async () => {
  const db = relay.store.db;
  const now = clock.now();
  const base = Math.floor(now.getTime() / MINUTE) * MINUTE + 3 * HOUR;
  const rows = db.collection<TimerDoc>('probe_ahead_timers');
  await rows.createIndex({ due_at: 1 }, { name: 'due' });
  const ledger = new IndexedTimerDue(rows);
  const steps: Array<[string, number]> = [
    ['first-minute', base],
    ['second-minute', base + MINUTE + 30_000],
    ['third-minute', base + 2 * MINUTE],
    ['next-hour', base + HOUR + 5 * MINUTE],
  ];
  for (const [id, at] of steps) await rows.insertOne({ _id: id, step: 'remind-1', due_at: new Date(at), attempt: 0, status: 'pending', armed_at: now });
  expect((await ledger.ahead(base, base + 2 * MINUTE)).sort()).toEqual(['first-minute', 'second-minute']);
  expect((await ledger.ahead(base + 2 * MINUTE, base + 2 * HOUR)).sort()).toEqual(['next-hour', 'third-minute']);
  expect(await ledger.ahead(base - HOUR, base)).toEqual([]);
  expect((await ledger.due(new Date(base + MINUTE))).sort()).toEqual(['first-minute']);
  expect((await ledger.due(new Date(base + 2 * HOUR))).sort()).toEqual(['first-minute', 'next-hour', 'second-minute', 'third-minute']);
});

test('a thread.created arm job that runs after the accept leaves the accepted step armed and reads only the timer row; the accept\'s job reads no thread', async () => {
  const id = await sendHandoff(relay, aliceKey, 'bob@acme', 'accepted before its created job');
  const { body } = await relay.rpc(bobKey, 'tasks/update', { task_id: id, transition: 'accept' });
  expect(body.result?.status).toBe('accepted');
  // The accept's arm job done, not just its row written: its due entry goes in after the row, and would land among
  // the commands counted below.
  const acceptArmed = () => verify.getJobs(['completed']).then((jobs) => jobs.find((j) => j.name === TIMER_ARM_JOB && j.data.thread_id === id && j.data.type === 'thread.accepted'));
  await waitUntil(acceptArmed, 'the accept\'s arm job done');
  const accepted = (await row(id))!;
  expect(accepted.step).toBe('stale');
  // The thread.created job again, as a process that did not arm the create would run it, late.
  const { result, sent } = await commands(() => relay.timers.armAfter(id, 'thread.created'));
  expect(result).toMatchObject({ step: 'stale', attempt: accepted.attempt });
  expect(sent.filter((c) => c.includes(id) || TIMER_COLLECTIONS.has(c.split(' ')[1]!))).toEqual([`find timers ${id}`]);
  expect(await row(id)).toEqual(accepted);

  // The accept's own job carries the version it was written at: in the process that wrote it moments ago, its arm
  // reads no thread at all (another process reads the document alone: thread-store-contract.test.ts), only the row.
  const acceptJob = (await acceptArmed())!;
  const thread = (await relay.store.readThread(id))!;
  expect(acceptJob.data.version).toBe(thread.version);
  const again = await commands(() => relay.timers.armAfter(id, 'thread.accepted', acceptJob.data.version));
  expect(again.result).toEqual(accepted);
  expect(again.sent.filter((c) => c.includes(id)).sort()).toEqual([`find timers ${id}`]);
  // A job of a version this process has not seen (another process wrote it) reads the thread.
  const behind = await commands(() => relay.timers.armAfter(id, 'thread.accepted', acceptJob.data.version + 1));
  expect(behind.result).toEqual(accepted);
  expect(behind.sent).toContain(`find threads ${id}`);
});

test('a create retried with the same idempotency key gets the same thread and leaves its one timer as it was', async () => {
  const key = `timer-retry-${Date.now()}`;
  const id = await sendHandoff(relay, aliceKey, 'bob@acme', 'sent twice', { metadata: { client_idempotency_key: key } });
  const first = (await row(id))!;
  clock.advance(2 * MINUTE);
  const retried = await commands(() => sendHandoff(relay, aliceKey, 'bob@acme', 'sent twice', { metadata: { client_idempotency_key: key } }));
  expect(retried.result).toBe(id);
  expect(retried.sent.filter((c) => /^(insert|update|delete) timers /.test(c))).toEqual([]);
  expect(await row(id)).toEqual(first);
});

test('creates sent together store their timer rows in shared inserts (group commit), each thread its own row once', async () => {
  const documentsPerInsert: number[] = [];
  const client = relay.store.db.client;
  const started = (event: CommandStartedEvent) => {
    if (event.commandName === 'insert' && event.command.insert === 'timers') documentsPerInsert.push((event.command.documents as unknown[]).length);
  };
  client.on('commandStarted', started);
  let ids: string[];
  try {
    ids = await Promise.all(Array.from({ length: 8 }, (_, i) => sendHandoff(relay, aliceKey, 'bob@acme', `sent together ${i}`)));
  } finally {
    client.off('commandStarted', started);
  }
  // One row per create, written once; FerretDB takes one insert per collection at a time, so the creates that wait
  // behind the first one's insert share the next.
  expect(documentsPerInsert.reduce((a, b) => a + b, 0)).toBe(8);
  expect(documentsPerInsert.length).toBeLessThan(8);
  for (const id of ids) {
    const thread = (await relay.store.readThread(id))!;
    expect(await row(id)).toMatchObject({ _id: id, step: 'remind-1', attempt: 0, status: 'pending', due_at: new Date(thread.created_at.getTime() + 4 * HOUR) });
  }
});

// The arm fails before the thread is written (as if its process died there), or its row fails once the event is on its
// way (the event then goes again, without timer_armed).
const failedArms: Array<[string, (tried: () => void) => { armFirst: () => Promise<() => Promise<void>> }]> = [
  ['own arm failed', (tried) => ({ armFirst: async () => { tried(); throw new Error('the process died here'); } })],
  ['timer row failed after its event went out', (tried) => ({ armFirst: async () => async () => { tried(); throw new Error('the row insert failed'); } })],
];

/** A second relay service on the same database, whose create-time arm is `timers` (its events on the same queues). */
async function withService(timers: Pick<HandoffTimers, 'armFirst'>, run: (service: RelayService, sender: AgentDoc) => Promise<void>): Promise<void> {
  const log = createLogger('silent');
  const webhooks = { newEndpoint: async () => { throw new Error('not in this test'); }, onEndpointSet: async () => {} };
  const teammates = new Teammates({ store: relay.store, keyPepper: relay.config.keyPepper!, log, webhooks, clock });
  const producer = new Redis(testRedisUrl(), { maxRetriesPerRequest: 1 });
  const queues: ProducerQueues = producerQueues(producer, relay.config.queuePrefix);
  try {
    const events = new BullmqEventPublisher({ queues, slackEnabled: false, database: await relay.store.identity(), armTimers: true });
    const service = new RelayService({ store: relay.store, teammates, events, clock, publicUrl: relay.url, log, timers });
    await run(service, (await teammates.get('alice@acme'))!);
  } finally {
    await Promise.all(Object.values(queues).map((q) => q.close()));
    producer.disconnect();
  }
}

test.each(failedArms)('a create whose %s gets its first timer from the thread.created job, and it fires when due', async (_how, failingArm) => {
  let tried = 0;
  await withService(failingArm(() => (tried += 1)), async (service, sender) => {
    const created = await service.createHandoff(sender, newHandoffSchema.parse({ to: 'bob@acme', intent: 'inform', summary: 'armed by its job' }), 'api');
    expect(tried).toBe(1);
    const id = created.task_id;
    await waitUntil(async () => ((await createdJobs(id)).webhooks ? true : undefined), 'the thread.created webhooks job');
    expect((await createdJobs(id)).arm).toBeDefined();
    await createdArmJob(id);
    const timer = (await row(id))!;
    const thread = (await relay.store.readThread(id))!;
    expect(timer).toMatchObject({ step: 'remind-1', attempt: 0, status: 'pending' });
    expect(timer.due_at.getTime()).toBe(thread.created_at.getTime() + 4 * HOUR);
    clock.advance(4 * HOUR + MINUTE);
    expect(await relay.timers.sweep()).toBeGreaterThanOrEqual(1);
    await waitUntil(async () => ((await relay.store.readThread(id))?.timers?.fired?.['remind-1'] ? true : undefined), 'remind-1 to fire');
  });
});

test('a create\'s event goes on its queues while its timer row is still being written, and the create answers once the row is in', async () => {
  let id: string | undefined;
  let release!: () => void;
  const rowHeld = new Promise<void>((resolve) => (release = resolve));
  let rowDone = false;
  const held = { armFirst: async (thread: ThreadDoc) => ((id = thread._id), async () => { await rowHeld; rowDone = true; }) };
  await withService(held, async (service, sender) => {
    let answered = false;
    const creating = service.createHandoff(sender, newHandoffSchema.parse({ to: 'bob@acme', intent: 'inform', summary: 'row held' }), 'api').then((r) => ((answered = true), r));
    // The DM and webhook jobs need no row: the event's webhooks job is there while the row waits.
    await waitUntil(async () => (id && (await createdJobs(id)).webhooks ? true : undefined), 'the thread.created webhooks job while the row is held');
    expect({ rowDone, answered }).toEqual({ rowDone: false, answered: false });
    release();
    expect((await creating).task_id).toBe(id);
    expect(rowDone).toBe(true);
  });
});

test('with working hours, a create arms its first step only from a remembered zone: it never waits on Slack for one', async () => {
  const log = createLogger('silent');
  const webhooks = { newEndpoint: async () => { throw new Error('not in this test'); }, onEndpointSet: async () => {} };
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
  const settings = { ...relay.config.timers, workingHours: { startMinute: 9 * 60, endMinute: 17 * 60, days: [1, 2, 3, 4, 5] } };
  const queue = new BullmqTimerQueue(verify, redis, `${relay.config.queuePrefix}:timers:armed`);
  const timers = new HandoffTimers({ store: relay.store, teammates, queue, outbox: new Outbox({ store: relay.store, events: noPublisher, clock, log }), zones, clock, log, settings });
  // A thread as a create holds it before it is stored (an id no thread has: its row is removed again below).
  const stored = (await relay.store.readThread(await sendHandoff(relay, aliceKey, 'bob@acme', 'a thread to copy')))!;
  const thread = { ...stored, _id: randomUUID(), timers: undefined };
  expect(await timers.armFirst(thread)).toBeNull();
  // Asked meanwhile, for the next create (this one's thread.created job arms it in full).
  await waitUntil(async () => (asked.length > 0 ? true : undefined), 'the zone asked for');
  expect(asked).toEqual(['bob@acme']);
  const insertRow = await timers.armFirst(thread);
  expect(insertRow).not.toBeNull();
  await insertRow!();
  try {
    expect((await row(thread._id))!.due_at).toEqual(nextTimerStep(thread, settings, 'Asia/Tokyo')!.due);
    expect(asked).toHaveLength(1);
  } finally {
    await relay.store.timers.deleteOne({ _id: thread._id });
  }
});
