// What the timer sweep reads, counted on the driver's command monitoring: with nothing due, its queries on the
// threads' `due` index (`next_due_at`) return no thread however many handoffs are open; once steps are due it reads
// those and runs each; a later sweep with nothing due is back to reading nothing.
import type { CommandStartedEvent, CommandSucceededEvent } from 'mongodb';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { sendHandoff } from '../helpers/handoffs';
import { TestClock } from '../helpers/test-clock';
import { testMongoUrl } from '../helpers/test-env';
import { waitUntil } from '../helpers/wait-until';
import { armedTimerOf } from '../helpers/thread-docs';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const clock = new TestClock();
let relay: TestRelay;
let aliceKey: string;

beforeAll(async () => {
  const url = new URL(testMongoUrl());
  url.searchParams.set('monitorCommands', 'true');
  // The worker's own sweeps stay out of the way (one at start); the test runs each sweep itself.
  relay = await startTestRelay({
    name: 'timers_sweep_cost',
    clock,
    env: { MONGODB_URL: url.toString(), RELAY_TIMER_SWEEP_INTERVAL: '24h', RELAY_WORKING_HOURS: 'off' },
  });
  aliceKey = await relay.register({ handle: 'alice@acme' });
  await relay.register({ handle: 'bob@acme' });
});

afterAll(async () => {
  await relay?.stop();
});

interface Reads {
  /** find / getMore / aggregate / count commands, by collection. */
  commands: Record<string, number>;
  /** Documents those commands returned, by collection. */
  documents: Record<string, number>;
  /** The filters `threads` was read with. */
  threadFilters: unknown[];
}

/** Runs `work` and counts every read command the store's client sends meanwhile. */
async function reads<T>(work: () => Promise<T>): Promise<{ result: T; reads: Reads }> {
  const client = relay.store.db.client;
  const counted: Reads = { commands: {}, documents: {}, threadFilters: [] };
  const collectionOf = new Map<number, string>();
  const started = (event: CommandStartedEvent) => {
    if (!['find', 'getMore', 'aggregate', 'count'].includes(event.commandName)) return;
    // The outbox sweep's reads (threads with jobs in flight) run on their own interval, not the timer sweep's.
    if (event.command.filter && 'pending_since' in event.command.filter) return;
    const name = String(event.commandName === 'getMore' ? event.command.collection : event.command[event.commandName]);
    collectionOf.set(event.requestId, name);
    counted.commands[name] = (counted.commands[name] ?? 0) + 1;
    if (name === 'threads') counted.threadFilters.push(event.command.filter);
  };
  const succeeded = (event: CommandSucceededEvent) => {
    const name = collectionOf.get(event.requestId);
    if (!name) return;
    const cursor = (event.reply as { cursor?: { firstBatch?: unknown[]; nextBatch?: unknown[] } }).cursor;
    counted.documents[name] =
      (counted.documents[name] ?? 0) + (cursor?.firstBatch?.length ?? cursor?.nextBatch?.length ?? 0);
  };
  client.on('commandStarted', started);
  client.on('commandSucceeded', succeeded);
  try {
    return { result: await work(), reads: counted };
  } finally {
    client.off('commandStarted', started);
    client.off('commandSucceeded', succeeded);
  }
}

const total = (byCollection: Record<string, number>) => Object.values(byCollection).reduce((a, b) => a + b, 0);

async function openHandoffs(n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i += 1) ids.push(await sendHandoff(relay, aliceKey, 'bob@acme', `open handoff ${i}`));
  await waitUntil(
    async () =>
      (await Promise.all(ids.map((id) => armedTimerOf(relay.store, id)))).every((row) => row?.step === 'remind-1')
        ? true
        : undefined,
    `${n} timers armed`,
  );
  return ids;
}

const byDue = (filter: unknown) => JSON.stringify(Object.keys(filter as object)) === '["next_due_at"]';

test('a sweep with nothing due reads no thread with 3 or 43 open handoffs, only the `due` index', async () => {
  const few = await openHandoffs(3);
  await relay.timers.sweep();
  const small = await reads(() => relay.timers.sweep());
  expect(small.result).toBe(0);

  const many = [...few, ...(await openHandoffs(40))];
  const large = await reads(() => relay.timers.sweep());
  expect(large.result).toBe(0);
  console.info(
    `sweep reads with nothing due: 3 open → ${JSON.stringify(small.reads.documents)} in ${JSON.stringify(small.reads.commands)}; 43 open → ${JSON.stringify(large.reads.documents)} in ${JSON.stringify(large.reads.commands)}`,
  );
  for (const { reads: r } of [small, large]) {
    expect(r.documents.threads ?? 0).toBe(0);
    expect(r.threadFilters.every(byDue)).toBe(true);
    expect(total(r.documents)).toBeLessThanOrEqual(4);
    expect(total(r.commands)).toBeLessThanOrEqual(6);
  }

  // Four hours on, all 43 first reminders are due: the sweep reads those threads' steps off the index and runs each;
  // `threads` is otherwise read by `_id` only (by the jobs it promoted, which run meanwhile).
  clock.advance(4 * HOUR + MINUTE);
  const due = await reads(() => relay.timers.sweep());
  expect(due.result).toBe(many.length);
  expect(due.reads.threadFilters.filter(byDue).length).toBeGreaterThanOrEqual(1);
  expect(
    due.reads.threadFilters
      .filter((filter) => !byDue(filter))
      .every((filter) => JSON.stringify(Object.keys(filter as object)) === '["_id"]'),
  ).toBe(true);
  await waitUntil(
    async () =>
      (await Promise.all(many.map((id) => armedTimerOf(relay.store, id)))).every((row) => row?.step === 'remind-2')
        ? true
        : undefined,
    'every handoff reminded and armed for remind-2',
  );
  for (const id of many) expect(Object.keys((await relay.store.readThread(id))!.timers!.fired)).toEqual(['remind-1']);

  // Nothing due again: no thread read. (Two minutes on, so the first sweep here runs what the due sweep left waiting.)
  clock.advance(2 * MINUTE);
  await relay.timers.sweep();
  const after = await reads(() => relay.timers.sweep());
  expect(after.result).toBe(0);
  expect(after.reads.documents.threads ?? 0).toBe(0);
  expect(total(after.reads.documents)).toBeLessThanOrEqual(4);
  expect(total(after.reads.commands)).toBeLessThanOrEqual(6);
});
