// The versioned write every state change of a thread (and of a teammate's document) goes through, in the two
// strategies the store picks between at connect time: one conditional replace on MongoDB, a claim protocol on
// FerretDB (whose updates are not atomic).
import { setTimeout as sleep } from 'node:timers/promises';
import { MongoServerError, type Collection, type Filter, type OptionalUnlessRequiredId } from 'mongodb';
import { RelayError } from '../domain/errors';
import type { WriteOptions } from '../domain/thread-writer';

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
/**
 * How recent a document passed as a write's `from` must be for the claims writer to start from it: every claim
 * after it was made after it was read, so none of them can have been forgotten yet (CLAIM_FORGET_MS is far longer).
 */
const FROM_WITHIN_MS = 60_000;

/** A document written through a VersionedWriter: `version` is bumped by every write (absent counts as 0). */
export interface Versioned {
  _id: string;
  version?: number;
}

export interface VersionedWrite<T> {
  before: T | null;
  after: T | null;
}

/** `change` is a pure function of the current document: the next one, or undefined when its precondition no longer holds. */
export type Change<T> = (current: T) => T | undefined;

/**
 * Reads a change needs before it can decide (`_id` lookups it then closes over), run on the version the change is
 * about to see, before every call of it: the change itself stays pure and is judged again on each retry.
 */
export type Prepare<T> = (current: T) => Promise<void>;

/** Port: read the current version of a document and apply one change to it that no concurrent write can interleave with. */
export interface VersionedWriter<T extends Versioned> {
  /** Which protocol this is, for logs and the bench. */
  readonly strategy: 'conditional-replace' | 'claims';
  read(id: string): Promise<T | null>;
  /**
   * `from`: a version of the document this writer returned moments ago (a read, or a write's `after`); the write
   * starts from it instead of reading the document first. An older one is ignored; one that another write has
   * passed since costs a retry, never a lost write.
   */
  write(id: string, change: Change<T>, prepare?: Prepare<T>, from?: T, options?: WriteOptions): Promise<VersionedWrite<T>>;
  /** `doc` was inserted just now: it is the current version, and a write may start from it (`from`) like a read's. */
  inserted(doc: T): void;
}

/** A claim on version N of document `id`: `_id` `${id}:${N}`, the whole new document, when it was claimed. */
export interface Claim<T> {
  _id: string;
  doc: T;
  at: Date;
}

/**
 * MongoDB: `findOneAndReplace({ _id, version: N })` is atomic and one round trip, so a write is a read, the change,
 * and that conditional replace; losing the race means reading again.
 */
export class ConditionalWriter<T extends Versioned> implements VersionedWriter<T> {
  readonly strategy = 'conditional-replace' as const;

  constructor(
    private readonly docs: Collection<T>,
    private readonly what: string,
  ) {}

  read(id: string): Promise<T | null> {
    return this.docs.findOne(byId<T>(id)) as Promise<T | null>;
  }

  inserted(): void {
    // The conditional replace checks any `from`'s version.
  }

  async write(id: string, change: Change<T>, prepare?: Prepare<T>, from?: T): Promise<VersionedWrite<T>> {
    const deadline = Date.now() + CONTENDED_WRITE_MS;
    for (let attempt = 0; Date.now() < deadline; attempt += 1) {
      // The conditional replace below checks `from`'s version like any read's.
      const current = attempt === 0 && from?._id === id ? from : await this.read(id);
      if (!current) return { before: null, after: null };
      if (prepare) await prepare(current);
      const changed = change(current);
      if (!changed) return { before: current, after: null };
      const next = { ...changed, _id: id, version: (current.version ?? 0) + 1 };
      const filter = { _id: id, version: current.version ?? { $exists: false } } as Filter<T>;
      const replaced = await this.docs.findOneAndReplace(filter, next, { projection: { _id: 1 } });
      if (replaced) return { before: current, after: next };
      await sleep(backoffMs(attempt));
    }
    throw new RelayError('state_changed', `The ${this.what} is changing too fast right now; read it again and retry`);
  }
}

function byId<T>(id: string): Filter<T> {
  return { _id: id } as Filter<T>;
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
 *   so every read and every write walks past the stale cache to the newest claim, and each writer, after its own
 *   cache write, writes any newer claim it finds (settleCache), so the cache ends at the newest version. An owner never applies a claim older than CLAIM_APPLY_WITHIN_MS, and claims are forgotten only
 *   after CLAIM_FORGET_MS, when the cache holds their version or a later one: a forgotten claim can only be one
 *   that no stale owner can still write over (that would take a stall of more than their difference between
 *   the age check and the write reaching the server).
 * - A writer that dies between claim and apply leaves the cache one version behind: readers see its claim, and
 *   the next read through `read` (the outbox sweep reads every thread whose events are waiting) repairs it.
 */
export class ClaimedWriter<T extends Versioned, C extends Claim<T>> implements VersionedWriter<T> {
  readonly strategy = 'claims' as const;

  constructor(
    private readonly docs: Collection<T>,
    private readonly claims: Collection<C>,
    /** The claim's other fields (e.g. `thread_id`, `version`), for people reading the collection. */
    private readonly claimFields: (next: T) => Omit<C, '_id' | 'doc' | 'at'>,
    private readonly what: string,
    /** Told every claim this writer makes, to clean it up once it has aged out. */
    private readonly onClaim: (claimId: string) => void = () => {},
  ) {}

  /** When each document this writer returned was the newest version (its read, or its own write), for `from`. */
  private readonly currentAt = new WeakMap<T, number>();

  async read(id: string): Promise<T | null> {
    const readAt = Date.now();
    const cached = (await this.docs.findOne(byId<T>(id))) as T | null;
    if (!cached) return null;
    let newest = cached;
    let newestAt = 0;
    for (;;) {
      const claim = await this.claim(id, (newest.version ?? 0) + 1);
      if (!claim) break;
      newest = claim.doc;
      newestAt = claim.at.getTime();
    }
    // Its writer died between claim and apply, or a stalled owner wrote an older version: put the cache right.
    // A young claim is left to its owner, which is applying it right now (repairing it too would only add writes).
    if (newest !== cached && Date.now() - newestAt > OWNER_APPLIES_MS) await this.docs.replaceOne(byId<T>(id), newest);
    this.currentAt.set(newest, readAt);
    return newest;
  }

  inserted(doc: T): void {
    this.currentAt.set(doc, Date.now());
  }

  private async claim(id: string, version: number): Promise<C | null> {
    return (await this.claims.findOne(byId<C>(claimId(id, version)))) as C | null;
  }

  /** The newest version reachable from `doc` by following claims `${id}:${version + 1}`. */
  private async newestFrom(doc: T): Promise<T> {
    let current = doc;
    for (;;) {
      const claim = await this.claim(current._id, (current.version ?? 0) + 1);
      if (!claim) return current;
      current = claim.doc;
    }
  }

  /**
   * Writes `doc` into the cache, then looks for a newer claim and, while there is one, writes that instead. The
   * last cache write of all is then one that no newer claim existed after (a claim made later is applied later by
   * its own writer), so once every writer is done the cache holds the newest version, whatever order the
   * concurrent writes landed in. One `_id` lookup more per write.
   */
  private async settleCache(doc: T): Promise<void> {
    let written = doc;
    await this.docs.replaceOne(byId<T>(doc._id), written);
    for (;;) {
      const newest = await this.newestFrom(written);
      if (newest === written) return;
      written = newest;
      await this.docs.replaceOne(byId<T>(doc._id), written);
    }
  }

  async write(id: string, change: Change<T>, prepare?: Prepare<T>, from?: T, options?: WriteOptions): Promise<VersionedWrite<T>> {
    const deadline = Date.now() + CONTENDED_WRITE_MS;
    // A recent version saves the first read: a claim after it was made after it was read (see FROM_WITHIN_MS).
    const fromAt = from?._id === id ? this.currentAt.get(from) : undefined;
    let current = fromAt !== undefined && Date.now() - fromAt < FROM_WITHIN_MS ? from! : ((await this.docs.findOne(byId<T>(id))) as T | null);
    if (!current) return { before: null, after: null };
    for (let attempt = 0; Date.now() < deadline; attempt += 1) {
      if (prepare) await prepare(current);
      const changed = change(current);
      if (!changed) {
        // The precondition failed on what may be a stale cache: judge it on the newest version before saying no.
        const newest = await this.newestFrom(current);
        if (newest.version === current.version) return { before: current, after: null };
        current = newest;
        continue;
      }
      const version = (current.version ?? 0) + 1;
      const next = { ...changed, _id: id, version };
      const at = new Date();
      try {
        await this.claims.insertOne({ ...this.claimFields(next), _id: claimId(id, version), doc: next, at } as unknown as OptionalUnlessRequiredId<C>);
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        // Version N+1 is someone else's: continue from it (and from any claims after it).
        const taken = await this.claim(id, version);
        if (taken) current = await this.newestFrom(taken.doc);
        if (attempt > 0) await sleep(backoffMs(attempt));
        continue;
      }
      this.onClaim(claimId(id, version));
      this.currentAt.set(next, at.getTime());
      // The age check guards the stale-owner case in the class comment; a write older than this is left to the chain.
      if (!options?.applyWithNextWrite && Date.now() - at.getTime() < CLAIM_APPLY_WITHIN_MS) await this.settleCache(next);
      return { before: current, after: next };
    }
    throw new RelayError('state_changed', `The ${this.what} is changing too fast right now; read it again and retry`);
  }
}

/**
 * Replaces document `id` with `doc`, inserting it when missing. Two upserts of a missing `_id` can race to the
 * insert (on FerretDB and MongoDB alike); the loser then finds the document and replaces it.
 */
export async function putById<T extends { _id: string }>(docs: Collection<T>, id: string, doc: Omit<T, '_id'>): Promise<void> {
  try {
    await docs.replaceOne(byId<T>(id), doc as T, { upsert: true });
  } catch (error) {
    if (!isDuplicateKey(error)) throw error;
    await docs.replaceOne(byId<T>(id), doc as T);
  }
}

export function claimId(id: string, version: number): string {
  return `${id}:${version}`;
}

/** Jittered, capped backoff for writers that lost a race on the same document. */
export function backoffMs(attempt: number): number {
  return Math.random() * Math.min(5 * 2 ** Math.min(attempt, 5), 100);
}
