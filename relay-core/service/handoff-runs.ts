// Handoff runs: the recipient asks for their agent to work an accepted handoff; a runner on their machine claims it
// under a lease, heartbeats, sends progress (thread messages), and finishes it (completing the handoff on success).
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock';
import type { AgentDoc, OutboxEvent, ThreadDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';
import {
  claimedRun,
  finishedRun,
  holdsLease,
  isClaimable,
  isFinishedRun,
  lastLine,
  newRun,
  threadRunOf,
  type RunDoc,
  type RunEndReason,
  type RunStatus,
} from '../domain/run';
import type { EventType, Surface } from '../domain/schemas';
import type { ThreadWriter } from '../domain/thread-writer';
import type { RunRecords } from '../store/run-store';
import type { AppendRequest } from './message-append';
import type { Outbox } from './outbox';

export interface RunSettings {
  /** How long a lease lasts without a heartbeat; a runner heartbeats well within it. */
  leaseMs: number;
  /** The least time between two progress batches of one run (so Slack's DM and replies update every few seconds at most). */
  progressIntervalMs: number;
  /** The largest progress batch, in characters. */
  progressMaxChars: number;
  /** Progress batches kept as thread messages per run; later ones only move the run's last line. */
  progressMaxBatches: number;
}

export const DEFAULT_RUN_SETTINGS: RunSettings = {
  leaseMs: 60_000,
  progressIntervalMs: 3_000,
  progressMaxChars: 4_000,
  progressMaxBatches: 200,
};

/** A queued run whose thread never recorded it (its requester died between the two writes) is dropped after this. */
const ORPHANED_RUN_MS = 30_000;
/** How often a waiting claim looks again without a hint (leases expire without any event). */
const CLAIM_POLL_MS = 1_000;

export interface RunView {
  run_id: string;
  task_id: string;
  status: RunStatus;
  runner: string | null;
  claims: number;
  queued_at: string;
  started_at: string | null;
  finished_at: string | null;
  heartbeat_at: string | null;
  lease_expires_at: string | null;
  stop_requested: boolean;
  progress: { batches: number; last_line: string | null; last_update_at: string | null; dropped: number };
  result: { reason: RunEndReason; exit_code: number | null; report: string | null } | null;
  /** The end is reported on the handoff (completed with the report, or the failure posted). */
  reported: boolean;
}

export interface ClaimedRunView extends RunView {
  lease_id: string;
  lease_ms: number;
  progress_interval_ms: number;
  progress_max_chars: number;
  /** The seq the next progress batch carries (a runner taking over continues the count). */
  next_progress_seq: number;
}

export interface FinishRequest {
  run_id: string;
  lease_id: string;
  outcome: 'succeeded' | 'failed' | 'stopped';
  reason: RunEndReason;
  exit_code: number | null;
  report: string | null;
}

/** What the runs are given: the outbox, the policy check, and the transitions and appends (relay-service.ts wires them). */
export interface HandoffRunsDeps {
  /** The threads the runs are copied onto, and the runs themselves (MongoStore is both). */
  store: Pick<ThreadWriter, 'readThread' | 'writeThread'> & { runs: RunRecords };
  outbox: Pick<Outbox, 'recording'>;
  clock: Clock;
  log: Logger;
  settings: RunSettings;
  /** The policy for `handoff.run` on this thread (throws policy_denied / rate_limited). */
  gate(caller: AgentDoc, threadId: string, via: Surface, sessionId?: string): Promise<void>;
  complete(
    caller: AgentDoc,
    request: { thread_id: string; transition: 'complete'; result_summary: string },
    via: Surface,
    idempotencyKey: string,
  ): Promise<unknown>;
  append(caller: AgentDoc, request: AppendRequest, via: Surface, idempotencyKey: string): Promise<unknown>;
  /** Resolves after `ms`, or sooner when `handle`'s event log may have grown; absent, it just waits. */
  waitForHint?(handle: string, ms: number, signal?: AbortSignal): Promise<void>;
}

export class HandoffRuns {
  constructor(private readonly deps: HandoffRunsDeps) {}

  get settings(): RunSettings {
    return this.deps.settings;
  }

  // ── the recipient asks ──────────────────────────────────────────────────────

  /**
   * Queues a run of an accepted handoff for its recipient's agent; a run already queued or running is the answer
   * (asking twice is one run). After a run ended, asking again queues a new one.
   */
  /** `approved`: a person approved this run under a require_approval rule, so the policy is not asked again. */
  async request(
    caller: AgentDoc,
    threadId: string,
    via: Surface,
    sessionId?: string,
    opts: { approved?: boolean } = {},
  ): Promise<RunView> {
    const { store } = this.deps;
    const thread = await store.readThread(threadId);
    if (!thread) throw new RelayError('thread_not_found', `No thread ${threadId}`);
    if (thread.to !== caller.handle || thread.hidden_from_recipient) {
      throw new RelayError(
        thread.from === caller.handle ? 'not_authorized_transition' : 'not_a_participant',
        `Only the recipient (${thread.to}) can hand this handoff to their agent`,
      );
    }
    if (thread.run && !isFinishedRun(thread.run.status)) return this.viewOf(thread.run.id);
    this.assertRunnable(thread);
    if (!opts.approved) await this.deps.gate(caller, threadId, via, sessionId);
    const now = this.deps.clock.now();
    const run = newRun({ id: randomUUID(), thread_id: threadId, handle: caller.handle, by: caller.handle, via, now });
    await store.runs.insert(run);
    // Into the runner's queue before the thread shows it: a crash in between leaves a run claim() drops as orphaned.
    if (!(await store.runs.open(caller.handle, run._id))) {
      await store.runs.remove(run._id);
      throw new RelayError('rate_limited', `You have too many runs queued or running; stop some first`);
    }
    let existing: string | null = null;
    let refusal: ThreadDoc | null = null;
    const event = this.event('run.queued', caller.handle, via, run);
    const after = await this.deps.outbox.recording(event, async () => {
      const written = await store.writeThread(threadId, (doc) => {
        existing = doc.run && !isFinishedRun(doc.run.status) ? doc.run.id : null;
        if (existing || doc.status !== 'accepted' || doc.to !== caller.handle) return undefined;
        return { ...doc, run: threadRunOf(run), updated_at: now, outbox: [...doc.outbox, event] };
      });
      refusal = written.before;
      return written.after;
    });
    if (!after) {
      // Another request won the race (or the handoff moved on): this run never existed for anyone.
      await store.runs.close(caller.handle, [run._id]);
      await store.runs.remove(run._id);
      if (existing) return this.viewOf(existing);
      this.assertRunnable(refusal ?? thread);
    }
    this.deps.log.info({ thread_id: threadId, run_id: run._id, by: caller.handle, via }, 'run queued');
    return runView(run);
  }

  private assertRunnable(thread: ThreadDoc): void {
    if (thread.status === 'accepted') return;
    throw new RelayError(
      ['completed', 'declined', 'cancelled', 'expired', 'rejected'].includes(thread.status)
        ? 'thread_terminal'
        : 'invalid_transition',
      `Only an accepted handoff can be handed to your agent; this one is ${thread.status}${thread.status === 'pending' ? ' (accept it first, or accept with run: true)' : ''}`,
      { status: thread.status },
    );
  }

  /** Asks the run to stop: a queued one stops at once, a running one when its runner hears it (its next heartbeat). */
  async stop(caller: AgentDoc, runId: string, via: Surface): Promise<RunView> {
    const { store } = this.deps;
    const now = this.deps.clock.now();
    const current = await store.runs.read(runId);
    if (!current) throw new RelayError('not_found', `No run ${runId}`);
    if (current.handle !== caller.handle)
      throw new RelayError('not_authorized_transition', `Only ${current.handle} can stop this run`);
    const { after, before } = await store.runs.write(runId, (run) => {
      if (isFinishedRun(run.status) || run.stop_requested_at) return undefined;
      const asked = { ...run, stop_requested_at: now, stop_requested_by: caller.handle, updated_at: now };
      return run.status === 'queued'
        ? finishedRun(asked, 'stopped', { reason: 'stopped', exit_code: null, report: null }, now)
        : asked;
    });
    const run = after ?? before!;
    if (after?.status === 'stopped') {
      await this.ended(caller, after, via);
    } else if (after) {
      await this.recordOnThread(after, 'run.stopping', caller.handle, via);
    }
    this.deps.log.info({ run_id: runId, by: caller.handle, status: run.status }, 'run stop asked');
    return runView(run);
  }

  async get(caller: AgentDoc, runId: string): Promise<RunView> {
    const run = await this.deps.store.runs.read(runId);
    if (!run) throw new RelayError('not_found', `No run ${runId}`);
    if (run.handle !== caller.handle) {
      const thread = await this.deps.store.readThread(run.thread_id);
      if (thread?.from !== caller.handle)
        throw new RelayError('not_a_participant', 'Only the participants of its handoff can read this run');
    }
    return runView(run);
  }

  // ── the runner ──────────────────────────────────────────────────────────────

  /**
   * The caller's oldest claimable run (queued, or running under a lease that expired), taken under a fresh lease;
   * waits up to `waitMs` for one, woken by the caller's event log (a run.queued lands there).
   */
  async claim(caller: AgentDoc, runner: string, waitMs: number, signal?: AbortSignal): Promise<ClaimedRunView | null> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const claimed = await this.claimOnce(caller, runner);
      const left = deadline - Date.now();
      if (claimed || left <= 0 || signal?.aborted) return claimed;
      const pause = Math.min(left, CLAIM_POLL_MS);
      await (this.deps.waitForHint
        ? this.deps.waitForHint(caller.handle, pause, signal)
        : new Promise((resolve) => setTimeout(resolve, pause)));
    }
  }

  private async claimOnce(caller: AgentDoc, runner: string): Promise<ClaimedRunView | null> {
    const { store, settings } = this.deps;
    const closed: string[] = [];
    try {
      for (const runId of await store.runs.openRuns(caller.handle)) {
        const now = this.deps.clock.now();
        const run = await store.runs.read(runId);
        if (!run || isFinishedRun(run.status)) {
          closed.push(runId);
          continue;
        }
        if (!isClaimable(run, now)) continue;
        const thread = await store.readThread(run.thread_id);
        if (thread?.run?.id !== run._id) {
          if (now.getTime() - run.queued_at.getTime() > ORPHANED_RUN_MS) {
            await store.runs.write(runId, (r) =>
              isFinishedRun(r.status)
                ? undefined
                : finishedRun(
                    r,
                    'stopped',
                    { reason: 'error', exit_code: null, report: 'the handoff never recorded this run' },
                    now,
                  ),
            );
            closed.push(runId);
          }
          continue;
        }
        if (thread.status !== 'accepted') {
          // Completed, cancelled or reassigned by hand meanwhile: nothing left for an agent to do.
          const { after } = await store.runs.write(runId, (r) =>
            isFinishedRun(r.status)
              ? undefined
              : finishedRun(
                  r,
                  'stopped',
                  { reason: 'stopped', exit_code: null, report: `the handoff is ${thread.status}` },
                  now,
                ),
          );
          if (after) await this.recordOnThread(after, 'run.finished', caller.handle, 'a2a');
          closed.push(runId);
          continue;
        }
        const lease = { id: randomUUID(), runner, expires_at: new Date(now.getTime() + settings.leaseMs) };
        const { after } = await store.runs.write(runId, (r) =>
          isClaimable(r, now) ? claimedRun(r, lease, now) : undefined,
        );
        if (!after) continue;
        if (after.status === 'stopped') {
          await this.ended(caller, after, 'a2a');
          closed.push(runId);
          continue;
        }
        await this.recordOnThread(after, 'run.started', caller.handle, 'a2a');
        this.deps.log.info(
          { run_id: runId, thread_id: run.thread_id, runner, claims: after.claims },
          after.claims > 1 ? 'run taken over' : 'run claimed',
        );
        return {
          ...runView(after),
          lease_id: lease.id,
          lease_ms: settings.leaseMs,
          progress_interval_ms: settings.progressIntervalMs,
          progress_max_chars: settings.progressMaxChars,
          next_progress_seq: after.progress.seq + 1,
        };
      }
      return null;
    } finally {
      await store.runs.close(caller.handle, closed).catch(() => undefined);
    }
  }

  /** Renews the lease; answers whether a stop was asked for. A lease another runner took over is `conflict`. */
  async heartbeat(caller: AgentDoc, runId: string, leaseId: string): Promise<RunView> {
    const now = this.deps.clock.now();
    const { after, before } = await this.deps.store.runs.write(runId, (run) => {
      if (run.handle !== caller.handle || !holdsLease(run, leaseId)) return undefined;
      return {
        ...run,
        lease: { ...run.lease!, expires_at: new Date(now.getTime() + this.deps.settings.leaseMs) },
        heartbeat_at: now,
        updated_at: now,
      };
    });
    if (!after) throw leaseRefusal(caller, runId, leaseId, before);
    return runView(after);
  }

  /**
   * One batch of the agent's output, numbered by the runner from 1 (a retry of batch n records it once): a thread
   * message from the recipient, at most one per progressIntervalMs per run. Past progressMaxBatches only the run's
   * last line moves.
   */
  async progress(
    caller: AgentDoc,
    runId: string,
    leaseId: string,
    seq: number,
    text: string,
    via: Surface,
  ): Promise<{ run_id: string; seq: number; recorded: boolean }> {
    const { settings } = this.deps;
    const now = this.deps.clock.now();
    let replay = false;
    let tooSoonMs = 0;
    let expected = 0;
    const { after, before } = await this.deps.store.runs.write(runId, (run) => {
      replay = false;
      tooSoonMs = 0;
      if (run.handle !== caller.handle || !holdsLease(run, leaseId)) return undefined;
      expected = run.progress.seq + 1;
      if (seq < expected) {
        replay = true;
        return undefined;
      }
      if (seq > expected) return undefined;
      const since = run.progress.at ? now.getTime() - run.progress.at.getTime() : Infinity;
      if (since < settings.progressIntervalMs) {
        tooSoonMs = settings.progressIntervalMs - since;
        return undefined;
      }
      const kept = seq <= settings.progressMaxBatches;
      return {
        ...run,
        progress: {
          seq,
          at: now,
          last_line: lastLine(text) ?? run.progress.last_line,
          dropped: run.progress.dropped + (kept ? 0 : 1),
        },
        updated_at: now,
      };
    });
    if (tooSoonMs > 0) {
      throw new RelayError(
        'rate_limited',
        `Progress of one run is taken at most every ${settings.progressIntervalMs} ms; send this batch again in ${Math.ceil(tooSoonMs)} ms`,
        { retry_after_ms: Math.ceil(tooSoonMs) },
      );
    }
    const run = after ?? (replay ? before : null);
    if (!run) {
      if (before && holdsLease(before, leaseId) && before.handle === caller.handle)
        throw new RelayError('invalid_params', `params.seq: must be ${expected} (the next batch of this run)`);
      throw leaseRefusal(caller, runId, leaseId, before);
    }
    if (seq > settings.progressMaxBatches) return { run_id: runId, seq, recorded: false };
    try {
      await this.deps.append(
        caller,
        { thread_id: run.thread_id, body: text, payload: { kind: 'run_progress', run_id: runId, seq }, artifacts: [] },
        via,
        `run:${runId}:p${seq}`,
      );
    } catch (error) {
      // The handoff ended under the run (cancelled, completed by hand): the runner hears it at its next heartbeat.
      if (error instanceof RelayError && error.code === 'thread_terminal')
        return { run_id: runId, seq, recorded: false };
      throw error;
    }
    return { run_id: runId, seq, recorded: true };
  }

  /**
   * Ends the run once: only the lease holder can, and the same finish again (a retry) answers the same. Succeeded
   * completes the handoff with the report; failed and stopped post what happened as a thread message and leave it
   * accepted.
   */
  async finish(caller: AgentDoc, request: FinishRequest, via: Surface): Promise<RunView> {
    const now = this.deps.clock.now();
    const { after, before } = await this.deps.store.runs.write(request.run_id, (run) => {
      if (run.handle !== caller.handle || !holdsLease(run, request.lease_id)) return undefined;
      return finishedRun(
        run,
        request.outcome,
        { reason: request.reason, exit_code: request.exit_code, report: request.report },
        now,
      );
    });
    const repeated =
      !after &&
      before &&
      before.handle === caller.handle &&
      isFinishedRun(before.status) &&
      before.lease?.id === request.lease_id;
    const run = after ?? (repeated ? before : null);
    if (!run) throw leaseRefusal(caller, request.run_id, request.lease_id, before);
    await this.ended(caller, run, via);
    run.reported_at ??= this.deps.clock.now();
    if (after)
      this.deps.log.info(
        {
          run_id: run._id,
          thread_id: run.thread_id,
          status: run.status,
          reason: request.reason,
          exit_code: request.exit_code,
        },
        'run finished',
      );
    return runView(run);
  }

  /** What an ended run leaves behind, each step safe to repeat: the thread's copy, the result, the queue entry. */
  private async ended(caller: AgentDoc, run: RunDoc, via: Surface): Promise<void> {
    await this.recordOnThread(run, 'run.finished', caller.handle, via);
    const key = `run:${run._id}:end`;
    try {
      if (run.status === 'succeeded') {
        const summary = run.result?.report?.trim() || `${caller.name}'s agent finished without a report.`;
        await this.deps.complete(
          caller,
          { thread_id: run.thread_id, transition: 'complete', result_summary: summary.slice(0, 8_000) },
          via,
          key,
        );
      } else {
        await this.deps.append(
          caller,
          {
            thread_id: run.thread_id,
            body: endedMessage(run, caller),
            payload: { kind: 'run_ended', run_id: run._id, status: run.status },
            artifacts: [],
          },
          via,
          key,
        );
      }
    } catch (error) {
      // A handoff that ended under the run (cancelled, completed by hand) keeps its ending; the run records its own.
      if (!(error instanceof RelayError) || !['thread_terminal', 'invalid_transition'].includes(error.code))
        throw error;
      this.deps.log.info(
        { run_id: run._id, thread_id: run.thread_id, err: error.message },
        'run ended after its handoff did',
      );
    }
    await this.deps.store.runs.close(run.handle, [run._id]);
    const now = this.deps.clock.now();
    await this.deps.store.runs.write(run._id, (r) => (r.reported_at ? undefined : { ...r, reported_at: now }));
  }

  /** Copies the run onto its thread with an outbox event (Slack redraws the DMs, agents hear it on GET /events); once per change. */
  private async recordOnThread(run: RunDoc, type: EventType, by: string, via: Surface): Promise<void> {
    const event = this.event(type, by, via, run);
    await this.deps.outbox.recording(event, async () => {
      const written = await this.deps.store.writeThread(run.thread_id, (doc) => {
        if (doc.run?.id !== run._id) return undefined;
        const next = threadRunOf(run, doc.run);
        if (sameRun(doc.run, next)) return undefined;
        return { ...doc, run: next, outbox: [...doc.outbox, event] };
      });
      return written.after;
    });
  }

  private event(type: EventType, by: string, via: Surface, run: RunDoc): OutboxEvent {
    return { id: randomUUID(), type, at: this.deps.clock.now(), by, via, run_id: run._id, run_status: run.status };
  }

  private async viewOf(runId: string): Promise<RunView> {
    const run = await this.deps.store.runs.read(runId);
    if (!run) throw new RelayError('not_found', `No run ${runId}`);
    return runView(run);
  }
}

function sameRun(a: ThreadDoc['run'], b: NonNullable<ThreadDoc['run']>): boolean {
  return (
    !!a &&
    a.status === b.status &&
    a.runner === b.runner &&
    a.stop_requested === b.stop_requested &&
    (a.started_at?.getTime() ?? 0) === (b.started_at?.getTime() ?? 0)
  );
}

function leaseRefusal(caller: AgentDoc, runId: string, leaseId: string, run: RunDoc | null): RelayError {
  if (!run) return new RelayError('not_found', `No run ${runId}`);
  if (run.handle !== caller.handle) return new RelayError('forbidden', `Run ${runId} is ${run.handle}'s`);
  if (isFinishedRun(run.status))
    return new RelayError('conflict', `Run ${runId} is ${run.status}; it takes no more calls`, { status: run.status });
  if (run.lease?.id !== leaseId)
    return new RelayError(
      'conflict',
      `Run ${runId} is held by another lease (${run.lease?.runner ?? 'nobody'}): this runner lost it; stop the agent`,
      { status: run.status, lease_lost: true },
    );
  return new RelayError('conflict', `Run ${runId} is ${run.status}`, { status: run.status });
}

function endedMessage(run: RunDoc, caller: AgentDoc): string {
  const who = `${caller.name}'s agent`;
  const head =
    run.status === 'stopped'
      ? `${who} was stopped${run.stop_requested_by ? ` by ${run.stop_requested_by}` : ''}${run.started_at ? '' : ' before it started'}.`
      : run.result?.reason === 'time_limit'
        ? `${who} ran out of its time limit and was stopped.`
        : `${who} failed${run.result?.exit_code !== null && run.result?.exit_code !== undefined ? ` (exit code ${run.result.exit_code})` : ''}.`;
  const tail = run.result?.report?.trim();
  return `${head} The handoff stays accepted.${tail ? `\n\n${tail.slice(-6_000)}` : ''}`;
}

export function runView(run: RunDoc): RunView {
  const iso = (d: Date | null) => d?.toISOString() ?? null;
  return {
    run_id: run._id,
    task_id: run.thread_id,
    status: run.status,
    runner: run.lease?.runner ?? null,
    claims: run.claims,
    queued_at: run.queued_at.toISOString(),
    started_at: iso(run.started_at),
    finished_at: iso(run.finished_at),
    heartbeat_at: iso(run.heartbeat_at),
    lease_expires_at: run.status === 'running' ? iso(run.lease?.expires_at ?? null) : null,
    stop_requested: run.stop_requested_at !== null,
    progress: {
      batches: run.progress.seq,
      last_line: run.progress.last_line,
      last_update_at: iso(run.progress.at),
      dropped: run.progress.dropped,
    },
    result: run.result,
    reported: Boolean(run.reported_at),
  };
}
