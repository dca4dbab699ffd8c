// `handoff-relay agent` started from dist/ as its own process, with the fake agent of test/fixtures as its command.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { waitUntil } from './wait-until';

export const CLI = join(__dirname, '..', '..', 'dist', 'scripts', 'cli.js');
export const FAKE_AGENT = join(__dirname, '..', 'fixtures', 'fake-agent.js');

export interface AgentProcess {
  child: ChildProcess;
  output: () => string;
  /** The fake agent's working folder (its invocations.log, seen-*.json, pids-*.json). */
  workdir: string;
}

/** Writes a config under `root` and starts the runner for `key`; `extra` overrides config fields. */
export async function startAgentProcess(opts: {
  relayUrl: string;
  key: string;
  root: string;
  name: string;
  extra?: Record<string, unknown>;
}): Promise<AgentProcess> {
  const workdir = await mkdtemp(join(opts.root, `${opts.name}-`));
  const config = join(opts.root, `${opts.name}-${Date.now()}.json`);
  await writeFile(
    config,
    JSON.stringify({
      command: [process.execPath, FAKE_AGENT],
      default_workdir: workdir,
      runner_name: opts.name,
      kill_grace: '500ms',
      ...opts.extra,
    }),
  );
  const child = spawn(process.execPath, [CLI, 'agent', '--config', config], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      RELAY_URL: opts.relayUrl,
      RELAY_API_KEY: opts.key,
      SECRET_OF_RUNNER: 'do-not-leak',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  await waitUntil(
    async () => output.includes('works runs for this teammate'),
    `runner ${opts.name} to start; output:\n${output}`,
  );
  return { child, output: () => output, workdir };
}

/** SIGTERM, and the exit: the runner ends its agents and finishes their runs first. */
export async function stopAgentProcess(runner: AgentProcess): Promise<void> {
  if (runner.child.exitCode !== null || runner.child.signalCode !== null) return;
  const exited = new Promise((resolve) => runner.child.once('exit', resolve));
  runner.child.kill('SIGTERM');
  await exited;
}
