// Local services: runs FerretDB (MongoDB wire protocol on SQLite) on loopback for `start`, tests and benchmarks.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as net from 'node:net';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { MongoClient } from 'mongodb';
import { readTail, supervise, waitUntilReady, type Log } from './child-process';
import { ensureFerretDbBinary } from './ferretdb-build';
import { onFreePort } from './ports';

const FERRETDB_READY_TIMEOUT_MS = 20_000;

export interface RunningFerretDb {
  url: string;
  port: number;
  /** Its Prometheus metrics (`/debug/metrics`), when started with `debugPort`. */
  metricsUrl: string | null;
  dataDir: string;
  /** Resolves, with how, once the FerretDB process has exited. */
  exited: Promise<string>;
  stop(): Promise<void>;
}

/** `debugPort`: serve FerretDB's debug HTTP listener (metrics) there; off by default. */
export async function startFerretDb(opts: { dataDir: string; port?: number; debugPort?: number; log: Log }): Promise<RunningFerretDb> {
  const bin = await ensureFerretDbBinary(opts.log);
  const dataDir = path.resolve(opts.dataDir);
  await fs.mkdir(dataDir, { recursive: true });
  return onFreePort(opts.port, (port) => startFerretDbOnce(bin, dataDir, port, opts.debugPort));
}

async function startFerretDbOnce(bin: string, dataDir: string, port: number, debugPort?: number): Promise<RunningFerretDb> {
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
    await waitUntilReady(proc, FERRETDB_READY_TIMEOUT_MS, () => pingMongo(port, url), async () => {
      const tail = await readTail(logFile);
      return `see ${logFile}${tail ? `:\n${tail}` : ''}`;
    });
  } catch (err) {
    await proc.stop();
    throw err;
  }
  return { url, port, dataDir, metricsUrl: debugPort ? `http://127.0.0.1:${debugPort}/debug/metrics` : null, exited: proc.exited, stop: proc.stop };
}

/**
 * The SQLite databases FerretDB keeps in `dataDir`, in WAL mode (FerretDB's default) with synchronous=NORMAL: a
 * commit is written to the WAL but not fsynced; the WAL is synced at each checkpoint. A write FerretDB acknowledged
 * survives FerretDB or the relay being killed (it is in the file, test/local-services.test.ts kills FerretDB to
 * show it); only a power loss or a kernel crash can take back the last commits before a checkpoint, as MongoDB's
 * default write concern can (its journal is synced every 100 ms, not per write). SQLite's default (FULL) syncs every
 * commit, and FerretDB on SQLite runs one write at a time: measured on the 2-core reference box, a create
 * (`message/send`, c=1) took 14.2 ms with FULL and 6.8 ms with NORMAL, FerretDB's CPU per create 4.7 → 2.5 ms.
 */
export function sqliteUrl(dataDir: string): string {
  return `${pathToFileURL(dataDir + path.sep).href}?_pragma=synchronous(normal)`;
}

/**
 * Go's collector at GOGC=200 (unless GOGC is set): every FerretDB command allocates heavily, and its CPU per command
 * is what bounds the embedded store. Measured on the 2-core reference box (20k 5 KB documents, 1,500 of each, three
 * rounds): FerretDB CPU per `_id` find 0.81 → 0.66 ms, per insert 0.75 → 0.64, per replace 1.66 → 1.45, for 4 MiB
 * more RSS (GOGC=400: 0.63 / 0.57 / 1.36 ms for 12 MiB more).
 */
const DEFAULT_GOGC = '200';

/** The parent's environment without FERRETDB_* variables (which would add listeners or setup), with GOGC. */
export function ferretDbEnv(parent: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { DO_NOT_TRACK: '1', GOGC: DEFAULT_GOGC };
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
