// `handoff-relay agent`: claims the teammate's runs (as many at once as `concurrency`), works each with workRun, and,
// when the config has auto-run rules, accepts matching new handoffs with run: true by itself.
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { HttpRelayClient } from '../../mcp/relay-client';
import type { AgentConfig } from './agent-config';
import { workRun, type ClaimedRun } from './agent-run';
import { RunnerCallError, RunnerClient } from './runner-client';

export interface AgentRunnerOptions {
  relayUrl: string;
  apiKey: string;
  config: AgentConfig;
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
}

/** How long one claim waits at the relay for a run (the relay's maximum). */
const CLAIM_WAIT_SECONDS = 20;

export function startAgentRunner(opts: AgentRunnerOptions): { stop(): Promise<void>; done: Promise<void> } {
  const { config, log } = opts;
  const client = new RunnerClient({ relayUrl: opts.relayUrl, apiKey: opts.apiKey, log });
  const runner = config.runner_name ?? `${hostname()} (pid ${process.pid})`;
  const running = new Map<string, (why: 'stopped' | 'shutdown') => void>();
  const working = new Set<Promise<void>>();
  let stopping = false;
  const track = (runId: string, stop: ((why: 'stopped' | 'shutdown') => void) | undefined) => {
    if (stop) running.set(runId, stop);
    else running.delete(runId);
  };

  async function slot(n: number): Promise<void> {
    while (!stopping) {
      let claimed: ClaimedRun | null;
      try {
        claimed = (
          await client.call<{ run: ClaimedRun | null }>(
            'runs/claim',
            { runner, wait_seconds: CLAIM_WAIT_SECONDS },
            { timeoutMs: (CLAIM_WAIT_SECONDS + 15) * 1000 },
          )
        ).run;
      } catch (error) {
        log(`claim refused: ${(error as Error).message}`);
        await sleep(5_000);
        continue;
      }
      if (!claimed) continue;
      if (stopping) break;
      log(`slot ${n}: run ${claimed.run_id} of handoff ${claimed.task_id}`);
      const work = workRun({ client, config, env: opts.env, log, track }, claimed).catch((error: Error) =>
        log(`run ${claimed.run_id}: runner error ${error.message}`),
      );
      working.add(work);
      await work;
      working.delete(work);
    }
  }

  /** Auto-run: new handoffs to this teammate that a rule matches are accepted with run: true (the relay's policy still applies). */
  async function autoRun(): Promise<void> {
    const relay = new HttpRelayClient({
      relayUrl: opts.relayUrl,
      apiKey: opts.apiKey,
      // 500 ms, 1 s, 2 s, 3 s: a runner outlasts a longer relay restart than a tool call does.
      retry: { retries: 4, minTimeout: 500, factor: 2, maxTimeout: 3_000 },
    });
    const consider = async (threadId: string): Promise<void> => {
      const thread = await relay.call<{
        status: string;
        intent: string;
        sender: { handle: string };
        recipient: { handle: string };
      }>('tasks/get', { task_id: threadId });
      if (thread.status !== 'pending' || thread.sender.handle === thread.recipient.handle) return;
      const rule = config.auto_run.find(
        (r) =>
          (r.from === undefined || r.from === thread.sender.handle) &&
          (r.intent === undefined || r.intent === thread.intent),
      );
      if (!rule) return;
      try {
        await relay.call('tasks/update', { task_id: threadId, transition: 'accept', run: true });
        log(`auto-run: accepted handoff ${threadId} from ${thread.sender.handle} (${thread.intent}) and queued a run`);
      } catch (error) {
        log(`auto-run: handoff ${threadId} not accepted (${(error as Error).message})`);
      }
    };
    let cursor: string | undefined;
    while (!stopping) {
      try {
        if (cursor === undefined) {
          // Where the event log is now, then what already waits: nothing that arrives in between (or while this
          // runner was down) is missed; a handoff seen twice is accepted once (the second accept is refused).
          cursor = (await relay.events({ wait_seconds: 0 })).cursor;
          const waiting = await relay.call<{ items: Array<{ thread_id: string }> }>('tasks/list', {
            filter: { role: 'recipient', status: ['pending'] },
            page: { limit: 50 },
          });
          for (const item of waiting.items) await consider(item.thread_id);
          log('auto-run: following new handoffs');
        }
        const page = await relay.events({ since: cursor, wait_seconds: 20 });
        cursor = page.cursor;
        for (const event of page.events) {
          if (event.type === 'thread.created' || event.type === 'thread.claimed') await consider(event.thread_id);
        }
      } catch (error) {
        log(`auto-run: ${(error as Error).message}`);
        await sleep(3_000);
      }
    }
    relay.close();
  }

  log(
    `handoff-relay agent: ${runner} works runs for this teammate at ${opts.relayUrl} (${config.concurrency} at a time${config.auto_run.length ? `, ${config.auto_run.length} auto-run rules` : ', auto-run off'})`,
  );
  const loops = [
    ...Array.from({ length: config.concurrency }, (_, i) => slot(i + 1)),
    ...(config.auto_run.length ? [autoRun()] : []),
  ];
  const done = Promise.all(loops).then(() => undefined);
  return {
    done,
    async stop() {
      stopping = true;
      for (const stop of running.values()) stop('shutdown');
      // Running agents end and their runs finish as failed; a claim still waiting at the relay is left to end by
      // itself (a run it gets is taken over once its lease expires).
      await Promise.all(working);
    },
  };
}

/** `handoff-relay agent stop RUN_ID`: asks the relay to stop the run; its runner ends the agent's process group. */
export async function stopRun(opts: {
  relayUrl: string;
  apiKey: string;
  runId: string;
  log: (line: string) => void;
}): Promise<{ status: string; stop_requested: boolean }> {
  const client = new RunnerClient({ relayUrl: opts.relayUrl, apiKey: opts.apiKey, log: opts.log });
  try {
    return await client.call('runs/stop', { run_id: opts.runId }, { deadline: Date.now() + 15_000 });
  } catch (error) {
    if (error instanceof RunnerCallError) throw new Error(`the relay refused: ${error.message}`, { cause: error });
    throw error;
  }
}
