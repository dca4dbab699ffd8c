// Fault: Redis answers slowly while the relay starts (every new connection reaches it a second late, as a Redis
// still loading or a slow network would). The relay waits for its producer connection before its first outbox and
// timer sweeps, so a start like this warns of nothing; it used to log "timer sweep failed: Stream isn't writeable
// and enableOfflineQueue options is false" and skip that sweep until the next interval.
import { createServer, connect, type Server, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { queuePrefix } from '../helpers/queue-keys';
import { testMongoUrl, testRedisUrl, uniqueName } from '../helpers/test-env';
import { killRelayProcess, startRelayProcess, type RelayProcess } from './relay-process';

const DELAY_MS = 1_000;
let proxy: Server;
const sockets = new Set<Socket>();
let relay: RelayProcess | undefined;

/** A TCP proxy to the test's Redis that holds each new connection for DELAY_MS before it connects upstream. */
async function slowRedisProxy(): Promise<string> {
  const upstream = new URL(testRedisUrl());
  proxy = createServer((client) => {
    sockets.add(client);
    client.pause();
    setTimeout(() => {
      const server = connect(Number(upstream.port || 6379), upstream.hostname, () => {
        client.pipe(server).pipe(client);
        client.resume();
      });
      sockets.add(server);
      const close = () => [client, server].forEach((s) => s.destroy());
      client.on('error', close).on('close', close);
      server.on('error', close).on('close', close);
    }, DELAY_MS);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as { port: number };
  return `redis://127.0.0.1:${port}`;
}

afterAll(async () => {
  await killRelayProcess(relay);
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => proxy?.close(resolve));
});

test('a relay whose Redis connects a second late starts without a warning (its first sweeps wait for it)', async () => {
  const redisUrl = await slowRedisProxy();
  relay = await startRelayProcess({
    MONGODB_URL: testMongoUrl(),
    MONGODB_DB: uniqueName('slow_redis_start'),
    REDIS_URL: redisUrl,
    RELAY_QUEUE_PREFIX: queuePrefix('slow_redis_start'),
    RELAY_ADMIN_KEY: `hra_${randomBytes(24).toString('base64url')}`,
    RELAY_KEY_PEPPER: randomBytes(32).toString('hex'),
  });
  // The first sweeps run at start (the next ones only after their intervals): give them time to finish or fail.
  await sleep(2 * DELAY_MS);
  const ready = await fetch(`${relay.url}/readyz`);
  expect(await ready.json()).toEqual({ status: 'ready', checks: { mongodb: 'ok', redis: 'ok' } });
  const warnings = relay
    .output()
    .split('\n')
    .filter((line) => /"level":(4|5|6)0/.test(line));
  expect(warnings).toEqual([]);
});
