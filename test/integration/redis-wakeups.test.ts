// The event feed's wake-ups across processes (queues/redis-wakeups.ts) on a real Redis: an event's participants are
// told together, and the readers waiting on each of their logs wake, in the process that recorded it and in
// another one subscribed under the same prefix (one message per handle, as every relay version reads them); readers
// of other logs, or under another prefix, stay asleep.
import { Redis } from 'ioredis';
import { RedisWakeups } from '../../relay-core/queues/redis-wakeups';
import { testRedisUrl, uniqueName } from '../helpers/test-env';
import { waitUntil } from '../helpers/wait-until';

const publishers: Redis[] = [];
const wakeups: RedisWakeups[] = [];

// Every connection the file opened (each process's publisher and its subscriber) is closed: left open, they kept the
// jest worker that ran this file alive past the end of the run ("A worker process has failed to exit gracefully").
afterAll(async () => {
  await Promise.all(wakeups.map((w) => w.close()));
  await Promise.all(publishers.map((p) => p.quit()));
});

function processOn(prefix: string, quietMs?: number): RedisWakeups {
  const publisher = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
  publishers.push(publisher);
  const w = new RedisWakeups({ redisUrl: testRedisUrl(), publisher, prefix, ...(quietMs ? { quietMs } : {}) });
  wakeups.push(w);
  return w;
}

test("one event's participants wake their readers in the recording process and in another, and no one else's", async () => {
  const prefix = uniqueName('wakeups');
  const recording = processOn(prefix);
  const other = processOn(prefix);
  const elsewhere = processOn(uniqueName('wakeups_other'));
  const woken: string[] = [];
  const listen = (w: RedisWakeups, name: string, handle: string) =>
    w.subscribe(handle, () => woken.push(`${name} ${handle}`));
  listen(recording, 'recording', 'alice@acme');
  listen(other, 'other', 'alice@acme');
  listen(other, 'other', 'bob@acme');
  listen(other, 'other', 'carol@acme');
  listen(elsewhere, 'elsewhere', 'bob@acme');
  // The subscriber connections are opened by the first reader: wait until Redis counts them on the channel.
  const channel = `${prefix}:events:grew`;
  await waitUntil(
    async () => (((await publishers[0]!.pubsub('NUMSUB', channel)) as [string, number])[1] === 2 ? true : undefined),
    'both processes subscribed',
  );

  recording.notify(['alice@acme', 'bob@acme']);
  await waitUntil(async () => (woken.length >= 3 ? true : undefined), 'the readers of alice and bob woken');
  // A later hint tells when the first has been delivered everywhere (Redis keeps a connection's messages in order).
  listen(other, 'other', 'dave@acme');
  recording.notify(['dave@acme']);
  await waitUntil(async () => (woken.includes('other dave@acme') ? true : undefined), 'the later hint');
  // (The recording process hears its own message too: a hint twice is one re-read more, never a missed event.)
  expect([...new Set(woken)].sort()).toEqual([
    'other alice@acme',
    'other bob@acme',
    'other dave@acme',
    'recording alice@acme',
  ]);
});

test('a process no other process listens to keeps its hints to itself for a while, then asks Redis again', async () => {
  const prefix = uniqueName('wakeups_alone');
  const alone = processOn(prefix, 1_500);
  // The publishes it sends, counted on its own connection (other test files use the same Redis).
  const publisher = publishers.at(-1)!;
  let sent = 0;
  const evalOnce = publisher.eval.bind(publisher);
  publisher.eval = ((...args: Parameters<typeof evalOnce>) => {
    sent += 1;
    return evalOnce(...args);
  }) as typeof publisher.eval;
  const woken: string[] = [];
  alone.subscribe('alice@acme', () => woken.push('alice@acme'));
  const channel = `${prefix}:events:grew`;
  await waitUntil(
    async () => (((await publisher.pubsub('NUMSUB', channel)) as [string, number])[1] === 1 ? true : undefined),
    'its own subscriber on the channel',
  );

  // Its first hints go to Redis, which answers that nobody else heard them; from then on they stay here, its own
  // readers still woken at once.
  await waitUntil(async () => {
    const before = sent;
    alone.notify(['alice@acme']);
    return sent === before ? true : undefined;
  }, 'a hint that does not go to Redis');
  const [quietFrom, wokenFrom] = [sent, woken.length];
  for (let i = 0; i < 20; i += 1) alone.notify(['alice@acme']);
  expect(sent).toBe(quietFrom);
  expect(woken.length).toBeGreaterThanOrEqual(wokenFrom + 20);

  // Another process's first reader subscribes: once the quiet time is over it hears the next hint, and every one
  // after it.
  const other = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
  publishers.push(other);
  const heard: string[] = [];
  other.on('message', (_channel: string, handle: string) => heard.push(handle));
  await other.subscribe(channel);
  await waitUntil(async () => {
    alone.notify(['bob@acme']);
    return heard.includes('bob@acme') ? true : undefined;
  }, 'the other process hears a hint once the quiet time is over');
  for (const handle of ['carol@acme', 'dave@acme', 'erin@acme']) alone.notify([handle]);
  await waitUntil(async () => (heard.includes('erin@acme') ? true : undefined), 'the later hints');
  expect(heard.filter((h) => h !== 'bob@acme')).toEqual(['carol@acme', 'dave@acme', 'erin@acme']);
});
