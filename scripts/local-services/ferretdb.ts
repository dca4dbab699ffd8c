// Local services: runs FerretDB (MongoDB wire protocol on SQLite) on loopback for `start`, tests and benchmarks.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as net from 'node:net';
import { availableParallelism } from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { MongoClient } from 'mongodb';
import { readTail, supervise, waitUntilReady, type Log } from './child-process';
import { ensureFerretDbBinary } from './ferretdb-build';
import { onFreePort } from './ports';

const FERRETDB_READY_TIMEOUT_MS = 20_000;

export interface RunningFerretDb {
  url: string;
  port: number;
  pid: number;
  /** Its Prometheus metrics (`/debug/metrics`), when started with `debugPort`. */
  metricsUrl: string | null;
  dataDir: string;
  /** Resolves, with how, once the FerretDB process has exited. */
  exited: Promise<string>;
  stop(): Promise<void>;
}

/**
 * `debugPort`: serve FerretDB's debug HTTP listener (metrics) there; off by default. A FerretDB left running on the
 * same data by a process that was killed without stopping it (SIGKILL, the OOM killer) is stopped first; one that a
 * live process runs on the same data is left alone and the start refused (DataDirInUseError).
 */
export async function startFerretDb(opts: {
  dataDir: string;
  port?: number;
  debugPort?: number;
  /** Another FerretDB binary than the relay's build (the engine bench compares builds); not checked. */
  binary?: string;
  log: Log;
}): Promise<RunningFerretDb> {
  const bin = opts.binary ?? (await ensureFerretDbBinary(opts.log));
  const dataDir = path.resolve(opts.dataDir);
  await fs.mkdir(dataDir, { recursive: true });
  await claimDataDir(dataDir, opts.log);
  let running: RunningFerretDb;
  try {
    running = await onFreePort(opts.port, (port) => startFerretDbOnce(bin, dataDir, port, opts.debugPort));
  } catch (error) {
    await releaseDataDir(dataDir, (note) => note.pid === undefined);
    throw error;
  }
  await placeNote(dataDir, { pid: running.pid, parent: process.pid, port: running.port });
  return {
    ...running,
    stop: async () => {
      await running.stop();
      await releaseDataDir(dataDir, (note) => note.pid === running.pid);
    },
  };
}

/**
 * Beside the data: the running FerretDB's pid and port and the pid of the process that started it (and stops it on
 * exit), written before FerretDB starts (without its pid) so that two starts on the same data cannot both go ahead.
 * A process killed with SIGKILL never runs its exit handlers, so its FerretDB outlives it, holding a port and
 * ~40 MiB; the next start on the same data finds the note and stops it.
 */
export const PID_FILE = 'ferretdb.pid';

interface PidNote {
  /** The FerretDB's; absent while it starts. */
  pid?: number;
  /** The process that started it. */
  parent: number;
  port?: number;
}

/** A start on data that another live process runs (or is starting) FerretDB on. */
export class DataDirInUseError extends Error {
  constructor(dataDir: string, note: PidNote) {
    const holder = note.pid
      ? `process ${note.parent} runs FerretDB (pid ${note.pid}${note.port ? `, mongodb://127.0.0.1:${note.port}/` : ''}) on it`
      : `process ${note.parent} is starting FerretDB on it`;
    super(
      `The embedded store in ${dataDir} is in use: ${holder}. Two FerretDBs on the same data would each serialise ` +
        "only their own writes, so one could overwrite the other's. Stop that relay first, or give this one its own " +
        "RELAY_DATA_DIR; a second process of the same relay, with the same settings (Slack's included), can share " +
        'that store with MONGODB_URL' +
        (note.port ? `=mongodb://127.0.0.1:${note.port}/` : ' set to its address') +
        ` and stops serving when that one stops. If process ${note.parent} is not a relay, remove ` +
        `${path.join(dataDir, PID_FILE)} and start again.`,
    );
    this.name = 'DataDirInUseError';
  }
}

/**
 * One FerretDB per data directory, as mongod and PostgreSQL allow one server per data directory: two on the same
 * SQLite files would each take their own collection locks (ferretdb-patches/handler_write_locks.go serialises a
 * conditional write's read and write within one FerretDB process only). The note is created exclusively; a note whose
 * starter is gone is stale (its FerretDB, if still running, is stopped); this process's own note is a restart of its
 * FerretDB (keep-running.ts) unless that FerretDB still runs.
 */
async function claimDataDir(dataDir: string, log: Log): Promise<void> {
  const file = path.join(dataDir, PID_FILE);
  for (;;) {
    if (await placeNote(dataDir, { parent: process.pid }, { exclusive: true })) return;
    const noted = await readPidFile(dataDir);
    if (noted && isAlive(noted.parent)) {
      const stillRuns = noted.pid !== undefined && (await runsOn(noted.pid, dataDir));
      if (noted.parent !== process.pid || stillRuns) throw new DataDirInUseError(dataDir, noted);
    } else if (noted?.pid !== undefined && (await runsOn(noted.pid, dataDir))) {
      await stopLeftBehind(dataDir, noted as Required<PidNote>, log);
    }
    // Stale (its starter is gone, or this process's FerretDB exited), or unreadable: taken over.
    await fs.rm(file, { force: true });
  }
}

/** Removes the note when it is still the one `isOurs` recognises (a later start on the same data may have its own). */
async function releaseDataDir(dataDir: string, isOurs: (note: PidNote) => boolean): Promise<void> {
  const noted = await readPidFile(dataDir);
  if (noted && noted.parent === process.pid && isOurs(noted))
    await fs.rm(path.join(dataDir, PID_FILE), { force: true });
}

/**
 * Puts the note in place with its whole content at once (a reader never sees it half written): `exclusive`, only
 * where there is none (false if there is one); else replacing it.
 */
async function placeNote(dataDir: string, note: PidNote, { exclusive = false } = {}): Promise<boolean> {
  const file = path.join(dataDir, PID_FILE);
  const written = `${file}.${process.pid}`;
  await fs.writeFile(written, `${JSON.stringify(note)}\n`);
  try {
    await (exclusive ? fs.link(written, file) : fs.rename(written, file));
    return true;
  } catch (error) {
    if (exclusive && (error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await fs.rm(written, { force: true });
  }
}

/** Whether `pid` is a FerretDB on `dataDir` (by its command line; false without /proc to tell). */
async function runsOn(pid: number, dataDir: string): Promise<boolean> {
  const cmdline = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  return cmdline.split('\0').includes(`--state-dir=${dataDir}`);
}

async function stopLeftBehind(dataDir: string, noted: Required<PidNote>, log: Log): Promise<void> {
  const { pid, parent } = noted;
  log(`stopping FerretDB (pid ${pid}) left running on ${dataDir} by a process that was killed (pid ${parent})…`);
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + 5_000;
  while (await runsOn(pid, dataDir)) {
    if (Date.now() > deadline) {
      process.kill(pid, 'SIGKILL');
      break;
    }
    await sleep(50);
  }
}

async function readPidFile(dataDir: string): Promise<PidNote | undefined> {
  try {
    const { pid, parent, port } = JSON.parse(await fs.readFile(path.join(dataDir, PID_FILE), 'utf8')) as {
      pid?: unknown;
      parent?: unknown;
      port?: unknown;
    };
    if (!Number.isInteger(parent)) return undefined;
    return {
      parent: parent as number,
      ...(Number.isInteger(pid) ? { pid: pid as number } : {}),
      ...(Number.isInteger(port) ? { port: port as number } : {}),
    };
  } catch {
    return undefined; // missing or unreadable: nothing to go on
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // alive, someone else's
  }
}

async function startFerretDbOnce(
  bin: string,
  dataDir: string,
  port: number,
  debugPort?: number,
): Promise<RunningFerretDb> {
  const logFile = path.join(dataDir, 'ferretdb.log');
  const args = [
    '--handler=sqlite',
    `--sqlite-url=${sqliteUrl(dataDir)}`,
    `--state-dir=${dataDir}`,
    `--listen-addr=127.0.0.1:${port}`,
    // No HTTP debug listener unless asked for (it defaults to a fixed 127.0.0.1:8088).
    debugPort ? `--debug-addr=127.0.0.1:${debugPort}` : '--debug-addr=-',
    '--telemetry=disable',
  ];
  const logFd = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(bin, args, { cwd: dataDir, env: ferretDbEnv(), stdio: ['ignore', logFd, logFd] });
  } finally {
    closeSync(logFd); // the child holds its own copy
  }
  const proc = supervise(child, 'FerretDB');
  const url = `mongodb://127.0.0.1:${port}/`;

  try {
    await waitUntilReady(
      proc,
      FERRETDB_READY_TIMEOUT_MS,
      () => pingMongo(port, url),
      async () => {
        const tail = await readTail(logFile);
        return `see ${logFile}${tail ? `:\n${tail}` : ''}`;
      },
    );
  } catch (err) {
    await proc.stop();
    throw err;
  }
  return {
    url,
    port,
    pid: child.pid!,
    dataDir,
    metricsUrl: debugPort ? `http://127.0.0.1:${debugPort}/debug/metrics` : null,
    exited: proc.exited,
    stop: proc.stop,
  };
}

/**
 * The SQLite databases FerretDB keeps in `dataDir`, in WAL mode (FerretDB's default) with synchronous=NORMAL: a
 * commit is written to the WAL but not fsynced; the WAL is synced at each checkpoint. A write FerretDB acknowledged
 * survives FerretDB or the relay being killed (it is in the file, test/local-services.test.ts kills FerretDB to
 * show it); only a power loss or a kernel crash can take back the last commits before a checkpoint, as MongoDB's
 * default write concern can (its journal is synced every 100 ms, not per write). SQLite's default (FULL) syncs every
 * commit, and FerretDB on SQLite runs one write at a time, so NORMAL about halves a create's latency and FerretDB's
 * CPU for it (docs/benchmarks.md, "Measurements behind the defaults").
 *
 * FerretDB's write transactions (an insert's, an update's) begin as writers (`_txlock=immediate`: BEGIN IMMEDIATE,
 * which waits its turn under the busy timeout). Begun deferred, as by default, one now and then failed at once with
 * "database is locked" (SQLITE_BUSY) instead of waiting: an update of a text-indexed collection (the web inbox's
 * search words, written on every event) beside 15 other writers, once or twice in 30 s on a loaded box; none since.
 */
export function sqliteUrl(dataDir: string): string {
  return `${pathToFileURL(dataDir + path.sep).href}?_pragma=synchronous(normal)&_txlock=immediate`;
}

/**
 * Go's collector at GOGC=200 (unless GOGC is set): every FerretDB command allocates heavily, and its CPU per command
 * is what bounds the embedded store. 200 trades a few MiB of RSS for less CPU per command; 400 saved little more for
 * three times the memory (docs/benchmarks.md, "Measurements behind the defaults").
 */
const DEFAULT_GOGC = '200';

/**
 * Go's scheduler at half the machine's cores (at least one) unless GOMAXPROCS is set: the relay beside it needs a core
 * of its own, and on two cores Go's idle threads spinning for work cost FerretDB a quarter of its CPU per command
 * (a find + update + insert loop: 1.87-2.10 -> 1.46-1.57 ms at one client, and more commands a second at one and four
 * clients; docs/design-decisions.md).
 */
export function defaultGoMaxProcs(cores = availableParallelism()): string {
  return String(Math.max(1, Math.floor(cores / 2)));
}

/** The parent's environment without FERRETDB_* variables (which would add listeners or setup), with GOGC and GOMAXPROCS. */
export function ferretDbEnv(parent: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { DO_NOT_TRACK: '1', GOGC: DEFAULT_GOGC, GOMAXPROCS: defaultGoMaxProcs() };
  for (const [key, value] of Object.entries(parent)) {
    if (!key.startsWith('FERRETDB_')) env[key] = value;
  }
  return env;
}

async function pingMongo(port: number, url: string): Promise<void> {
  await tcpConnect('127.0.0.1', port, 1_000);
  const client = new MongoClient(url, {
    directConnection: true,
    serverSelectionTimeoutMS: 1_000,
    connectTimeoutMS: 1_000,
  });
  try {
    await client.db('admin').command({ ping: 1 });
  } finally {
    await client.close();
  }
}

function tcpConnect(host: string, port: number, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`TCP connect to ${host}:${port} timed out`)));
    socket.once('connect', () => {
      socket.end();
      resolve();
    });
    socket.once('error', reject);
  });
}
