// MongoDB adapter: typed collections, indexes, and the versioned thread write every state change goes through.
import { setTimeout as sleep } from 'node:timers/promises';
import { MongoClient, MongoServerError, type Collection, type CreateIndexesOptions, type Db, type Filter, type IndexSpecification, type OptionalUnlessRequiredId } from 'mongodb';
import type { AgentDoc, AgentWriteDoc, ApiKeyDoc, IdempotencyDoc, MessageDoc, SlackLinkDoc, ThreadDoc, ThreadReadDoc, ThreadWriteDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';

// Only what FerretDB 1.24 also supports: CRUD, unique indexes, simple queries (no transactions, no atomic updates).

export function isDuplicateKey(error: unknown): boolean {
  return error instanceof MongoServerError && error.code === 11000;
}

/** How long a claimed write may stay unapplied before others finish it for its (presumably dead) writer. */
const STALE_CLAIM_MS = 2_000;
/** How long a write keeps retrying against concurrent writers of the same thread before state_changed. */
const CONTENDED_WRITE_MS = 5_000;

export interface VersionedWrite<T> {
  before: T | null;
  after: T | null;
}
export type ThreadWrite = VersionedWrite<ThreadDoc>;

export class MongoStore {
  readonly agents: Collection<AgentDoc>;
  readonly agentWrites: Collection<AgentWriteDoc>;
  readonly apiKeys: Collection<ApiKeyDoc>;
  readonly slackLinks: Collection<SlackLinkDoc>;
  readonly threads: Collection<ThreadDoc>;
  readonly threadWrites: Collection<ThreadWriteDoc>;
  readonly messages: Collection<MessageDoc>;
  readonly threadReads: Collection<ThreadReadDoc>;
  readonly idempotency: Collection<IdempotencyDoc>;

  private constructor(
    private readonly client: MongoClient,
    readonly db: Db,
  ) {
    this.agents = db.collection<AgentDoc>('agents');
    this.agentWrites = db.collection<AgentWriteDoc>('agent_writes');
    this.apiKeys = db.collection<ApiKeyDoc>('api_keys');
    this.slackLinks = db.collection<SlackLinkDoc>('slack_links');
    this.threads = db.collection<ThreadDoc>('threads');
    this.threadWrites = db.collection<ThreadWriteDoc>('thread_writes');
    this.messages = db.collection<MessageDoc>('messages');
    this.threadReads = db.collection<ThreadReadDoc>('thread_reads');
    this.idempotency = db.collection<IdempotencyDoc>('idempotency');
  }

  static async connect(url: string, dbName?: string): Promise<MongoStore> {
    const client = new MongoClient(url, { serverSelectionTimeoutMS: 5_000, maxPoolSize: 20 });
    await client.connect();
    return new MongoStore(client, client.db(dbName));
  }

  /**
   * Creates the indexes (idempotent). One index per command: FerretDB 1.24 drops the connection
   * ("slice bounds out of range") when one createIndexes command names several indexes that exist.
   */
  async ensureIndexes(): Promise<void> {
    const indexes: Array<[Collection<any>, IndexSpecification, CreateIndexesOptions]> = [
      [this.agents, { role: 1 }, { name: 'role' }],
      [this.agents, { skills: 1 }, { name: 'skills' }],
      [this.agents, { repos_owned: 1 }, { name: 'repos_owned' }],
      [this.apiKeys, { handle: 1 }, { name: 'handle' }],
      // tasks/list: equality on the party, newest first, status filtered within (ESR order).
      [this.threads, { to: 1, created_at: -1, status: 1 }, { name: 'inbox' }],
      [this.threads, { from: 1, created_at: -1, status: 1 }, { name: 'sent' }],
      [this.threads, { outbox_dirty: 1, updated_at: 1 }, { name: 'outbox_sweep' }],
      [this.threadWrites, { at: 1 }, { name: 'age' }],
      [this.messages, { thread_id: 1, sequence_no: 1 }, { name: 'thread_order', unique: true }],
      [this.idempotency, { created_at: 1 }, { name: 'age' }],
    ];
    for (const [collection, key, options] of indexes) await collection.createIndex(key, options);
  }

  async ping(): Promise<void> {
    await this.db.command({ ping: 1 });
  }

  async close(): Promise<void> {
    await this.client.close();
  }

  /**
   * Applies `change` to the current thread as one write that no concurrent write can interleave with.
   *
   * FerretDB 1.x evaluates an update's filter and writes the document back in separate steps, so
   * `findOneAndUpdate({ status: 'pending' }, …)` lets two racing callers both win, and two updates of
   * different fields can lose one another. Instead, a write to version N+1 is first claimed by
   * inserting `${id}:${N+1}` into `thread_writes` (a unique `_id`, which every MongoDB-compatible
   * server enforces atomically); only the claim's owner replaces the document. The claim carries the
   * whole new document, so a write whose owner died between the two steps is finished by the next writer.
   *
   * `change` is a pure function of the current document: it returns the next one, or undefined when
   * its precondition no longer holds (then `after` is null and `before` tells the caller why).
   */
  async writeThread(id: string, change: (current: ThreadDoc) => ThreadDoc | undefined): Promise<ThreadWrite> {
    return versionedWrite(this.threads, this.threadWrites, id, change, (next) => ({ thread_id: id, version: next.version }), 'thread');
  }

  /**
   * The same write for a teammate's document: its endpoint is verified by a worker while its owner may change
   * the card or rotate the secret, and a plain FerretDB update of one would undo the other.
   */
  async writeAgent(handle: string, change: (current: AgentDoc) => AgentDoc | undefined): Promise<VersionedWrite<AgentDoc>> {
    return versionedWrite(this.agents, this.agentWrites, handle, change, (next) => ({ handle, version: next.version! }), 'teammate');
  }

  /** Finishes writes whose owners died, then forgets applied claims old enough that nobody can race them. */
  async repairThreadWrites(forgetAfterMs = 60_000): Promise<void> {
    const claims = await this.threadWrites
      .find({ at: { $lte: new Date(Date.now() - STALE_CLAIM_MS) } })
      .sort({ at: 1 })
      .limit(500)
      .toArray();
    if (claims.length === 0) return;
    const ids = [...new Set(claims.map((c) => c.thread_id))];
    const versions = new Map(
      (await this.threads.find({ _id: { $in: ids } }, { projection: { version: 1 } }).toArray()).map((t) => [t._id, t.version]),
    );
    const forgetBefore = Date.now() - forgetAfterMs;
    for (const claim of claims) {
      const version = versions.get(claim.thread_id);
      if (version === claim.version - 1) {
        await this.threads.replaceOne({ _id: claim.thread_id, version }, claim.doc);
      } else if ((version === undefined || version >= claim.version) && claim.at.getTime() < forgetBefore) {
        await this.threadWrites.deleteOne({ _id: claim._id });
      }
    }
  }
}

/**
 * The versioned write of `writeThread` for any collection whose documents carry a `version` (absent counts as 0),
 * with its claims in `claims` (`${id}:${version}`, holding the whole new document).
 */
async function versionedWrite<T extends { _id: string; version?: number }, C extends { _id: string; doc: T; at: Date }>(
  docs: Collection<T>,
  claims: Collection<C>,
  id: string,
  change: (current: T) => T | undefined,
  claimFields: (next: T) => Omit<C, '_id' | 'doc' | 'at'>,
  what: string,
): Promise<VersionedWrite<T>> {
  const byVersion = (version: number | undefined) => ({ _id: id, version: version ?? { $exists: false } }) as Filter<T>;
  const deadline = Date.now() + CONTENDED_WRITE_MS;
  for (let attempt = 0; Date.now() < deadline; attempt += 1) {
    const current = (await docs.findOne({ _id: id } as Filter<T>)) as T | null;
    if (!current) return { before: null, after: null };
    const changed = change(current);
    if (!changed) return { before: current, after: null };
    const version = (current.version ?? 0) + 1;
    const next = { ...changed, _id: id, version } as T;
    const claimId = `${id}:${version}`;
    try {
      await claims.insertOne({ ...claimFields(next), _id: claimId, doc: next, at: new Date() } as unknown as OptionalUnlessRequiredId<C>);
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      // Rolls a claimed-but-unapplied write forward once its owner has had time to apply it.
      const stale = (await claims.findOne({ _id: claimId } as Filter<C>)) as C | null;
      if (stale && Date.now() - stale.at.getTime() >= STALE_CLAIM_MS) await docs.replaceOne(byVersion(current.version), stale.doc);
      await sleep(backoffMs(attempt));
      continue;
    }
    const replaced = await docs.replaceOne(byVersion(current.version), next);
    // Not matched: our read was so old that the claim it raced had already been forgotten; read again.
    if (replaced.matchedCount === 1) return { before: current, after: next };
  }
  throw new RelayError('state_changed', `The ${what} is changing too fast right now; read it again and retry`);
}

/** Jittered, capped backoff for writers that lost a race on the same document. */
export function backoffMs(attempt: number): number {
  return Math.random() * Math.min(5 * 2 ** Math.min(attempt, 5), 100);
}
