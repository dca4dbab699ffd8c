// Bench: the relay as its own process, started the way `npm start` starts it (dist/scripts/cli.js start), and the
// CPU time of the relay and FerretDB read from /proc, so a phase counts the work its requests leave behind.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { findFreePort } from './local-services/ports';

export interface RelayProcess {
  url: string;
  pid: number;
  adminKey: string;
  stop(): Promise<void>;
}

export interface RelayProcessOptions {
  mongodbUrl: string;
  database: string;
  redisUrl: string;
  prefix: string;
  keyPepper: string;
  /** Extra environment (Slack settings, roles). */
  env?: Record<string, string>;
}

/**
 * The Node flags the relay runs under, from cli.js's `#!` line (`npm start` and `handoff-relay start` both run it
 * through that line), so a bench relay runs under the flags users' relays run under.
 */
export function relayNodeFlags(): string[] {
  const shebang = readFileSync(join(__dirname, 'cli.js'), 'utf8').split('\n', 1)[0]!;
  const match = /^#!\/usr\/bin\/env -S node((?:\s+--\S+)*)\s*$/.exec(shebang);
  if (!match) throw new Error(`cli.js does not start with "#!/usr/bin/env -S node [flags]": ${shebang}`);
  return match[1]!.split(/\s+/).filter(Boolean);
}

/** Relay processes the bench started that are still running: a bench that is killed stops them (stopRelaysNow). */
const running = new Set<ChildProcess>();

/** Counts `child` among the relays stopRelaysNow stops, until it exits. */
export function trackRelay(child: ChildProcess): void {
  running.add(child);
  child.once('exit', () => running.delete(child));
}

/**
 * Sends SIGTERM to every relay the bench started and that still runs. For a bench that is told to stop (SIGTERM from
 * `kill` or a CI timeout reaches the bench alone, not its process group) or exits on an error: a relay left running
 * would go on loading the box and skew whatever is measured next. Synchronous, so it also runs on `exit`.
 */
export function stopRelaysNow(): void {
  for (const child of running) child.kill('SIGTERM');
}

/**
 * How a started relay says it serves (start-command.ts): its own line, not the "Debugger listening on" that --inspect
 * in BENCH_RELAY_NODE_OPTIONS prints first.
 */
export const RELAY_READY_LINE = 'handoff-relay listening on';

/** Starts `dist/scripts/cli.js start` (every role, under the flags of its `#!` line, as `npm start`) on the bench's servers; resolves once it listens. */
export async function startRelayProcess(opts: RelayProcessOptions): Promise<RelayProcess> {
  const port = await findFreePort();
  const adminKey = `hra_${randomBytes(24).toString('base64url')}`;
  // Node flags for the relay, e.g. BENCH_RELAY_NODE_OPTIONS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile it
  // during the bench (flags NODE_OPTIONS refuses, like --cpu-prof, go on the command line).
  const nodeFlags = (process.env.BENCH_RELAY_NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean);
  const child: ChildProcess = spawn(
    process.execPath,
    [...relayNodeFlags(), ...nodeFlags, join(__dirname, 'cli.js'), 'start'],
    {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        PORT: String(port),
        MONGODB_URL: opts.mongodbUrl,
        MONGODB_DB: opts.database,
        REDIS_URL: opts.redisUrl,
        RELAY_QUEUE_PREFIX: opts.prefix,
        RELAY_ADMIN_KEY: adminKey,
        RELAY_KEY_PEPPER: opts.keyPepper,
        // The limiter still runs (its Redis call is part of every request); only its ceiling is lifted.
        RELAY_RATE_LIMIT_PER_MINUTE: '1000000',
        // LOG_LEVEL is left at what users run (info: a line per request and per change); stdout goes to /dev/null.
        // e.g. BENCH_POLICY_FILE=scripts/bench-policy-50.yaml to measure what evaluating a policy adds.
        ...(process.env.BENCH_POLICY_FILE ? { RELAY_POLICY_FILE: process.env.BENCH_POLICY_FILE } : {}),
        ...opts.env,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  trackRelay(child);
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr = (stderr + d).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 120_000;
  while (!stderr.includes(RELAY_READY_LINE)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the relay did not start:\n${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    adminKey,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await exited;
    },
  };
}

const CLOCK_TICKS_PER_SECOND = 100;

/** User + system CPU of a process so far, in ms (0 when it is gone). */
export async function processCpuMs(pid: number): Promise<number> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/**
 * Waits until `pids` together use under `idleMs` of CPU in a second (at most `capMs`), so that work a phase's set-up
 * left behind (SQLite's checkpoint of a bulk seed, the collectors) is not counted in the next measurement; how long it
 * waited.
 */
export async function untilIdle(pids: number[], idleMs = 30, capMs = 30_000): Promise<number> {
  const started = Date.now();
  const total = async () => (await Promise.all(pids.map(processCpuMs))).reduce((a, b) => a + b, 0);
  while (Date.now() - started < capMs) {
    const before = await total();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    if ((await total()) - before < idleMs) break;
  }
  return Date.now() - started;
}

/** CPU ms of several processes between `start()` and each read: summed (`read`), or each (`readEach`, in `pids` order). */
export async function cpuMeter(
  pids: readonly number[],
): Promise<{ read(): Promise<number>; readEach(): Promise<number[]> }> {
  const each = () => Promise.all(pids.map(processCpuMs));
  const start = await each();
  const readEach = async () => (await each()).map((ms, i) => ms - start[i]!);
  return { read: async () => (await readEach()).reduce((a, b) => a + b, 0), readEach };
}

/** FerretDB's commands by name, and its find cursors by collection (`find:threads`), from its Prometheus metrics. */
async function ferretCounts(metricsUrl: string): Promise<Map<string, number>> {
  const text = await (await fetch(metricsUrl)).text();
  const counts = new Map<string, number>();
  const add = (key: string, value: number) => counts.set(key, (counts.get(key) ?? 0) + value);
  for (const line of text.split('\n')) {
    // Values past a million come as 1.234567e+06.
    const request = /^ferretdb_client_requests_total\{command="(\w+)",opcode="OP_MSG"\} (\S+)/.exec(line);
    if (request) add(request[1]!, Number(request[2]));
    const cursor = /^ferretdb_cursors_created_total\{collection="([^"]+)",/.exec(line);
    if (cursor) add(`find:${cursor[1]}`, Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return counts;
}

export interface CommandCounts {
  /** Every command but the driver's own (hello, endSessions, ping). */
  total: number;
  /** Commands by name, and finds by collection (`find:threads`), most first. */
  byKind: Array<[string, number]>;
}

const DRIVER_COMMANDS = new Set([
  'hello',
  'isMaster',
  'ismaster',
  'endSessions',
  'ping',
  'buildInfo',
  'getParameter',
  'unknown',
]);

/** FerretDB's command counts between `start()` and each `read()`; counts do not depend on the machine's load. */
export async function commandMeter(metricsUrl: string): Promise<{ read(): Promise<CommandCounts> }> {
  const start = await ferretCounts(metricsUrl);
  return {
    read: async () => {
      const now = await ferretCounts(metricsUrl);
      const byKind = [...now]
        .map(([key, n]): [string, number] => [key, n - (start.get(key) ?? 0)])
        .filter(([, n]) => n > 0);
      const total = byKind
        .filter(([key]) => !key.startsWith('find:') && !DRIVER_COMMANDS.has(key))
        .reduce((sum, [, n]) => sum + n, 0);
      return { total, byKind: byKind.filter(([key]) => !DRIVER_COMMANDS.has(key)).sort((a, b) => b[1] - a[1]) };
    },
  };
}

/**
 * A process's RSS and its two parts, in MiB: anonymous memory (its own: heap, stacks, buffers) and file-backed pages
 * (mostly the node binary's code, shared with every node process on the machine); all 0 when the process is gone.
 */
export async function readMemoryMiB(pid: number): Promise<{ rss: number; anon: number; file: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)\\s+kB`, 'm').exec(status)?.[1] ?? 0) / 1024;
  return { rss: field('VmRSS'), anon: field('RssAnon'), file: field('RssFile') };
}

export async function readRssMiB(pid: number): Promise<number> {
  return (await readMemoryMiB(pid)).rss;
}
