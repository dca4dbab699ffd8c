// Test-side view of the services jest's globalSetup started: their URLs and per-test names.
import { randomBytes } from 'node:crypto';

export function testMongoUrl(): string {
  return required('TEST_MONGODB_URL', 'FerretDB (or MONGODB_URL)');
}

export function testRedisUrl(): string {
  return required('TEST_REDIS_URL', 'Redis');
}

/**
 * A name no other test run uses, e.g. `threads_mbx1k2qa_3f9c0a`: at most 38 characters of
 * [A-Za-z0-9_], so it is a valid MongoDB/FerretDB database name and a BullMQ prefix (no ':').
 */
export function uniqueName(prefix: string): string {
  const suffix = `_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const safePrefix = prefix.replace(/[^A-Za-z0-9_]/g, '_').slice(0, 38 - suffix.length) || 't';
  return safePrefix + suffix;
}

function required(name: string, what: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(
      `${name} is not set: run the tests through jest (npm test), whose globalSetup ` +
        `(test/setup/global-setup.ts) starts ${what} and sets it.`,
    );
  }
  return value;
}
