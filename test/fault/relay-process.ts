// Runs the built CLI (`handoff-relay start`) as a child process on the test's FerretDB and Redis, for tests that
// signal or kill a relay. Needs `npm run build` first.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { findFreePort } from '../../scripts/local-services/ports';
import { waitUntil } from '../helpers/wait-until';

export const CLI = join(__dirname, '..', '..', 'dist', 'scripts', 'cli.js');

export interface RelayProcess {
  child: ChildProcess;
  url: string;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code (null when killed by a signal) once it has exited. */
  exited: Promise<number | null>;
}

/** `port`: listen there (a relay started again where its clients know it); a free port otherwise. */
export async function startRelayProcess(
  env: Record<string, string>,
  opts: { port?: number } = {},
): Promise<RelayProcess> {
  const port = opts.port ?? (await findFreePort());
  const child = spawn(process.execPath, [CLI, 'start'], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let exitCode: number | null | undefined;
  void exited.then((code) => (exitCode = code));
  try {
    await waitUntil(
      async () => {
        if (exitCode !== undefined) throw new Error(`the relay exited (${exitCode}) before it listened:\n${output}`);
        return output.includes('listening on');
      },
      'the relay process to listen',
      30_000,
    );
  } catch (error) {
    // (The output as it is now: the waitUntil message was written before the process printed anything.)
    const failure =
      exitCode === undefined ? new Error(`${(error as Error).message}; output so far:\n${output}`) : error;
    // Nobody gets a handle on a child that never listened: stop it here, or it outlives its test and jest waits
    // for it forever.
    if (exitCode === undefined) {
      child.kill('SIGKILL');
      await exited;
    }
    throw failure;
  }
  return { child, url: `http://127.0.0.1:${port}`, output: () => output, exited };
}

/** Stops a child that is still running (SIGKILL: the tests that need a clean stop send SIGTERM themselves). */
export async function killRelayProcess(relay: RelayProcess | undefined): Promise<void> {
  if (!relay || relay.child.exitCode !== null || relay.child.signalCode !== null) return;
  relay.child.kill('SIGKILL');
  await relay.exited;
}

/** POSTs `body` as JSON to `path` of the relay at `url` with `key`, and answers the parsed reply. */
export async function postJson(url: string, path: string, key: string, body: unknown): Promise<any> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return response.json();
}
