// Redis outlives a database: after a fresh `.data` (or with two relays on one queue prefix) the queues still hold
// event jobs of threads written to the other database. A worker must leave them alone rather than record events
// that never happened here in its teammates' event logs and open webhook deliveries for them.
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { sendHandoff } from '../helpers/handoffs';
import { queuePrefix } from '../helpers/queue-keys';
import { waitUntil } from '../helpers/wait-until';

const relays: TestRelay[] = [];

afterAll(async () => {
  for (const relay of relays) await relay.stop().catch(() => {});
});

async function events(relay: TestRelay, key: string): Promise<Array<{ type: string; thread_id: string }>> {
  const response = await fetch(`${relay.url}/events?since=0`, { headers: { authorization: `Bearer ${key}` } });
  expect(response.status).toBe(200);
  return ((await response.json()) as { events: Array<{ type: string; thread_id: string }> }).events;
}

test('a worker skips the event jobs Redis kept for another database, and serves its own', async () => {
  const prefix = queuePrefix('queue-database');
  // The old database: only the API runs, so its events wait in Redis when it stops.
  const old = await startTestRelay({
    name: 'queue-database-old',
    env: { RELAY_QUEUE_PREFIX: prefix, RELAY_ROLES: 'api' },
  });
  relays.push(old);
  const [oldAlice, oldBob] = await Promise.all([
    old.register({ handle: 'alice@acme' }),
    old.register({ handle: 'bob@acme' }),
  ]);
  // Bob has a webhook there, so the event gets a webhooks job (an event nobody hears of that way gets none).
  const card = await fetch(`${old.url}/agents/me/card`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${oldBob}`, 'content-type': 'application/json' },
    body: JSON.stringify({ notification_url: 'https://hooks.example.com/bob' }),
  });
  expect(card.status).toBe(200);
  const stale = await sendHandoff(old, oldAlice!, 'bob@acme', 'written to the database that is gone');
  await old.stop();

  // A new database, the same handles, the same queue prefix, with a worker.
  const fresh = await startTestRelay({
    name: 'queue-database-new',
    env: { RELAY_QUEUE_PREFIX: prefix },
    captureLogs: true,
  });
  relays.push(fresh);
  const [alice, bob] = await Promise.all([
    fresh.register({ handle: 'alice@acme' }),
    fresh.register({ handle: 'bob@acme' }),
  ]);
  const own = await sendHandoff(fresh, alice!, 'bob@acme', 'written here');

  // The stale job is taken and skipped; the own event is in both logs from its request on.
  await waitUntil(
    async () =>
      fresh.logs.some((line) => String(line.msg).startsWith('skipping event jobs written to another database'))
        ? true
        : null,
    'the stale job skipped',
  );
  expect(await events(fresh, bob!)).toEqual([expect.objectContaining({ type: 'thread.created', thread_id: own })]);
  expect(await events(fresh, alice!)).toEqual([expect.objectContaining({ type: 'thread.created', thread_id: own })]);
  expect(
    fresh.logs.filter((line) => String(line.msg).startsWith('skipping event jobs written to another database')),
  ).toHaveLength(1);
  expect((await fresh.rpc(bob!, 'tasks/get', { task_id: stale })).body.error.code).toBe(-32006);
});
