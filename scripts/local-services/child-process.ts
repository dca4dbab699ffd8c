// Local services: running and supervising the child processes (go, ferretdb, redis-server) they need.
import { execFile, type ChildProcess } from 'node:child_process';
import { constants as fsConstants } from 'node:fs';
import * as fs from 'node:fs/promises';
import type * as net from 'node:net';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export type Log = (line: string) => void;

const STOP_GRACE_MS = 5_000;

export interface Supervised {
  exited: Promise<string>; // resolves with a description of how it ended
  hasExited(): boolean;
  stop(): Promise<void>;
  kill(): Promise<void>;
}

/**
 * Tracks a child: it never keeps the parent's event loop alive (until it is being stopped), and it is killed when
 * the parent exits (not detached, so it shares the terminal's Ctrl-C too). A stop sends SIGKILL after `graceMs`.
 */
export function supervise(child: ChildProcess, name: string, { graceMs = STOP_GRACE_MS } = {}): Supervised {
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
    // Held until it has exited: unref'd, a child slower than the grace left nothing keeping the loop alive once the
    // SIGKILL timer fired, so the parent exited (code 0) inside an awaited stop(), e.g. jest in its globalTeardown,
    // before it wrote its results or set its failing exit code.
    child.ref();
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
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
export async function waitUntilReady(
  proc: Supervised,
  timeoutMs: number,
  probe: () => Promise<void>,
  diagnostics: () => Promise<string>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: string;
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
export function keepTail(child: ChildProcess): () => Promise<string> {
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

export async function readTail(file: string): Promise<string> {
  try {
    return lastLines(await fs.readFile(file, 'utf8'));
  } catch {
    return '';
  }
}

function lastLines(text: string, count = 15): string {
  return text.trimEnd().split('\n').slice(-count).join('\n');
}

/** Runs a command to completion; rejects with the command line and the tail of its stderr. */
export function run(cmd: string, args: string[], opts: { cwd?: string; timeoutMs?: number } = {}): Promise<string> {
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

export async function findOnPath(name: string, searchPath: string | undefined): Promise<string | undefined> {
  for (const dir of (searchPath ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.resolve(dir, name);
    if (await isExecutable(candidate)) return candidate;
  }
  return undefined;
}

export async function isExecutable(file: string): Promise<boolean> {
  try {
    await fs.access(file, fsConstants.X_OK);
    return (await fs.stat(file)).isFile();
  } catch {
    return false;
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
