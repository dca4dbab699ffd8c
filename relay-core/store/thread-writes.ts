// The versioned thread write every state change goes through, in the two strategies the store picks between at
// connect time: one conditional replace on MongoDB, a claim protocol on FerretDB (whose updates are not atomic).
import { setTimeout as sleep } from 'node:timers/promises';
import { MongoServerError, type Collection } from 'mongodb';
import type { ThreadDoc, ThreadWriteDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';

export function isDuplicateKey(error: unknown): boolean {
  return error instanceof MongoServerError && error.code === 11000;
}

/** How long a write keeps retrying against concurrent writers of the same thread before state_changed. */
const CONTENDED_WRITE_MS = 5_000;

/**
 * A claim older than this is never applied by its owner (it stopped for too long between claim and apply);
 * readers and later writers use it through the chain instead. Claims are forgotten only after
 * CLAIM_FORGET_MS, well beyond it, so an owner that passed this check still finds its claim's successors.
 */
export const CLAIM_APPLY_WITHIN_MS = 10 * 60_000;
/** How long a claim's owner has to apply it before readers put the cached document right themselves. */
const OWNER_APPLIES_MS = 2_000;
/** How long a claim is kept; the clean-up job deletes claims older than this. */
export const CLAIM_FORGET_MS = 60 * 60_000;

export interface ThreadWrite {
  before: ThreadDoc | null;
  after: ThreadDoc | null;
}

/** `change` is a pure function of the current document: the next one, or undefined when its precondition no longer holds. */
export type ThreadChange = (current: ThreadDoc) => ThreadDoc | undefined;

/** Port: read the current version of a thread and apply one change to it that no concurrent write can interleave with. */
export interface ThreadWriter {
  /** Which protocol this is, for logs and the bench. */
  readonly strategy: 'conditional-replace' | 'claims';
  read(id: string): Promise<ThreadDoc | null>;
  write(id: string, change: ThreadChange): Promise<ThreadWrite>;
}

/**
 * MongoDB: `findOneAndReplace({ _id, version: N })` is atomic and one round trip, so a write is a read, the change,
 * and that conditional replace; losing the race means reading again.
 */
export class ConditionalThreadWriter implements ThreadWriter {
  readonly strategy = 'conditional-replace' as const;

  constructor(private readonly threads: Collection<ThreadDoc>) {}

  read(id: string): Promise<ThreadDoc | null> {
    return this.threads.findOne({ _id: id });
  }

  async write(id: string, change: ThreadChange): Promise<ThreadWrite> {
    const deadline = Date.now() + CONTENDED_WRITE_MS;
    for (let attempt = 0; Date.now() < deadline; attempt += 1) {
      const current = await this.threads.findOne({ _id: id });
      if (!current) return { before: null, after: null };
      const changed = change(current);
      if (!changed) return { before: current, after: null };
      const next: ThreadDoc = { ...changed, _id: id, version: current.version + 1 };
      const replaced = await this.threads.findOneAndReplace({ _id: id, version: current.version }, next, { projection: { _id: 1 } });
      if (replaced) return { before: current, after: next };
      await sleep(backoffMs(attempt));
    }
    throw new RelayError('state_changed', 'The thread is changing too fast right now; read it again and retry');
  }
}

/**
 * FerretDB 1.x evaluates an update's filter and writes back in separate steps (two racing conditional updates can
 * both win) and serves only a filter that is exactly `{ _id }` without reading the whole collection. So:
 *
 * - The log of a thread is its claims: version N+1 exists once `${id}:${N+1}` is inserted into `thread_writes`
 *   (a unique `_id` insert is atomic on every server), carrying the whole new document. Only one writer can own
 *   version N+1, and it owns it only if it read version N, so versions form one chain.
 * - The `threads` document is a cache of the newest claim, written by `{ _id }` alone (no version in the filter:
 *   that filter would read the whole collection). A reader takes it (version V) and then looks up claim V+1,
 *   V+2, … by `_id` until one is missing: the newest claim is the thread. A writer's claim insert that finds V+1
 *   taken continues from that claim's document the same way.
 * - Why an older version can never win: the cache may be overwritten with an older version (an owner that
 *   stalled between claim and apply while others built on its claim), but the claims after it are still there,
 *   so every read and every write walks past the stale cache to the newest claim and the next write puts the
 *   cache right. An owner never applies a claim older than CLAIM_APPLY_WITHIN_MS, and claims are forgotten only
 *   after CLAIM_FORGET_MS, when the cache holds their version or a later one: a forgotten claim can only be one
 *   that no stale owner can still write over (that would take a stall of more than their difference between
 *   the age check and the write reaching the server).
 * - A writer that dies between claim and apply leaves the cache one version behind: readers see its claim, and
 *   the next read through `read` (the outbox sweep reads every thread whose events are waiting) repairs it.
 */
export class ClaimedThreadWriter implements ThreadWriter {
  readonly strategy = 'claims' as const;

  constructor(
    private readonly threads: Collection<ThreadDoc>,
    private readonly claims: Collection<ThreadWriteDoc>,
    private readonly onClaim: (claim: ThreadWriteDoc) => void = () => {},
  ) {}

  async read(id: string): Promise<ThreadDoc | null> {
    const cached = await this.threads.findOne({ _id: id });
    if (!cached) return null;
    let newest = cached;
    let newestAt = 0;
    for (;;) {
      const claim = await this.claims.findOne({ _id: claimId(id, newest.version + 1) });
      if (!claim) break;
      newest = claim.doc;
      newestAt = claim.at.getTime();
    }
    // Its writer died between claim and apply, or a stalled owner wrote an older version: put the cache right.
    // A young claim is left to its owner, which is applying it right now (repairing it too would only add writes).
    if (newest !== cached && Date.now() - newestAt > OWNER_APPLIES_MS) await this.threads.replaceOne({ _id: id }, newest);
    return newest;
  }

  /** The newest version reachable from `doc` by following claims `${id}:${version + 1}`. */
  private async newestFrom(doc: ThreadDoc): Promise<ThreadDoc> {
    let current = doc;
    for (;;) {
      const claim = await this.claims.findOne({ _id: claimId(current._id, current.version + 1) });
      if (!claim) return current;
      current = claim.doc;
    }
  }

  async write(id: string, change: ThreadChange): Promise<ThreadWrite> {
    const deadline = Date.now() + CONTENDED_WRITE_MS;
    let current = await this.threads.findOne({ _id: id });
    if (!current) return { before: null, after: null };
    for (let attempt = 0; Date.now() < deadline; attempt += 1) {
      const changed = change(current);
      if (!changed) {
        // The precondition failed on what may be a stale cache: judge it on the newest version before saying no.
        const newest = await this.newestFrom(current);
        if (newest.version === current.version) return { before: current, after: null };
        current = newest;
        continue;
      }
      const next: ThreadDoc = { ...changed, _id: id, version: current.version + 1 };
      const claim: ThreadWriteDoc = { _id: claimId(id, next.version), thread_id: id, version: next.version, doc: next, at: new Date() };
      try {
        await this.claims.insertOne(claim);
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        // Version N+1 is someone else's: continue from it (and from any claims after it).
        const taken = await this.claims.findOne({ _id: claim._id });
        if (taken) current = await this.newestFrom(taken.doc);
        if (attempt > 0) await sleep(backoffMs(attempt));
        continue;
      }
      this.onClaim(claim);
      // The age check guards the stale-owner case in the class comment; a write older than this is left to the chain.
      if (Date.now() - claim.at.getTime() < CLAIM_APPLY_WITHIN_MS) await this.threads.replaceOne({ _id: id }, next);
      return { before: current, after: next };
    }
    throw new RelayError('state_changed', 'The thread is changing too fast right now; read it again and retry');
  }
}

export function claimId(threadId: string, version: number): string {
  return `${threadId}:${version}`;
}

/** Jittered, capped backoff for writers that lost a race on the same document. */
export function backoffMs(attempt: number): number {
  return Math.random() * Math.min(5 * 2 ** Math.min(attempt, 5), 100);
}
