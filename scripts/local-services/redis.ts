// Local services: a Redis on REDIS_URL (a loopback redis-server is started when refused), or a private one.
import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import * as net from 'node:net';
import * as os from 'node:os';
import { Redis } from 'ioredis';
import { errorMessage, findOnPath, keepTail, supervise, waitUntilReady, type Log } from './child-process';
import type { Restartable } from './keep-running';
import { onFreePort } from './ports';

const REDIS_READY_TIMEOUT_MS = 10_000;

export interface EnsureRedisOptions {
  /** PATH-style directory list searched for `redis-server`; defaults to process.env.PATH. */
  path?: string;
  /**
   * Where a redis-server started here keeps its append-only file, so the queues' jobs (deliveries waiting, webhook
   * retries hours away) survive it being killed or restarted. Unset: it keeps nothing on disk.
   */
  dataDir?: string;
}

/** An answering Redis left alone, or the redis-server started for REDIS_URL (with how to start it again there). */
export type EnsuredRedis =
  | { started: false; stop(): Promise<void> }
  | {
      started: true;
      where: string;
      exited: Promise<string>;
      stop(): Promise<void>;
      startAgain(): Promise<Restartable>;
    };

export async function ensureRedis(url: string, log: Log, opts: EnsureRedisOptions = {}): Promise<EnsuredRedis> {
  const target = parseRedisUrl(url);
  const unreachable = (reason: string) => new Error(`REDIS_URL: cannot reach ${target.safeUrl} (${reason})`);

  const failure = await pingRedis(url);
  if (!failure) return { started: false, stop: async () => {} };

  const reason = redact(failure.reason, target.password);
  if (!failure.refused) throw unreachable(reason);
  if (!target.loopback) throw unreachable(`${reason}; not a loopback address, so no local redis-server is started`);
  const redisServer = await findOnPath('redis-server', opts.path ?? process.env.PATH);
  if (!redisServer) throw unreachable(`${reason}; redis-server is not on PATH to start one`);

  log(`Starting redis-server on ${target.host}:${target.port}…`);
  try {
    const start = () => startRedisServer(redisServer, target.host, target.port, url, opts.dataDir);
    const redis = await start();
    return {
      started: true,
      where: `${target.host}:${target.port}`,
      exited: redis.exited,
      stop: redis.stop,
      startAgain: start,
    };
  } catch (err) {
    throw unreachable(`${reason}; starting redis-server failed: ${redact(errorMessage(err), target.password)}`);
  }
}

export async function startRedis(opts: {
  port?: number;
  log: Log;
}): Promise<{ url: string; port: number; stop(): Promise<void>; kill(): Promise<void> }> {
  const redisServer = await findOnPath('redis-server', process.env.PATH);
  if (!redisServer) throw new Error('redis-server is not on PATH (apt-get install -y redis-server)');

  return onFreePort(opts.port, async (port) => {
    const url = `redis://127.0.0.1:${port}`;
    const redis = await startRedisServer(redisServer, '127.0.0.1', port, url);
    opts.log(`Started a private redis-server on 127.0.0.1:${port}`);
    return { url, port, ...redis };
  });
}

async function startRedisServer(bin: string, host: string, port: number, url: string, dataDir?: string) {
  const args = ['--port', String(port), '--bind', host, '--save', '', '--daemonize', 'no'];
  if (dataDir) {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    // Every write is in the append-only file, fsynced, before Redis answers it: a killed redis-server (or machine)
    // comes back with every job it had acknowledged. Not `everysec`: while its last fsync is still running (a busy
    // disk), Redis answers writes it has not even written yet, and a SIGKILL then lost 99 of 100 acknowledged jobs.
    // No RDB snapshots: the AOF is the one copy.
    args.push('--dir', dataDir, '--appendonly', 'yes', '--appendfsync', 'always');
  } else {
    args.push('--appendonly', 'no');
  }
  // cwd in the data dir or the temp dir: whatever Redis might write never lands in the repository.
  const child = spawn(bin, args, { cwd: dataDir ?? os.tmpdir(), stdio: ['ignore', 'pipe', 'pipe'] });
  const output = keepTail(child);
  const proc = supervise(child, 'redis-server');
  try {
    await waitUntilReady(
      proc,
      REDIS_READY_TIMEOUT_MS,
      async () => {
        const failure = await pingRedis(url);
        if (failure) throw new Error(failure.reason);
      },
      async () => output(),
    );
  } catch (err) {
    await proc.stop();
    throw err;
  }
  return { exited: proc.exited, stop: proc.stop, kill: proc.kill };
}

/** undefined when the server answers PING; otherwise why not, and whether the port refused. */
async function pingRedis(url: string): Promise<{ reason: string; refused: boolean } | undefined> {
  let lastError: (Error & { code?: string }) | undefined;
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 1_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  // connect() only rejects with "Connection is closed."; the socket error arrives here.
  client.on('error', (err: Error) => {
    lastError = err;
  });
  try {
    await client.connect();
    const reply = await client.ping();
    return reply === 'PONG' ? undefined : { reason: `PING answered ${reply}`, refused: false };
  } catch (err) {
    const cause = lastError ?? (err as Error & { code?: string });
    return { reason: cause.message, refused: cause.code === 'ECONNREFUSED' };
  } finally {
    // disconnect() on an already closed client arms a 2 s timer that keeps the process alive.
    if (client.status !== 'end') client.disconnect();
  }
}

function parseRedisUrl(url: string) {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error('REDIS_URL: not a valid URL (expected redis://[[user]:password@]host[:port][/db])');
  }
  const password = decodeURIComponent(parsed.password);
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  const safe = new URL(url);
  if (safe.password) safe.password = '***';
  return {
    host: host === 'localhost' ? '127.0.0.1' : host,
    port: Number(parsed.port || 6379),
    password,
    safeUrl: safe.toString(),
    loopback: parsed.protocol === 'redis:' && isLoopback(host),
  };
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || (net.isIPv4(host) && host.startsWith('127.'));
}

function redact(text: string, secret: string): string {
  return secret ? text.split(secret).join('***') : text;
}
