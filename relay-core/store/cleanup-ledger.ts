// Age-based clean-up of what the store writes and stops needing: idempotency records and read markers. Writers note each `_id` here; batches become delayed jobs due when their records
// expire, so nothing ever scans a collection for old documents and nothing runs while nothing is due.
export const CLEANUP_KINDS = ['idempotency', 'thread_reads'] as const;
export type CleanupKind = (typeof CLEANUP_KINDS)[number];

const DAY_MS = 24 * 3600 * 1000;

/** How long each kind is kept after it was (last) written. */
export const KEEP_MS: Record<CleanupKind, number> = {
  // A retried call with the same key after this gets a fresh run rather than the recorded answer.
  idempotency: DAY_MS,
  // What a participant has read of a thread nobody has opened for this long (its unread count starts over).
  thread_reads: 90 * DAY_MS,
};

/** Noted ids are handed on in batches at most this often (and sooner when this many are waiting). */
const FLUSH_MS = 30_000;
const FLUSH_AT = 5_000;

/** Port: runs `cleanUp(kind, ids)` at `dueAt` (the composition root backs it with a delayed BullMQ job). */
export interface CleanupScheduler {
  schedule(kind: CleanupKind, ids: string[], dueAt: Date): Promise<void>;
}

/**
 * What a process wrote and must clean up later, batched in memory. A process that dies loses its last batch: those
 * few documents stay (they are inert), which is the price of not writing a ledger entry per write.
 */
export class CleanupLedger {
  private pending = new Map<CleanupKind, Set<string>>();
  private size = 0;
  private timer: NodeJS.Timeout | undefined;
  private scheduler: CleanupScheduler | undefined;

  /** Set once the queues exist; until then (and in processes without one) nothing is noted. */
  attach(scheduler: CleanupScheduler): void {
    this.scheduler = scheduler;
  }

  note(kind: CleanupKind, id: string): void {
    if (!this.scheduler) return;
    const ids = this.pending.get(kind) ?? new Set<string>();
    if (!ids.has(id)) this.size += 1;
    ids.add(id);
    this.pending.set(kind, ids);
    if (this.size >= FLUSH_AT) void this.flush().catch(() => {});
    this.timer ??= setTimeout(() => void this.flush().catch(() => {}), FLUSH_MS);
    this.timer.unref();
  }

  /** Hands every noted id to the scheduler now (on shutdown, or in a test). */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batches = this.pending;
    this.pending = new Map();
    this.size = 0;
    if (!this.scheduler) return;
    for (const [kind, ids] of batches) await this.scheduler.schedule(kind, [...ids], new Date(Date.now() + KEEP_MS[kind]));
  }
}
