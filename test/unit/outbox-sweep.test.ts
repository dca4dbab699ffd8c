// The outbox (relay-core/service/outbox.ts) on the in-memory outbox ledger and a recording event publisher: an event
// goes to its queues right after the write that recorded it (a publish failure is the sweep's to retry), and the sweep
// puts back what a queue lost, takes out what finished or whose event is gone, and leaves queued jobs to their workers.
// The same on the real store and Redis: test/integration/outbox-*.
import pino from 'pino';
import type { OutboxEvent, ThreadDoc } from '../../relay-core/domain/documents';
import type { EventJobState, EventThread } from '../../relay-core/service/event-publisher';
import { Outbox } from '../../relay-core/service/outbox';
import { InMemoryOutboxLedger } from '../fakes/in-memory-outbox-ledger';
import { NOW } from '../fakes/use-case-ports';
import { threadDocAt } from '../helpers/thread-docs';

const SETTLE_MS = 30_000;
const event = (id: string): OutboxEvent => ({ id, type: 'thread.created', at: NOW, by: 'a@acme', via: 'api' });

function setup(
  states: Record<string, EventJobState> = {},
  opts: { publishFails?: boolean; statesFail?: boolean; failEvent?: string } = {},
) {
  const ledger = new InMemoryOutboxLedger();
  const published: Array<{ thread: string; events: string[] }> = [];
  const outbox = new Outbox({
    store: { outbox: ledger },
    events: {
      publish: async (thread: EventThread, events: readonly OutboxEvent[]) => {
        if (opts.publishFails || events.some((e) => e.id === opts.failEvent)) throw new Error('Redis is down');
        published.push({ thread: thread._id, events: events.map((e) => e.id) });
      },
      jobStates: async (eventId, queues) => {
        if (opts.statesFail) throw new Error('Redis is down');
        return queues.map((queue) => states[`${queue}:${eventId}`] ?? 'missing');
      },
    },
    clock: { now: () => new Date(NOW.getTime() + SETTLE_MS) },
    log: pino({ level: 'silent' }),
  });
  /** A thread that recorded `events`, with jobs `keys` pending since `since`. */
  const waiting = async (events: OutboxEvent[], keys: string[], since = NOW) => {
    const doc: ThreadDoc = {
      ...threadDocAt('a@acme', 'b@acme', 'pending', since),
      outbox: events,
      jobs_pending: keys,
      pending_since: since,
    };
    await ledger.insert(doc);
    return doc;
  };
  return { ledger, outbox, published, waiting };
}

test('recording publishes the event after the write stored it, and not when the write stored nothing', async () => {
  const { outbox, published } = setup();
  const doc = threadDocAt('a@acme', 'b@acme', 'pending', NOW);
  expect(await outbox.recording(event('e1'), async () => doc)).toBe(doc);
  expect(await outbox.recording(event('e2'), async () => null)).toBeNull();
  expect(published).toEqual([{ thread: doc._id, events: ['e1'] }]);
});

test('a publish that fails is not the caller’s failure: the write stands, the sweep retries', async () => {
  const { outbox } = setup({}, { publishFails: true });
  const doc = threadDocAt('a@acme', 'b@acme', 'pending', NOW);
  await expect(outbox.recording(event('e1'), async () => doc)).resolves.toBe(doc);
});

test('the sweep puts an event whose job a queue lost back on its queues, and keeps its jobs pending', async () => {
  const { ledger, outbox, published, waiting } = setup({ 'slack:e1': 'queued' });
  const doc = await waiting([event('e1')], ['slack:e1', 'webhook:e1']);
  expect(await outbox.sweep(SETTLE_MS)).toBe(1);
  expect(published).toEqual([{ thread: doc._id, events: ['e1'] }]);
  expect((await ledger.read(doc._id))?.jobs_pending).toEqual(['slack:e1', 'webhook:e1']);
});

test('the sweep takes out jobs that finished and jobs of an event the thread no longer holds, publishing nothing', async () => {
  const { ledger, outbox, published, waiting } = setup({ 'slack:e1': 'finished', 'webhook:e1': 'queued' });
  const doc = await waiting([event('e1')], ['slack:e1', 'webhook:e1', 'slack:gone']);
  expect(await outbox.sweep(SETTLE_MS)).toBe(0);
  expect(published).toEqual([]);
  expect((await ledger.read(doc._id))?.jobs_pending).toEqual(['webhook:e1']);
});

test('the sweep leaves threads pending for less than the settle time', async () => {
  const { ledger, outbox, published, waiting } = setup();
  const doc = await waiting([event('e1')], ['slack:e1'], new Date(NOW.getTime() + 1_000));
  expect(await outbox.sweep(SETTLE_MS)).toBe(0);
  expect(published).toEqual([]);
  expect((await ledger.read(doc._id))?.jobs_pending).toEqual(['slack:e1']);
});

test('with Redis down the sweep takes every job as missing and publishes again (the publisher records the event)', async () => {
  const { outbox, published, waiting } = setup({}, { statesFail: true });
  const doc = await waiting([event('e1')], ['slack:e1']);
  expect(await outbox.sweep(SETTLE_MS)).toBe(1);
  expect(published).toEqual([{ thread: doc._id, events: ['e1'] }]);
});

test('after an outage the sweep works on several threads at once, each thread’s events in order, and counts them all', async () => {
  const { outbox, published, waiting } = setup();
  const docs = [];
  for (let i = 0; i < 30; i += 1)
    docs.push(await waiting([event(`a${i}`), event(`b${i}`)], [`slack:a${i}`, `slack:b${i}`]));
  expect(await outbox.sweep(SETTLE_MS)).toBe(60);
  for (const doc of docs)
    expect(published.filter((p) => p.thread === doc._id).flatMap((p) => p.events)).toEqual(doc.outbox.map((e) => e.id));
  // Not one thread at a time: a later thread's first event went out before an earlier thread's last.
  const position = (id: string) => published.findIndex((p) => p.events[0] === id);
  expect(position('a1')).toBeLessThan(position('b0'));
});

test('a thread whose publish fails does not stop the others; the sweep reports the failure once they are done', async () => {
  const { ledger, outbox, published, waiting } = setup({}, { failEvent: 'bad' });
  const bad = await waiting([event('bad')], ['slack:bad']);
  const ok = [];
  for (let i = 0; i < 20; i += 1) ok.push(await waiting([event(`ok${i}`)], [`slack:ok${i}`]));
  await expect(outbox.sweep(SETTLE_MS)).rejects.toThrow('Redis is down');
  expect(published.map((p) => p.thread).sort()).toEqual(ok.map((d) => d._id).sort());
  expect((await ledger.read(bad._id))?.jobs_pending).toEqual(['slack:bad']);
});
