// One claimed run on the recipient's machine: the thread file, the agent spawned without a shell in its own process
// group, heartbeats that keep the lease (and end the agent when it is lost), progress, the time limit, the finish.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AgentConfig } from './agent-config';
import { THREAD_FILE_PLACEHOLDER } from './agent-config';
import { ProgressSender } from './progress-sender';
import { RunnerCallError, type RunnerClient } from './runner-client';
import { threadFile, workdirFor, type RelayThread } from './thread-file';

/** What runs/claim answers (the fields the runner uses). */
export interface ClaimedRun {
  run_id: string;
  task_id: string;
  lease_id: string;
  lease_ms: number;
  lease_expires_at: string | null;
  progress_interval_ms: number;
  progress_max_chars: number;
  next_progress_seq: number;
  claims: number;
}

export interface AgentRunDeps {
  client: RunnerClient;
  config: AgentConfig;
  /** The runner's own environment: only the names `config.env` lists are passed on. */
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
  /** Called with the running agent (for `stop` on shutdown); undefined once it exited. */
  track?: (runId: string, stop: ((why: 'stopped' | 'shutdown') => void) | undefined) => void;
}

/** The longest a heartbeat waits between beats, so a Stop reaches the agent within seconds. */
const MAX_HEARTBEAT_MS = 5_000;
const REPORT_MAX = 8_000;

type EndCause = 'stopped' | 'time_limit' | 'shutdown' | 'lost' | null;

/** The group leader every agent is started through (agent-watchdog.ts, compiled beside this file). */
const WATCHDOG = join(__dirname, 'agent-watchdog.js');

/** Sends `signal` to the agent's whole process group (it was spawned detached, so its pid is the group id). */
function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

export async function workRun(deps: AgentRunDeps, run: ClaimedRun): Promise<void> {
  const { client, config, log } = deps;
  const lease = { run_id: run.run_id, lease_id: run.lease_id };
  let leaseUntil = run.lease_expires_at ? Date.parse(run.lease_expires_at) : Date.now() + run.lease_ms;
  let cause: EndCause = null;
  let child: ChildProcess | null = null;
  const stopAgent = (why: Exclude<EndCause, null>) => {
    if (cause === null) cause = why;
    if (!child) return;
    killGroup(child, 'SIGTERM');
    const hard = setTimeout(() => child && killGroup(child, 'SIGKILL'), config.kill_grace);
    hard.unref();
  };

  // Heartbeats from the claim until the finish is recorded: the lease must hold while the relay takes the result.
  const beat = async () => {
    try {
      const answer = await client.call<{ stop_requested: boolean; lease_expires_at: string | null }>(
        'runs/heartbeat',
        lease,
        { deadline: leaseUntil },
      );
      if (answer.lease_expires_at) leaseUntil = Date.parse(answer.lease_expires_at);
      if (answer.stop_requested) stopAgent('stopped');
    } catch (error) {
      // Refused (another runner holds it) or unanswered until the lease ran out: it is not ours any more.
      log(`run ${run.run_id}: lease lost (${(error as Error).message}); ending the agent`);
      stopAgent('lost');
    }
  };
  let beating: Promise<void> | null = null;
  const heartbeat = setInterval(
    () => {
      if (cause !== 'lost') beating ??= beat().finally(() => (beating = null));
    },
    Math.min(MAX_HEARTBEAT_MS, Math.floor(run.lease_ms / 3)),
  );

  const finish = async (
    outcome: 'succeeded' | 'failed' | 'stopped',
    reason: string,
    exitCode: number | null,
    report: string | null,
  ) => {
    const params = {
      ...lease,
      outcome,
      reason,
      exit_code: exitCode,
      report: report ? report.slice(-REPORT_MAX) : null,
    };
    // Retried for as long as the lease holds (the heartbeats go on meanwhile): a relay restart only delays it.
    while ((cause as EndCause) !== 'lost') {
      try {
        await client.call('runs/finish', params, { deadline: leaseUntil });
        log(`run ${run.run_id}: ${outcome}${exitCode !== null ? ` (exit ${exitCode})` : ''}`);
        return;
      } catch (error) {
        if (error instanceof RunnerCallError) {
          log(`run ${run.run_id}: finish refused (${error.message})`);
          return;
        }
        await sleep(500);
      }
    }
  };

  const dir = await mkdtemp(join(config.state_dir ?? tmpdir(), 'handoff-run-')).catch(
    async (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT' || !config.state_dir) throw error;
      await mkdir(config.state_dir, { recursive: true });
      return mkdtemp(join(config.state_dir, 'handoff-run-'));
    },
  );
  try {
    let thread: RelayThread;
    try {
      thread = await client.call<RelayThread>('tasks/get', { task_id: run.task_id });
    } catch (error) {
      return await finish(
        'failed',
        'error',
        null,
        `The runner could not read the handoff: ${(error as Error).message}`,
      );
    }
    const workdir = workdirFor(thread, config.repos, config.default_workdir);
    if (!workdir) {
      const repos = Object.keys(config.repos);
      return await finish(
        'failed',
        'error',
        null,
        `No working directory for this handoff: none of the runner's repos (${repos.join(', ') || 'none'}) matches the paths it names, and the runner config sets no default_workdir.`,
      );
    }
    const threadPath = join(dir, 'handoff.md');
    const reportPath = join(dir, 'report.md');
    await writeFile(threadPath, threadFile({ thread, runId: run.run_id, workdir, reportFile: reportPath }), {
      mode: 0o600,
    });

    const placed = config.command.some((arg) => arg.includes(THREAD_FILE_PLACEHOLDER));
    const argv = placed
      ? config.command.map((arg) => arg.split(THREAD_FILE_PLACEHOLDER).join(threadPath))
      : [...config.command, threadPath];
    const env: NodeJS.ProcessEnv = {};
    for (const name of config.env) if (deps.env[name] !== undefined) env[name] = deps.env[name];
    Object.assign(env, {
      HANDOFF_THREAD_FILE: threadPath,
      HANDOFF_REPORT_FILE: reportPath,
      HANDOFF_RUN_ID: run.run_id,
      HANDOFF_TASK_ID: run.task_id,
      HANDOFF_WORKDIR: workdir,
    });

    const progress = new ProgressSender({
      client,
      runId: run.run_id,
      leaseId: run.lease_id,
      firstSeq: run.next_progress_seq,
      intervalMs: run.progress_interval_ms,
      maxChars: run.progress_max_chars,
      onLost: () => stopAgent('lost'),
      log,
    });
    // The handoff's text reaches the agent only inside the file: argv holds the runner's own words and the path.
    // Through the watchdog (the group's leader), which ends the group if this runner dies without a word.
    const spawned = spawn(process.execPath, [WATCHDOG, String(process.pid), ...argv], {
      cwd: workdir,
      env,
      detached: true,
      shell: false,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = spawned;
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((resolve) => {
      spawned.once('error', (error) => resolve({ code: null, signal: null, error }));
      spawned.once('close', (code, signal) => resolve({ code, signal }));
    });
    spawned.stdout?.setEncoding('utf8').on('data', (chunk: string) => progress.push(chunk));
    spawned.stderr?.setEncoding('utf8').on('data', (chunk: string) => progress.push(chunk));
    progress.start();
    deps.track?.(run.run_id, (why) => stopAgent(why));
    if (cause) stopAgent(cause);
    const limit = setTimeout(() => stopAgent('time_limit'), config.time_limit);
    log(
      `run ${run.run_id}: started ${argv[0]} in ${workdir}${run.claims > 1 ? ` (taken over, claim ${run.claims})` : ''}`,
    );
    const { code, signal, error } = await exited;
    clearTimeout(limit);
    deps.track?.(run.run_id, undefined);
    // Whatever the agent left behind in its group goes with it.
    killGroup(spawned, 'SIGKILL');
    child = null;
    await progress.flush();

    if (error) return await finish('failed', 'error', null, `The runner could not start ${argv[0]}: ${error.message}`);
    const tail = progress.tail;
    const ended = cause as EndCause;
    if (ended === 'lost') return;
    if (ended === 'stopped') return await finish('stopped', 'stopped', code, tail);
    if (ended === 'time_limit')
      return await finish(
        'failed',
        'time_limit',
        code,
        `Stopped after the time limit (${Math.round(config.time_limit / 1000)} s).\n\n${tail}`,
      );
    if (ended === 'shutdown')
      return await finish('failed', 'error', code, `The runner was shut down while the agent ran.\n\n${tail}`);
    if (code === 0) {
      const written = await readFile(reportPath, 'utf8').catch(() => '');
      return await finish('succeeded', 'exit', 0, written.trim() || tail.trim() || null);
    }
    return await finish('failed', 'exit', code, signal ? `Ended by ${signal}.\n\n${tail}` : tail);
  } finally {
    clearInterval(heartbeat);
    await beating;
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}
