// Local services for development, tests and CI: builds and runs FerretDB (MongoDB wire protocol on
// SQLite) and makes sure a Redis answers, all on loopback.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { constants as fsConstants, openSync, closeSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { MongoClient } from 'mongodb';

export type Log = (line: string) => void;

const FERRETDB_MODULE = 'github.com/FerretDB/FerretDB';
const FERRETDB_VERSION = 'v1.24.2';
/** What our build reports as its version: 1.24.2 with the `_id` index patch below (an unpatched binary is rebuilt). */
const FERRETDB_BUILD = `${FERRETDB_VERSION}-handoff-relay.1`;
/**
 * FerretDB 1.24's SQLite backend looks `_id` up as `_ferretdb_sjson->'$._id'` while its unique `_id` index is on
 * `_ferretdb_sjson->"_id"`: SQLite matches index expressions by their text, so every `_id` find, update and delete
 * read the whole table (a lookup of a missing `_id` in 1,000 threads took ~40 ms, growing with the table). The
 * same path written the index's way lets SQLite use the index.
 */
/** Installed under a name of its own, so a plain FerretDB someone else installed is left alone. */
const FERRETDB_BINARY = 'ferretdb-handoff-relay';
const FERRETDB_ID_PATCH = {
  file: path.join('internal', 'backends', 'sqlite', 'metadata', 'metadata.go'),
  from: `IDColumn = DefaultColumn + "->'$._id'"`,
  to: `IDColumn = DefaultColumn + "->'_id'"`,
};
const FERRETDB_READY_TIMEOUT_MS = 20_000;
const REDIS_READY_TIMEOUT_MS = 10_000;
const STOP_GRACE_MS = 5_000;

export async function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0 }, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

// ---------------------------------------------------------------------------------------------
// FerretDB binary

let ferretDbBinary: Promise<string> | undefined;

/**
 * Absolute path to a working FerretDB 1.x binary, building 1.24.2 with Go on first use.
 *
 * A plain `go install github.com/FerretDB/FerretDB/cmd/ferretdb@v1.24.2` produces a binary that
 * panics at start-up ("Invalid build/version/version.txt file content"): the module zip lacks that
 * generated file. So every candidate is checked with `--version`, and the build copies the module
 * source, writes version.txt (as FerretDB's own message asks) and runs `go build`.
 */
export async function ensureFerretDbBinary(log: Log): Promise<string> {
  ferretDbBinary ??= locateOrBuildFerretDb(log).catch((err: unknown) => {
    ferretDbBinary = undefined; // let a later call try again
    throw err;
  });
  return ferretDbBinary;
}

async function locateOrBuildFerretDb(log: Log): Promise<string> {
  const go = await findGo();
  const goDirs = go ? await goInstallDirs(go) : [];
  const candidates = unique([
    await findOnPath(FERRETDB_BINARY, process.env.PATH),
    ...goDirs.map((dir) => path.join(dir, FERRETDB_BINARY)),
    `/root/go/bin/${FERRETDB_BINARY}`,
  ]);

  const rejected: string[] = [];
  for (const candidate of candidates) {
    if (!(await isExecutable(candidate))) continue;
    const problem = await checkFerretDb(candidate);
    if (!problem) return candidate;
    rejected.push(`${candidate}: ${problem}`);
  }

  if (!go) {
    throw new Error(
      'FerretDB is not installed and `go` was not found: install Go 1.24+ (https://go.dev/dl/) ' +
        'or set MONGODB_URL to a MongoDB server.' +
        (rejected.length ? `\nUnusable ferretdb binaries: ${rejected.join('; ')}` : ''),
    );
  }

  log(
    `Installing FerretDB ${FERRETDB_VERSION.slice(1)} with Go (first run only, takes a few minutes)…` +
      (rejected.length ? ` (skipping ${rejected.join('; ')})` : ''),
  );
  const installDir = goDirs[0];
  if (!installDir) throw new Error(`\`${go} env GOBIN GOPATH\` gave no install directory`);
  return buildFerretDb(go, installDir);
}

async function buildFerretDb(go: string, installDir: string): Promise<string> {
  const workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ferretdb-build-'));
  try {
    const download = await run(go, ['mod', 'download', '-json', `${FERRETDB_MODULE}@${FERRETDB_VERSION}`], {
      cwd: workDir,
    });
    const moduleDir = (JSON.parse(download) as { Dir?: string }).Dir;
    if (!moduleDir) throw new Error(`\`go mod download\` did not report a directory for ${FERRETDB_MODULE}`);

    // The module cache is read-only: build from a writable copy that has the version file.
    const srcDir = path.join(workDir, 'src');
    await fs.cp(moduleDir, srcDir, { recursive: true });
    await makeWritable(srcDir);
    await fs.writeFile(path.join(srcDir, 'build', 'version', 'version.txt'), `${FERRETDB_BUILD}\n`);
    const patched = path.join(srcDir, FERRETDB_ID_PATCH.file);
    const source = await fs.readFile(patched, 'utf8');
    if (!source.includes(FERRETDB_ID_PATCH.from)) throw new Error(`${FERRETDB_ID_PATCH.file} no longer holds the line the _id index patch replaces`);
    await fs.writeFile(patched, source.replace(FERRETDB_ID_PATCH.from, FERRETDB_ID_PATCH.to));

    const built = path.join(workDir, 'ferretdb');
    await run(go, ['build', '-buildvcs=false', '-o', built, './cmd/ferretdb'], { cwd: srcDir });

    // Copy next to the target, then rename: a concurrent run never sees a half-written binary.
    await fs.mkdir(installDir, { recursive: true });
    const target = path.join(installDir, FERRETDB_BINARY);
    const partial = `${target}.partial-${process.pid}`;
    await fs.copyFile(built, partial);
    await fs.chmod(partial, 0o755);
    await fs.rename(partial, target);

    const problem = await checkFerretDb(target);
    if (problem) throw new Error(`the freshly built ${target} does not run: ${problem}`);
    return target;
  } finally {
    await fs.rm(workDir, { recursive: true, force: true });
  }
}

/** Returns why the binary is unusable, or undefined when it is a runnable FerretDB 1.x. */
async function checkFerretDb(bin: string): Promise<string | undefined> {
  try {
    const out = await run(bin, ['--version'], { timeoutMs: 15_000 });
    const version = /^version:\s*(\S+)/m.exec(out)?.[1] ?? 'unknown';
    // FerretDB 2 needs PostgreSQL with DocumentDB; this project runs 1.x on SQLite.
    if (/^v?([2-9]|\d{2,})\./.test(version)) return `version ${version} has no SQLite handler (need 1.x)`;
    if (version !== FERRETDB_BUILD) return `version ${version} is not ${FERRETDB_BUILD} (the build with the _id index patch)`;
    return undefined;
  } catch (err) {
    return firstLine(errorMessage(err));
  }
}

async function findGo(): Promise<string | undefined> {
  const onPath = await findOnPath('go', process.env.PATH);
  if (onPath) return onPath;
  const usual = '/usr/local/go/bin/go';
  return (await isExecutable(usual)) ? usual : undefined;
}

/** Where `go install` puts binaries: GOBIN, else the first GOPATH entry's bin. */
async function goInstallDirs(go: string): Promise<string[]> {
  const out = await run(go, ['env', 'GOBIN', 'GOPATH']);
  const [gobin = '', gopath = ''] = out.split('\n').map((line) => line.trim());
  const dirs = gopath
    .split(path.delimiter)
    .filter(Boolean)
    .map((dir) => path.join(dir, 'bin'));
  return unique([gobin, ...dirs]);
}

// ---------------------------------------------------------------------------------------------
// FerretDB process

export interface RunningFerretDb {
  url: string;
  port: number;
  dataDir: string;
  stop(): Promise<void>;
}

export async function startFerretDb(opts: { dataDir: string; port?: number; log: Log }): Promise<RunningFerretDb> {
  const bin = await ensureFerretDbBinary(opts.log);
  const dataDir = path.resolve(opts.dataDir);
  await fs.mkdir(dataDir, { recursive: true });

  // A port we picked can be taken between picking and binding: then try another one.
  for (let attempt = 1; ; attempt++) {
    const port = opts.port ?? (await findFreePort());
    try {
      return await startFerretDbOnce(bin, dataDir, port);
    } catch (err) {
      if (opts.port !== undefined || attempt >= 3 || !/address already in use/i.test(errorMessage(err))) throw err;
    }
  }
}

async function startFerretDbOnce(bin: string, dataDir: string, port: number): Promise<RunningFerretDb> {
  const logFile = path.join(dataDir, 'ferretdb.log');
  const args = [
    '--handler=sqlite',
    `--sqlite-url=${pathToFileURL(dataDir + path.sep).href}`,
    `--state-dir=${dataDir}`,
    `--listen-addr=127.0.0.1:${port}`,
    '--debug-addr=-', // no HTTP debug listener (it defaults to a fixed 127.0.0.1:8088)
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
  return { url, port, dataDir, stop: proc.stop };
}

/** The parent's environment without FERRETDB_* variables, which would add listeners or setup. */
function ferretDbEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { DO_NOT_TRACK: '1' };
  for (const [key, value] of Object.entries(process.env)) {
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

// ---------------------------------------------------------------------------------------------
// Redis

export interface EnsureRedisOptions {
  /** PATH-style directory list searched for `redis-server`; defaults to process.env.PATH. */
  path?: string;
}

export async function ensureRedis(
  url: string,
  log: Log,
  opts: EnsureRedisOptions = {},
): Promise<{ started: boolean; stop(): Promise<void> }> {
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
    const redis = await startRedisServer(redisServer, target.host, target.port, url);
    return { started: true, stop: redis.stop };
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

  for (let attempt = 1; ; attempt++) {
    const port = opts.port ?? (await findFreePort());
    const url = `redis://127.0.0.1:${port}`;
    try {
      const redis = await startRedisServer(redisServer, '127.0.0.1', port, url);
      opts.log(`Started a private redis-server on 127.0.0.1:${port}`);
      return { url, port, ...redis };
    } catch (err) {
      if (opts.port !== undefined || attempt >= 3 || !/address already in use/i.test(errorMessage(err))) throw err;
    }
  }
}

async function startRedisServer(bin: string, host: string, port: number, url: string) {
  const args = ['--port', String(port), '--bind', host, '--save', '', '--appendonly', 'no', '--daemonize', 'no'];
  // cwd in the temp dir: whatever Redis might write never lands in the repository.
  const child = spawn(bin, args, { cwd: os.tmpdir(), stdio: ['ignore', 'pipe', 'pipe'] });
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
  return { stop: proc.stop, kill: proc.kill };
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

// ---------------------------------------------------------------------------------------------
// Child process plumbing

interface Supervised {
  exited: Promise<string>; // resolves with a description of how it ended
  hasExited(): boolean;
  stop(): Promise<void>;
  kill(): Promise<void>;
}

/**
 * Tracks a child: it never keeps the parent's event loop alive, and it is killed when the parent
 * exits (not detached, so it shares the terminal's Ctrl-C too).
 */
function supervise(child: ChildProcess, name: string): Supervised {
  let done = false;
  // SIGTERM: both servers exit promptly on it, and FerretDB closes its SQLite files cleanly.
  const killOnExit = () => child.kill('SIGTERM');
  process.on('exit', killOnExit);
  const exited = new Promise<string>((resolve) => {
    child.once('error', (err) => {
      done = true;
      process.off('exit', killOnExit);
      resolve(`${name} could not be started: ${err.message}`);
    });
    child.once('exit', (code, signal) => {
      done = true;
      process.off('exit', killOnExit);
      resolve(`${name} exited ${signal ? `on ${signal}` : `with code ${code}`}`);
    });
  });
  child.unref();

  const end = async (signal: NodeJS.Signals) => {
    if (done) return;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    await exited;
    clearTimeout(timer);
  };
  let stopping: Promise<void> | undefined;
  return {
    exited,
    hasExited: () => done,
    stop: () => (stopping ??= end('SIGTERM')),
    kill: () => (stopping ??= end('SIGKILL')),
  };
}

/** Retries `probe` until it succeeds, the process exits, or the timeout passes. */
async function waitUntilReady(
  proc: Supervised,
  timeoutMs: number,
  probe: () => Promise<void>,
  diagnostics: () => Promise<string>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError = 'no answer yet';
  while (!proc.hasExited()) {
    try {
      await probe();
      return;
    } catch (err) {
      lastError = errorMessage(err);
    }
    if (Date.now() > deadline) {
      throw new Error(`not ready after ${timeoutMs / 1000} s (${lastError}); ${await diagnostics()}`);
    }
    await Promise.race([sleep(100), proc.exited]);
  }
  throw new Error(`${await proc.exited} before accepting connections; ${await diagnostics()}`);
}

/** Keeps the last few KB of a child's output for error messages, without holding the loop open. */
function keepTail(child: ChildProcess): () => Promise<string> {
  let text = '';
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    (stream as net.Socket).unref?.();
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      text = (text + chunk).slice(-4_000);
    });
  }
  return async () => `output:\n${lastLines(text)}`;
}

async function readTail(file: string): Promise<string> {
  try {
    return lastLines(await fs.readFile(file, 'utf8'));
  } catch {
    return '';
  }
}

function lastLines(text: string, count = 15): string {
  return text.trimEnd().split('\n').slice(-count).join('\n');
}

// ---------------------------------------------------------------------------------------------
// Small helpers

/** Runs a command to completion; rejects with the command line and the tail of its stderr. */
function run(cmd: string, args: string[], opts: { cwd?: string; timeoutMs?: number } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      cmd,
      args,
      { cwd: opts.cwd, timeout: opts.timeoutMs ?? 0, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (!err) return resolve(stdout);
        const how = err.killed ? `killed by ${err.signal}` : `exit ${err.code ?? err.signal}`;
        const tail = lastLines(String(stderr || stdout || err.message), 20);
        reject(new Error(`\`${[cmd, ...args].join(' ')}\` failed (${how}):\n${tail}`));
      },
    );
  });
}

async function findOnPath(name: string, searchPath: string | undefined): Promise<string | undefined> {
  for (const dir of (searchPath ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.resolve(dir, name);
    if (await isExecutable(candidate)) return candidate;
  }
  return undefined;
}

async function isExecutable(file: string): Promise<boolean> {
  try {
    await fs.access(file, fsConstants.X_OK);
    return (await fs.stat(file)).isFile();
  } catch {
    return false;
  }
}

async function makeWritable(dir: string): Promise<void> {
  await fs.chmod(dir, 0o755);
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) await makeWritable(full);
    else await fs.chmod(full, 0o644);
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

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function unique(values: Array<string | undefined>): string[] {
  return [...new Set(values.filter((v): v is string => Boolean(v)))];
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function firstLine(text: string): string {
  return text.split('\n').find((line) => line.trim() && !line.startsWith('`')) ?? text;
}
