// The versioned write every state change of a thread (and of a teammate's document, a run, a task's push configs) goes
// through: a read, a pure change, and one conditional update on the version read, on every engine (the embedded
// FerretDB build makes that update atomic: scripts/local-services/ferretdb-patches/).
import { setTimeout as sleep } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import type { Collection, Filter, UpdateFilter } from 'mongodb';
import { RelayError } from '../domain/errors';

/** The server's duplicate-key error (a MongoServerError with code 11000), told by its code without loading the driver. */
export function isDuplicateKey(error: unknown): boolean {
  return error instanceof Error && (error as { code?: unknown }).code === 11000;
}

/** How long a write keeps retrying against concurrent writers of the same thread before state_changed. */
const CONTENDED_WRITE_MS = 5_000;

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
 * A list field that versioned writes only add to, while others take items out of it with their own atomic update
 * (store/outbox-ledger.ts: a thread's pending jobs, taken out by the workers), and the date it has held items since.
 */
export interface AppendedList {
  list: string;
  since: string;
}

export interface WriteOptions {
  /** A write of fields beside the document's state (a thread's armed timer step): the version stays as it was. */
  keepVersion?: boolean;
}

/**
 * Reads the current version of a document and applies one change to it that no concurrent write can interleave with:
 * `updateOne({ _id, version: N })` is atomic and one round trip, so a write is a read, the change, and that
 * conditional update of the fields it changed; losing the race means reading again. Fields it left alone may be
 * written meanwhile by updates of their own (an appended list's removals, a thread's timer step), which it keeps.
 */
export class VersionedWriter<T extends Versioned> {
  constructor(
    private readonly docs: Collection<T>,
    private readonly what: string,
    private readonly appended?: AppendedList,
  ) {}

  read(id: string): Promise<T | null> {
    return this.docs.findOne(byId<T>(id)) as Promise<T | null>;
  }

  /**
   * `from`: a version of the document this writer returned moments ago (a read, or a write's `after`); the write
   * starts from it instead of reading the document first. One that another write has passed since costs a retry,
   * never a lost write.
   */
  async write(id: string, change: Change<T>, from?: T, opts: WriteOptions = {}): Promise<VersionedWrite<T>> {
    const deadline = Date.now() + CONTENDED_WRITE_MS;
    for (let attempt = 0; Date.now() < deadline; attempt += 1) {
      const current = attempt === 0 && from?._id === id ? from : await this.read(id);
      if (!current) return { before: null, after: null };
      // What the change is compared with: a copy, so a change that edits `current` in place still writes its edits.
      const read = structuredClone(current);
      const changed = change(current);
      if (!changed) return { before: current, after: null };
      const next = { ...changed, _id: id, version: opts.keepVersion ? current.version : (current.version ?? 0) + 1 };
      const filter = { _id: id, version: current.version ?? { $exists: false } } as Filter<T>;
      const updated = await this.docs.updateOne(filter, this.update(read, next));
      if (updated.matchedCount === 1) return { before: current, after: next };
      await sleep(backoffMs(attempt));
    }
    throw new RelayError('state_changed', `The ${this.what} is changing too fast right now; read it again and retry`);
  }

  /** The fields of `next` that differ from `before` set, those it dropped unset; the appended list's new items pushed. */
  private update(before: T, next: T): UpdateFilter<T> {
    const old = before as Record<string, unknown>;
    const now = next as Record<string, unknown>;
    const { list, since } = this.appended ?? { list: '', since: '' };
    const $set: Record<string, unknown> = {};
    const $unset: Record<string, ''> = {};
    for (const [field, value] of Object.entries(now)) {
      if (field === '_id' || field === list || field === since || value === undefined) continue;
      if (!isDeepStrictEqual(old[field], value)) $set[field] = value;
    }
    for (const field of Object.keys(old))
      if (field !== list && field !== since && old[field] !== undefined && now[field] === undefined) $unset[field] = '';
    const update: Record<string, unknown> = { $set };
    if (Object.keys($unset).length > 0) update.$unset = $unset;
    const had = new Set((old[list] as string[] | undefined) ?? []);
    const added = ((now[list] as string[] | undefined) ?? []).filter((item) => !had.has(item));
    if (added.length > 0) {
      update.$push = { [list]: { $each: added } };
      // The earliest wins: items another write added since the read may be older.
      update.$min = { [since]: now[since] };
    }
    return update as UpdateFilter<T>;
  }
}

function byId<T>(id: string): Filter<T> {
  return { _id: id } as Filter<T>;
}

/**
 * Replaces document `id` with `doc`, inserting it when missing. Two upserts of a missing `_id` can race to the
 * insert (on FerretDB and MongoDB alike); the loser then finds the document and replaces it.
 */
export async function putById<T extends { _id: string }>(
  docs: Collection<T>,
  id: string,
  doc: Omit<T, '_id'>,
): Promise<void> {
  try {
    await docs.replaceOne(byId<T>(id), doc as T, { upsert: true });
  } catch (error) {
    if (!isDuplicateKey(error)) throw error;
    await docs.replaceOne(byId<T>(id), doc as T);
  }
}

/** Jittered, capped backoff for writers that lost a race on the same document. */
export function backoffMs(attempt: number): number {
  return Math.random() * Math.min(5 * 2 ** Math.min(attempt, 5), 100);
}
