// Jest globalSetup: starts FerretDB and makes sure Redis answers, then hands their URLs to every
// test file through TEST_MONGODB_URL and TEST_REDIS_URL.
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { ensureFerretDbBinary } from '../../scripts/local-services/ferretdb-build';
import { startFerretDb } from '../../scripts/local-services/ferretdb';
import { ensureRedis } from '../../scripts/local-services/redis';

/** What global-teardown.ts needs; setup and teardown run in the same jest parent process. */
export const TEST_SERVICES = Symbol.for('handoff-relay.test-services');
export interface TestServices {
  stop(): Promise<void>;
}

const log = (line: string) => process.stderr.write(`${line}\n`);

export default async function globalSetup(): Promise<void> {
  const cleanups: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  };

  try {
    const started: string[] = [];
    let mongoUrl = process.env.MONGODB_URL;
    if (mongoUrl) {
      started.push('MongoDB from MONGODB_URL');
    } else {
      const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'handoff-relay-test-'));
      cleanups.push(() => fs.rm(dataDir, { recursive: true, force: true }));
      await ensureFerretDbBinary(log);
      const t0 = Date.now();
      const ferret = await startFerretDb({ dataDir, log });
      cleanups.push(ferret.stop);
      mongoUrl = ferret.url;
      started.push(`FerretDB ${ferret.url} (data ${dataDir}, up in ${Date.now() - t0} ms)`);
    }

    const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
    const redis = await ensureRedis(redisUrl, log);
    cleanups.push(redis.stop);
    started.push(redis.started ? 'a redis-server of its own' : 'the running Redis');

    process.env.TEST_MONGODB_URL = mongoUrl;
    process.env.TEST_REDIS_URL = redisUrl;
    (globalThis as Record<symbol, TestServices>)[TEST_SERVICES] = { stop };
    log(`test services: ${started.join('; ')}`);
  } catch (err) {
    await stop();
    throw err;
  }
}
