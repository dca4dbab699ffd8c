// Queue prefixes for test relays, recorded on the test file's global so that the test environment removes every
// Redis key under them once the file has finished (test/setup/test-environment.ts).
import { Redis } from 'ioredis';
import { uniqueName } from './test-env';

/** Where a test file's prefixes are recorded: its jest global, which the environment reads at teardown. */
export const QUEUE_PREFIXES = Symbol.for('handoff-relay.test-queue-prefixes');

/** A fresh queue prefix (see uniqueName) whose keys are removed after this test file. */
export function queuePrefix(name: string): string {
  return recordQueuePrefix(uniqueName(name));
}

/** Records a prefix (one a relay chose, say) whose keys are removed after this test file. */
export function recordQueuePrefix(prefix: string): string {
  const slot = globalThis as unknown as Record<symbol, Set<string> | undefined>;
  (slot[QUEUE_PREFIXES] ??= new Set()).add(prefix);
  return prefix;
}

/** Removes every key under the prefixes (BullMQ's `<prefix>:<queue>:…`, the rate limiter's `<prefix>:…`); returns how many. */
export async function removeQueueKeys(redisUrl: string, prefixes: Iterable<string>): Promise<number> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true });
  let removed = 0;
  try {
    await redis.connect();
    for (const prefix of prefixes) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length) removed += await redis.unlink(...keys);
      } while (cursor !== '0');
    }
  } finally {
    redis.disconnect();
  }
  return removed;
}
