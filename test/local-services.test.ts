// Integration test of scripts/local-services/ on the real ferretdb and redis-server binaries, all on 127.0.0.1.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { Redis } from 'ioredis';
import { MongoClient, MongoServerError } from 'mongodb';
import {
  PID_FILE,
  defaultGoMaxProcs,
  ferretDbEnv,
  sqliteUrl,
  startFerretDb,
  type RunningFerretDb,
} from '../scripts/local-services/ferretdb';
import { keepRunning } from '../scripts/local-services/keep-running';
import { findFreePort } from '../scripts/local-services/ports';
import { ensureRedis, startRedis } from '../scripts/local-services/redis';
import { testMongoUrl, testRedisUrl, uniqueName } from './helpers/test-env';
import { waitUntil } from './helpers/wait-until';

const noLog = () => {};

async function withMongo<T>(
  url: string,
  use: (client: MongoClient) => Promise<T>,
  serverSelectionTimeoutMS = 2_000,
): Promise<T> {
  const client = new MongoClient(url, { directConnection: true, serverSelectionTimeoutMS });
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

/** PING with one attempt and no reconnects: resolves to the reply or rejects. */
async function redisPing(url: string): Promise<string> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 1_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    return await client.ping();
  } finally {
    if (client.status !== 'end') client.disconnect(); // else ioredis keeps a 2 s timer alive
  }
}

async function withRedis<T>(url: string, use: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis(url, { maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    return await use(client);
  } finally {
    client.disconnect();
  }
}

/** The process id a Redis reports (INFO server). */
async function redisPid(url: string): Promise<number> {
  return withRedis(url, async (client) => Number(/process_id:(\d+)/.exec(await client.info('server'))![1]));
}

let tmpRoot: string;
const cleanups: Array<() => Promise<void>> = [];

beforeAll(async () => {
  tmpRoot = await fs.mkdtemp(path.join(os.tmpdir(), 'handoff-relay-local-services-'));
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(async () => {
  await fs.rm(tmpRoot, { recursive: true, force: true });
});

async function ferret(name: string): Promise<RunningFerretDb> {
  const running = await startFerretDb({ dataDir: path.join(tmpRoot, name), log: noLog });
  cleanups.push(running.stop);
  return running;
}

describe('startFerretDb on the real ferretdb binary', () => {
  it('stores and reads back documents, enforces a unique index, and stop() really stops it', async () => {
    const db = await ferret('single');
    expect(db.url).toBe(`mongodb://127.0.0.1:${db.port}/`);
    await expect(fs.stat(path.join(db.dataDir, 'ferretdb.log'))).resolves.toBeTruthy();

    await withMongo(db.url, async (client) => {
      const things = client.db(uniqueName('local_services')).collection<{ _id: string; key: string }>('things');
      await things.insertOne({ _id: 'a', key: 'k1' });
      expect(await things.findOne({ _id: 'a' })).toEqual({ _id: 'a', key: 'k1' });

      await things.createIndex({ key: 1 }, { unique: true });
      const duplicate = await things.insertOne({ _id: 'b', key: 'k1' }).catch((err: unknown) => err);
      expect(duplicate).toBeInstanceOf(MongoServerError);
      expect((duplicate as MongoServerError).code).toBe(11000);
    });

    await db.stop();
    await expect(withMongo(db.url, (client) => client.db('admin').command({ ping: 1 }), 500)).rejects.toThrow();
    await db.stop(); // idempotent
  });

  it('runs two instances at once on different ports, each with its own data', async () => {
    const [a, b] = await Promise.all([ferret('first'), ferret('second')]);
    expect(a.port).not.toBe(b.port);
    const dbName = uniqueName('two');

    await withMongo(a.url, (client) => client.db(dbName).collection('docs').insertOne({ from: 'a' }));
    await withMongo(b.url, (client) => client.db(dbName).collection('docs').insertOne({ from: 'b' }));

    const froms = await Promise.all(
      [a, b].map((db) =>
        withMongo(db.url, (client) => client.db(dbName).collection('docs').find().project({ _id: 0 }).toArray()),
      ),
    );
    expect(froms).toEqual([[{ from: 'a' }], [{ from: 'b' }]]);
  });

  it('keeps every acknowledged write when FerretDB is killed (SIGKILL) and started again on the same data', async () => {
    const first = await ferret('killed');
    const dbName = uniqueName('killed');
    // synchronous=NORMAL: commits are not fsynced one by one, but they are in the WAL file before FerretDB answers.
    expect(await cmdlineOf(first.port)).toContain(`--sqlite-url=${sqliteUrl(first.dataDir)}`);
    await withMongo(first.url, async (client) => {
      const docs = client.db(dbName).collection<{ _id: number; body: string }>('docs');
      await docs.insertOne({ _id: 0, body: 'first' });
      // Concurrent writes, acknowledged one by one, the last just before the kill.
      await Promise.all(Array.from({ length: 200 }, (_, i) => docs.insertOne({ _id: i + 1, body: `doc ${i + 1}` })));
      await docs.replaceOne({ _id: 0 }, { body: 'replaced' });
    });
    process.kill(await pidOf(first.port), 'SIGKILL');
    await first.stop();

    const second = await ferret('killed');
    await withMongo(second.url, async (client) => {
      const docs = client.db(dbName).collection<{ _id: number; body: string }>('docs');
      expect(await docs.countDocuments({})).toBe(201);
      expect(await docs.findOne({ _id: 0 })).toEqual({ _id: 0, body: 'replaced' });
      expect(await docs.findOne({ _id: 200 })).toEqual({ _id: 200, body: 'doc 200' });
    });
  });

  it('stops a FerretDB left running on its data by a process that was killed, and not one whose starter still runs', async () => {
    const first = await ferret('left-behind');
    // Another start on the same data while its starter (this process) runs is refused and leaves it running.
    await expect(ferret('left-behind')).rejects.toThrow(
      `The embedded store in ${first.dataDir} is in use: process ${process.pid} runs FerretDB (pid ${first.pid}, ` +
        `mongodb://127.0.0.1:${first.port}/) on it.`,
    );
    expect(await pidOf(first.port)).toBe(first.pid);

    // As if started by a process that has since been killed with SIGKILL (its exit handler never stopped it).
    const killed = spawn('true');
    await once(killed, 'exit');
    await fs.writeFile(path.join(first.dataDir, PID_FILE), JSON.stringify({ pid: first.pid, parent: killed.pid }));
    const lines: string[] = [];
    const third = await startFerretDb({ dataDir: first.dataDir, log: (line) => lines.push(line) });
    cleanups.push(third.stop);
    expect(lines).toContain(
      `stopping FerretDB (pid ${first.pid}) left running on ${first.dataDir} by a process that was killed (pid ${killed.pid})…`,
    );
    await expect(pidOf(first.port)).rejects.toThrow(/no process listens/);
    expect(JSON.parse(await fs.readFile(path.join(first.dataDir, PID_FILE), 'utf8'))).toEqual({
      pid: third.pid,
      parent: process.pid,
      port: third.port,
    });

    // A clean stop takes the note with it: the next start has nothing to stop.
    await third.stop();
    await expect(fs.stat(path.join(first.dataDir, PID_FILE))).rejects.toThrow(/ENOENT/);
  });

  it('runs one FerretDB per data directory: a relay process started on data another one serves is refused, told how to share it', async () => {
    const first = await ferret('one-per-data');
    // Another process (a second `npm start` on the same RELAY_DATA_DIR), with the built module.
    const script = `
      const { startFerretDb } = require(${JSON.stringify(path.join(__dirname, '..', 'dist', 'scripts', 'local-services', 'ferretdb.js'))});
      startFerretDb({ dataDir: ${JSON.stringify(first.dataDir)}, log: () => {} }).then(
        (running) => running.stop().then(() => process.exit(0)),
        (error) => { process.stderr.write(error.message); process.exit(3); },
      );`;
    const second = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    second.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await once(second, 'exit')) as [number];
    expect({ code, stderr }).toEqual({
      code: 3,
      stderr: expect.stringContaining(
        `The embedded store in ${first.dataDir} is in use: process ${process.pid} runs FerretDB (pid ${first.pid}, ` +
          `mongodb://127.0.0.1:${first.port}/) on it. Two FerretDBs on the same data would each serialise only their ` +
          `own writes, so one could overwrite the other's. Stop that relay first, or give this one its own ` +
          `RELAY_DATA_DIR; a second process of the same relay, with the same settings (Slack's included), can share ` +
          `that store with MONGODB_URL=mongodb://127.0.0.1:${first.port}/ and stops serving when that one stops.`,
      ),
    });
    // The data is served by the first FerretDB alone, and its note is unchanged.
    expect(await ferretDbsOn(first.dataDir)).toEqual([first.pid]);
    expect(JSON.parse(await fs.readFile(path.join(first.dataDir, PID_FILE), 'utf8'))).toEqual({
      pid: first.pid,
      parent: process.pid,
      port: first.port,
    });
  });

  it('refuses a start while another live process is starting FerretDB on the data, and takes the data over once it is gone', async () => {
    const dataDir = path.join(tmpRoot, 'being-started');
    await fs.mkdir(dataDir, { recursive: true });
    // A process that claimed the data (its note has no FerretDB pid yet) and is still alive.
    const starter = spawn('sleep', ['30'], { stdio: 'ignore' });
    await fs.writeFile(path.join(dataDir, PID_FILE), JSON.stringify({ parent: starter.pid }));
    await expect(ferret('being-started')).rejects.toThrow(
      `The embedded store in ${dataDir} is in use: process ${starter.pid} is starting FerretDB on it.`,
    );
    expect(await ferretDbsOn(dataDir)).toEqual([]);

    starter.kill('SIGKILL');
    await once(starter, 'exit');
    const started = await ferret('being-started');
    expect(await ferretDbsOn(dataDir)).toEqual([started.pid]);
  });

  it('runs FerretDB with GOGC=200 and GOMAXPROCS at half the cores unless they are set (its CPU per command bounds the embedded store)', async () => {
    const db = await ferret('gogc');
    const environ = await environOf(db.port);
    expect(environ.get('GOGC')).toBe(process.env.GOGC ?? '200');
    expect(environ.get('GOMAXPROCS')).toBe(
      process.env.GOMAXPROCS ?? String(Math.max(1, Math.floor(os.availableParallelism() / 2))),
    );
    expect(environ.get('DO_NOT_TRACK')).toBe('1');
    expect(ferretDbEnv({ GOGC: 'off', GOMAXPROCS: '3', FERRETDB_LISTEN_ADDR: ':27017', PATH: '/bin' })).toEqual({
      DO_NOT_TRACK: '1',
      GOGC: 'off',
      GOMAXPROCS: '3',
      PATH: '/bin',
    });
    expect([1, 2, 3, 8].map((cores) => defaultGoMaxProcs(cores))).toEqual(['1', '1', '1', '4']);
  });
});

describe('the embedded FerretDB build', () => {
  // Each row SQLite reads to sort is a parse of the whole stored document: a page of a list (newest first, ties
  // by _id) must come in the index's order, with the limit applied by SQLite (ferretdb-patches/metadata_multikey.go:
  // an `_id` beside other keys is indexed as the same SQL value the query sorts by). FerretDB 2 plans this its own way.
  // The build's SQLite driver keeps each connection's statements for the next run of the same SQL
  // (ferretdb-patches/sqlite_stmt_cache.go): what it must not change, with the same statements run again and again.
  it('answers as before when the same statements run again: other values, after an error, across a drop, beside an open cursor', async () => {
    const db = await ferret('statements');
    await withMongo(db.url, async (client) => {
      const docs = client.db(uniqueName('statements')).collection<{ _id: string; n: number }>('d');
      await docs.insertMany(Array.from({ length: 10 }, (_, n) => ({ _id: `d${n}`, n })));
      for (let n = 0; n < 10; n++) expect(await docs.findOne({ _id: `d${n}` })).toEqual({ _id: `d${n}`, n });
      await expect(docs.insertOne({ _id: 'd3', n: 99 })).rejects.toMatchObject({ code: 11000 });
      await docs.insertOne({ _id: 'd10', n: 10 });
      expect(await docs.updateOne({ _id: 'd10', n: 10 }, { $set: { n: 11 } })).toMatchObject({ modifiedCount: 1 });
      expect(await docs.findOne({ _id: 'd10' })).toEqual({ _id: 'd10', n: 11 });
      // A cursor read in batches while other statements of the same collection run.
      const cursor = docs.find({}, { batchSize: 2 }).sort({ _id: 1 });
      const seen = [(await cursor.next())!._id];
      expect(await docs.findOne({ _id: 'd5' })).toEqual({ _id: 'd5', n: 5 });
      for await (const doc of cursor) seen.push(doc._id);
      expect(seen).toHaveLength(11);
      // Dropped and made again under the same name: its statements run on the new table.
      await docs.drop();
      expect(await docs.findOne({ _id: 'd5' })).toBeNull();
      await docs.insertOne({ _id: 'd5', n: 50 });
      expect(await docs.findOne({ _id: 'd5' })).toEqual({ _id: 'd5', n: 50 });
    });
  });

  it('reads a page sorted on an index ending in _id in the index order, limited there, and says so in its explain', async () => {
    const db = await ferret('sorted');
    await withMongo(db.url, async (client) => {
      const threads = client.db(uniqueName('sorted')).collection<{ _id: string; to: string; created_at: Date }>('t');
      await threads.createIndex({ to: 1, created_at: -1, _id: -1, status: 1 }, { name: 'inbox' });
      await threads.createIndex({ handle: 1, _id: 1 }, { name: 'by_handle_id' });
      await threads.insertMany(
        Array.from({ length: 90 }, (_, i) => ({
          _id: `t${i}`,
          to: `u${i % 3}`,
          created_at: new Date(Math.floor(i / 9)),
        })),
      );
      for (const find of [
        () =>
          threads
            .find({ to: 'u1', status: { $in: ['pending'] } })
            .sort({ created_at: -1, _id: -1 })
            .limit(21),
        () => threads.find({ to: 'u1' }).sort({ created_at: 1, _id: 1 }).limit(21),
        () =>
          threads
            .find({ handle: 'h', _id: { $gt: 'h|', $lt: 'h|~' } } as never)
            .sort({ _id: -1 })
            .limit(5),
      ]) {
        const explain = await find().explain();
        expect([JSON.stringify(explain.queryPlanner), explain.sortPushdown, explain.limitPushdown]).toEqual([
          expect.not.stringMatching(/TEMP B-TREE/),
          true,
          true,
        ]);
      }
    });
  });
});

/** The pids of the FerretDB processes running on `dataDir` (by their command lines in /proc). */
async function ferretDbsOn(dataDir: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await fs.readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.split('\0').includes(`--state-dir=${dataDir}`)) pids.push(Number(entry));
  }
  return pids;
}

/** The pid of the process listening as FerretDB on `port` (found by its command line in /proc). */
async function pidOf(port: number): Promise<number> {
  for (const entry of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await fs.readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(`--listen-addr=127.0.0.1:${port}`)) return Number(entry);
  }
  throw new Error(`no process listens as FerretDB on port ${port}`);
}

async function cmdlineOf(port: number): Promise<string[]> {
  return (await fs.readFile(`/proc/${await pidOf(port)}/cmdline`, 'utf8')).split('\0');
}

async function environOf(port: number): Promise<Map<string, string>> {
  const environ = await fs.readFile(`/proc/${await pidOf(port)}/environ`, 'utf8');
  return new Map(
    environ
      .split('\0')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
}

describe('supervise', () => {
  it("holds its parent's event loop while a child slower than the grace stops, so an awaited stop() returns", async () => {
    // The built module in a process of its own: only there can the event loop run empty (jest's never does). Before,
    // that process exited with code 0 inside the awaited stop(), as jest did in its globalTeardown.
    const ready = path.join(tmpRoot, 'stubborn-ready');
    const script = `
      const { existsSync } = require('node:fs');
      const { spawn } = require('node:child_process');
      const { supervise } = require(${JSON.stringify(path.join(__dirname, '..', 'dist', 'scripts', 'local-services', 'child-process.js'))});
      const child = spawn('sh', ['-c', 'trap "" TERM; touch "$0"; exec sleep 30', ${JSON.stringify(ready)}], { stdio: 'ignore' });
      const stubborn = supervise(child, 'stubborn', { graceMs: 100 });
      const poll = setInterval(async () => {
        if (!existsSync(${JSON.stringify(ready)})) return;
        clearInterval(poll);
        await stubborn.stop();
        console.log(await stubborn.exited);
        process.exitCode = 3;
      }, 10);
    `;
    const node = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    node.stdout.on('data', (d) => (stdout += d));
    const [code] = await once(node, 'exit');
    expect({ code, stdout }).toEqual({ code: 3, stdout: 'stubborn exited on SIGKILL\n' });
  });
});

describe('startRedis on the real redis-server binary', () => {
  it('gives a private working Redis on its own port, and kill() makes PING fail', async () => {
    const redis = await startRedis({ log: noLog });
    cleanups.push(redis.stop);
    expect(redis.url).toBe(`redis://127.0.0.1:${redis.port}`);
    expect(redis.port).not.toBe(6379);
    expect(await redisPing(redis.url)).toBe('PONG');

    await redis.kill();
    await expect(redisPing(redis.url)).rejects.toThrow();
  });
});

describe('ensureRedis', () => {
  it('leaves an answering Redis alone', async () => {
    const lines: string[] = [];
    const redis = await ensureRedis(testRedisUrl(), (line) => lines.push(line));
    expect(redis.started).toBe(false);
    expect(lines).toEqual([]);
    await redis.stop(); // a no-op: it did not start this one
    expect(await redisPing(testRedisUrl())).toBe('PONG');
  });

  it('starts redis-server on a loopback port where nothing listens, and stop() stops it', async () => {
    const port = await findFreePort();
    const url = `redis://127.0.0.1:${port}`;
    const lines: string[] = [];
    const redis = await ensureRedis(url, (line) => lines.push(line));
    cleanups.push(redis.stop);

    expect(redis.started).toBe(true);
    expect(lines).toEqual([`Starting redis-server on 127.0.0.1:${port}…`]);
    expect(await redisPing(url)).toBe('PONG');

    await redis.stop();
    await expect(redisPing(url)).rejects.toThrow();
  });

  it('starts the redis-server it started again, on the same port and data, when it is killed; and not once stopped', async () => {
    const url = `redis://127.0.0.1:${await findFreePort()}`;
    const dataDir = path.join(tmpRoot, 'redis-kept');
    const lines: string[] = [];
    const redis = await ensureRedis(url, noLog, { dataDir });
    if (!redis.started) throw new Error('expected a redis-server to be started');
    const kept = keepRunning(redis, redis.startAgain, {
      name: 'redis-server',
      where: redis.where,
      log: (line) => lines.push(line),
      onGiveUp: noLog,
    });
    cleanups.push(kept.stop);
    const pid = await redisPid(url);
    // Acknowledged writes, the last just before the kill: a queue's jobs are such writes.
    await withRedis(url, async (client) => {
      await Promise.all(Array.from({ length: 100 }, (_, i) => client.rpush('jobs', `job ${i}`)));
      await client.set('last', 'written');
    });

    process.kill(pid, 'SIGKILL');
    await waitUntil(async () => lines.length === 2, 'redis-server to be started again', 10_000);
    expect(lines).toEqual([
      `redis-server exited on SIGKILL; starting redis-server again on ${redis.where} (try 1 of 6)…`,
      `redis-server is running again on ${redis.where}`,
    ]);
    expect(await redisPid(url)).not.toBe(pid);
    await withRedis(url, async (client) => {
      expect(await client.llen('jobs')).toBe(100);
      expect(await client.get('last')).toBe('written');
    });

    await kept.stop();
    await expect(redisPing(url)).rejects.toThrow();
    // And the next start on the same data has them too.
    const again = await ensureRedis(url, noLog, { dataDir });
    cleanups.push(again.stop);
    await withRedis(url, async (client) => expect(await client.lrange('jobs', -1, -1)).toEqual(['job 99']));
  });

  it('names REDIS_URL and hides the password when it can neither reach nor start Redis', async () => {
    const emptyPath = await fs.mkdtemp(path.join(tmpRoot, 'no-redis-server-'));
    const failure = await ensureRedis('redis://:secretpw@127.0.0.1:1', noLog, { path: emptyPath }).catch(
      (err: unknown) => err as Error,
    );

    expect(failure).toBeInstanceOf(Error);
    const message = (failure as Error).message;
    expect(message).toMatch(/^REDIS_URL: cannot reach redis:\/\/:\*\*\*@127\.0\.0\.1:1 \(/);
    expect(message).toContain('redis-server is not on PATH');
    expect(message).not.toContain('secretpw');
  });
});

describe('test-env helpers', () => {
  it('hands out the URLs global setup started, and unique names that are valid database names', async () => {
    expect(await withMongo(testMongoUrl(), (client) => client.db('admin').command({ ping: 1 }))).toMatchObject({
      ok: 1,
    });
    expect(await redisPing(testRedisUrl())).toBe('PONG');

    const names = [uniqueName('threads'), uniqueName('threads'), uniqueName('a.b/c:d-e'.repeat(10))];
    expect(new Set(names).size).toBe(3);
    for (const name of names) expect(name).toMatch(/^[A-Za-z0-9_]{1,38}$/);
    expect(names[0]).toMatch(/^threads_/);
  });
});
