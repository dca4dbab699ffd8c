// Idempotent mutations: the same caller, key and body get the original outcome, however often and concurrently.
import { setTimeout as sleep } from 'node:timers/promises';
import { canonicalHash, sha256Hex } from '../domain/canonical-json';
import { withCanonicalLines } from '../domain/schemas';
import type { IdempotencyDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';
import type { MongoStore } from '../store/mongo-store';
import { isDuplicateKey } from '../store/thread-writes';

// The first insert of the key's record runs the operation; everyone else waits for and replays its outcome.

/** A run whose owner has been silent this long is presumed dead and may be taken over. */
const ABANDONED_MS = 30_000;
const WAIT_MS = 15_000;

/** A stable UUID-shaped id from a caller and its key: uniqueness lives in `_id` (no optional unique index). */
export function idempotentId(caller: string, scope: string, key: string): string {
  const hex = sha256Hex(`${caller}\u0000${scope}\u0000${key}`);
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * What the operation is told of its turn: the key's ledger id, and whether it took the key over from an owner that
 * died mid-way (its writes may be partly or wholly in place, so an operation that is not naturally repeatable,
 * like an append, looks for them first).
 */
export interface LedgerTurn {
  id: string;
  retaken: boolean;
}

export class IdempotencyLedger {
  constructor(private readonly store: MongoStore) {}

  async run<T>(
    caller: string,
    key: string | undefined,
    body: unknown,
    operation: (turn: LedgerTurn | null) => Promise<T>,
  ): Promise<T> {
    if (key === undefined) return operation(null);
    const id = idempotentId(caller, 'mutation', key);
    const requestHash = canonicalHash(withCanonicalLines(body));
    const deadline = Date.now() + WAIT_MS;
    let retaken = false;
    for (let attempt = 0; ; attempt += 1) {
      try {
        await this.store.idempotency.insertOne({
          _id: id,
          request_hash: requestHash,
          state: 'running',
          created_at: new Date(),
        });
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        const existing = await this.store.idempotency.findOne({ _id: id });
        if (!existing) continue; // taken over and cleared meanwhile: try to own it
        if (existing.request_hash !== requestHash) {
          throw new RelayError(
            'duplicate_idempotency_key',
            'This idempotency key was already used with a different request',
          );
        }
        if (existing.state === 'done') return replay<T>(existing);
        if (Date.now() - existing.created_at.getTime() > ABANDONED_MS) {
          // Whoever ends up owning the key after this, a dead owner's writes may be in place.
          retaken = true;
          await this.store.idempotency.deleteOne({ _id: id, state: 'running', created_at: existing.created_at });
        } else if (Date.now() > deadline) {
          throw new RelayError('state_changed', 'The same request is still running; retry in a moment');
        } else {
          await sleep(Math.min(10 * (attempt + 1), 100));
        }
        continue;
      }
      return this.own(id, () => operation({ id, retaken }));
    }
  }

  private async own<T>(id: string, operation: () => Promise<T>): Promise<T> {
    let outcome: Pick<IdempotencyDoc, 'result' | 'error'>;
    let result: T;
    try {
      result = await operation();
      outcome = { result };
    } catch (error) {
      if (!(error instanceof RelayError) || error.code === 'internal' || error.code === 'rate_limited') {
        // Not an answer to this request: let a retry run it again.
        await this.store.idempotency.deleteOne({ _id: id });
        throw error;
      }
      await this.store.idempotency.updateOne(
        { _id: id },
        { $set: { state: 'done', error: { code: error.code, message: error.message, details: error.details } } },
      );
      throw error;
    }
    await this.store.idempotency.updateOne({ _id: id }, { $set: { state: 'done', ...outcome } });
    return result;
  }
}

function replay<T>(doc: IdempotencyDoc): T {
  if (doc.error) throw new RelayError(doc.error.code as RelayError['code'], doc.error.message, doc.error.details);
  return doc.result as T;
}
