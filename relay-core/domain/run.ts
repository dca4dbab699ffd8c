// A handoff run: the recipient's own agent working an accepted handoff on their machine, held by one runner at a time
// under a lease. Pure rules here; the store keeps the documents (store/run-store.ts), the service applies them.

export const RUN_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'stopped'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const FINISHED_RUN_STATUSES: readonly RunStatus[] = ['succeeded', 'failed', 'stopped'];

/** Why a run ended, as its runner reports it (or the relay, for a stop before any runner took it). */
export const RUN_END_REASONS = ['exit', 'time_limit', 'stopped', 'error'] as const;
export type RunEndReason = (typeof RUN_END_REASONS)[number];

export interface RunLease {
  /** Random per claim: every heartbeat, progress batch and finish presents it. */
  id: string;
  /** The runner's own name for itself (host and pid by default), shown in Slack. */
  runner: string;
  expires_at: Date;
}

export interface RunResult {
  reason: RunEndReason;
  exit_code: number | null;
  /** The agent's final report (succeeded) or what went wrong (failed), as the runner sent it. */
  report: string | null;
}

/** One run (`runs`, `_id` = run id), changed only through a versioned write. */
export interface RunDoc {
  _id: string;
  version?: number;
  thread_id: string;
  /** Whose agent runs it: the handoff's recipient, the only caller of the runner methods for it. */
  handle: string;
  status: RunStatus;
  requested_by: string;
  requested_via: string;
  queued_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  lease: RunLease | null;
  /** How many times a runner claimed it (more than 1: a runner died and another took it over). */
  claims: number;
  heartbeat_at: Date | null;
  stop_requested_at: Date | null;
  stop_requested_by: string | null;
  /** Progress batches recorded (each a thread message), the last one's time and line. */
  progress: { seq: number; at: Date | null; last_line: string | null; dropped: number };
  result: RunResult | null;
  /** When what the end owes the handoff (its completion, or the failure message) was in; null until then. */
  reported_at?: Date | null;
  updated_at: Date;
}

/** What the thread shows of its current run (Slack's DM line, tasks/get): a copy kept in the thread's own writes. */
export interface ThreadRun {
  id: string;
  status: RunStatus;
  runner: string | null;
  queued_at: Date;
  started_at: Date | null;
  last_update_at: Date | null;
  last_line: string | null;
  stop_requested: boolean;
  finished_at: Date | null;
}

export function isFinishedRun(status: RunStatus): boolean {
  return FINISHED_RUN_STATUSES.includes(status);
}

export function newRun(input: {
  id: string;
  thread_id: string;
  handle: string;
  by: string;
  via: string;
  now: Date;
}): RunDoc {
  return {
    _id: input.id,
    thread_id: input.thread_id,
    handle: input.handle,
    status: 'queued',
    requested_by: input.by,
    requested_via: input.via,
    queued_at: input.now,
    started_at: null,
    finished_at: null,
    lease: null,
    claims: 0,
    heartbeat_at: null,
    stop_requested_at: null,
    stop_requested_by: null,
    progress: { seq: 0, at: null, last_line: null, dropped: 0 },
    result: null,
    updated_at: input.now,
  };
}

/** A queued run, or a running one whose runner stopped heartbeating past its lease: a runner may take it. */
export function isClaimable(run: RunDoc, now: Date): boolean {
  if (run.status === 'queued') return true;
  return run.status === 'running' && run.lease !== null && run.lease.expires_at.getTime() <= now.getTime();
}

/** The run taken by a runner under a fresh lease; a stop asked for while nobody held it ends it instead. */
export function claimedRun(run: RunDoc, lease: RunLease, now: Date): RunDoc {
  if (run.stop_requested_at)
    return finishedRun(run, 'stopped', { reason: 'stopped', exit_code: null, report: null }, now);
  return {
    ...run,
    status: 'running',
    lease,
    claims: run.claims + 1,
    started_at: run.started_at ?? now,
    heartbeat_at: now,
    updated_at: now,
  };
}

/** The lease `leaseId` holds the run right now (an expired lease nobody took over still holds it). */
export function holdsLease(run: RunDoc, leaseId: string): boolean {
  return run.status === 'running' && run.lease?.id === leaseId;
}

export function finishedRun(run: RunDoc, status: RunStatus, result: RunResult, now: Date): RunDoc {
  return { ...run, status, result, finished_at: now, updated_at: now, lease: run.lease };
}

/** The thread's copy of a run. */
export function threadRunOf(run: RunDoc, previous?: ThreadRun | null): ThreadRun {
  const same = previous?.id === run._id ? previous : null;
  return {
    id: run._id,
    status: run.status,
    runner: run.lease?.runner ?? null,
    queued_at: run.queued_at,
    started_at: run.started_at,
    last_update_at: same?.last_update_at ?? run.progress.at,
    last_line: same?.last_line ?? run.progress.last_line,
    stop_requested: run.stop_requested_at !== null,
    finished_at: run.finished_at,
  };
}

/** The last non-blank line of a progress batch, for the one-line status ("last update 10:07: running tests…"). */
export function lastLine(text: string, max = 200): string | null {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const last = lines[lines.length - 1];
  if (!last) return null;
  return last.length > max ? `${last.slice(0, max - 1)}…` : last;
}
