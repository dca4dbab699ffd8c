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

function processOn(prefix: string): RedisWakeups {
  const publisher = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
  publishers.push(publisher);
  const w = new RedisWakeups({ redisUrl: testRedisUrl(), publisher, prefix });
  wakeups.push(w);
  return w;
}

afterAll(async () => {
  for (const w of wakeups) await w.close();
  for (const p of publishers) p.disconnect();
});

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
