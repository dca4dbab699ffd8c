// Jest test environment: node's, and once a file has finished (its relays stopped in afterAll), the Redis keys
// under every queue prefix it made with queuePrefix() are removed.
import { TestEnvironment } from 'jest-environment-node';
import { QUEUE_PREFIXES, removeQueueKeys } from '../helpers/queue-keys';

export default class RelayTestEnvironment extends TestEnvironment {
  async teardown(): Promise<void> {
    const prefixes = (this.global as unknown as Record<symbol, Set<string> | undefined>)[QUEUE_PREFIXES];
    const redisUrl = process.env.TEST_REDIS_URL;
    if (prefixes?.size && redisUrl) await removeQueueKeys(redisUrl, prefixes);
    await super.teardown();
  }
}
