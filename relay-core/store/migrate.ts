// Brings a database written by an earlier layout up to this one, on start and by `handoff-relay migrate`.
// Idempotent (a version marker in `meta`), resumable (each step picks up what is left), with progress lines.
import type { ThreadDoc } from '../domain/documents';
import { boxName, type Party } from './mailbox-log';
import type { MongoStore } from './mongo-store';
import { putById } from './thread-writes';

/**
 * 1: outbox as flags on threads, lists by query. 2: outbox entries, mailbox logs where the server needs them.
 * 3: versioned writes are conditional replaces on every engine (no claims collections).
 */
export const SCHEMA_VERSION = 3;
const MARKER_ID = 'schema';
/** Set once every thread is in its mailboxes: a database written on MongoDB (no mailboxes) and then served by FerretDB still needs step 2. */
const MAILBOXES_ID = 'mailboxes_placed';
/** Set once the pending approvals of an earlier layout are in the open approvals the sweep reads (approval-ledger.ts). */
const OPEN_APPROVALS_ID = 'open_approvals_placed';
const BATCH = 1_000;
const WRITERS = 8;

export async function schemaVersion(store: MongoStore): Promise<number> {
  return ((await store.meta.findOne({ _id: MARKER_ID }))?.value as number | undefined) ?? 1;
}

/**
 * Runs every step still to do and returns how many threads it touched. On an up-to-date database it costs one
 * `_id` read. The steps read whole collections once: this is the one place allowed to, and a new database has
 * nothing to read. Run it before the relay serves (start does): a relay of the previous layout writing meanwhile
 * could leave a thread out of its mailbox until the next run.
 */
export async function migrateStore(store: MongoStore, progress: (line: string) => void): Promise<number> {
  const placed = !store.mailbox || (await store.meta.findOne({ _id: MAILBOXES_ID })) !== null;
  const opened = (await store.meta.findOne({ _id: OPEN_APPROVALS_ID })) !== null;
  const current = await schemaVersion(store);
  if (current >= SCHEMA_VERSION && placed && opened) return 0;
  let touched = 0;

  // Step 0, before anything here writes: the claims of FerretDB writes up to layout 2 that no document holds yet.
  if (current < 3) touched += await applyClaims(store, progress);

  // Step 1: events the previous sweep had not yet seen on their queues become outbox entries.
  // (A clean thread keeps its `outbox_dirty: false` where step 2 does not rewrite it: nothing reads it any more.)
  const dirty = current >= 2 ? [] : await store.threads.find({ outbox_dirty: true }, { projection: { _id: 1, outbox: 1, outbox_enqueued: 1 } }).toArray();
  if (dirty.length > 0) progress(`migrate: moving the unsent events of ${dirty.length.toLocaleString('en')} threads into the outbox`);
  await inParallel(dirty, async (doc) => {
    for (const event of doc.outbox.slice(doc.outbox_enqueued ?? 0)) await store.outbox.pending(doc._id, event);
    await store.writeThread(doc._id, (current) => (current.outbox_dirty === undefined ? undefined : withoutOutboxFlags(current)));
  });
  touched += dirty.length;

  // Step 2 (servers whose indexes cannot serve lists): every thread gets its places in the mailbox logs, oldest first.
  if (store.mailbox && !placed) {
    const unplaced = await store.threads
      .find({ mailbox: { $exists: false } }, { projection: { _id: 1, from: 1, to: 1, created_at: 1, status: 1 } })
      .toArray();
    unplaced.sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || (a._id < b._id ? -1 : 1));
    for (let start = 0; start < unplaced.length; start += BATCH) {
      const batch = unplaced.slice(start, start + BATCH);
      const places = await placeInMailboxes(store, batch);
      await inParallel(batch, async (doc) => {
        const mailbox = places.get(doc._id)!;
        await store.writeThread(doc._id, (current) => (current.mailbox ? undefined : { ...withoutOutboxFlags(current), mailbox }));
      });
      touched += batch.length;
      progress(`migrate: ${(start + batch.length).toLocaleString('en')} of ${unplaced.length.toLocaleString('en')} threads placed in their mailboxes`);
    }
    await putById(store.meta, MAILBOXES_ID, { value: true, at: new Date() });
  }

  // Step 3: approvals still pending from before the open-approvals ledger get their entry in it.
  if (!opened) {
    const pending = await store.approvals.find({ status: 'pending' }, { projection: { _id: 1, thread_id: 1, created_at: 1 } }).toArray();
    await inParallel(pending, (doc) => store.openApprovals.open(doc._id, doc.thread_id, doc.created_at));
    if (pending.length > 0) progress(`migrate: ${pending.length.toLocaleString('en')} pending approvals in the open approvals`);
    await putById(store.meta, OPEN_APPROVALS_ID, { value: true, at: new Date() });
  }

  await putById(store.meta, MARKER_ID, { value: SCHEMA_VERSION, at: new Date() });
  progress(`migrate: the database is at layout ${SCHEMA_VERSION}`);
  return touched;
}

/** Up to layout 2, FerretDB's versioned writes claimed version N in a collection of its own, then wrote the document. */
const CLAIMS: ReadonlyArray<{ claims: string; docs: string }> = [
  { claims: 'thread_writes', docs: 'threads' },
  { claims: 'agent_writes', docs: 'agents' },
  { claims: 'run_writes', docs: 'runs' },
  { claims: 'run_box_writes', docs: 'run_boxes' },
  { claims: 'push_config_writes', docs: 'push_configs' },
];

interface ClaimDoc {
  _id: string;
  doc: { _id: string; version?: number };
}

/**
 * Puts the newest claim of each document into the document where its writer died (or was stopped) before applying
 * it, then drops the claims collections. Claims were kept an hour at most, so each collection is small. Returns how
 * many documents it wrote.
 */
async function applyClaims(store: MongoStore, progress: (line: string) => void): Promise<number> {
  const existing = new Set((await store.db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name));
  let applied = 0;
  for (const { claims, docs } of CLAIMS.filter((c) => existing.has(c.claims))) {
    const newest = new Map<string, ClaimDoc['doc']>();
    for (const claim of await store.db.collection<ClaimDoc>(claims).find({}).toArray()) {
      const held = newest.get(claim.doc._id);
      if (!held || (held.version ?? 0) < (claim.doc.version ?? 0)) newest.set(claim.doc._id, claim.doc);
    }
    const collection = store.db.collection<ClaimDoc['doc']>(docs);
    await inParallel([...newest.values()], async (doc) => {
      for (;;) {
        const stored = await collection.findOne({ _id: doc._id });
        if (!stored || (stored.version ?? 0) >= (doc.version ?? 0)) return;
        const replaced = await collection.replaceOne({ _id: doc._id, version: stored.version ?? { $exists: false } }, doc);
        if (replaced.matchedCount === 1) {
          applied += 1;
          return;
        }
      }
    });
    await store.db.collection(claims).drop();
  }
  if (applied > 0) progress(`migrate: ${applied.toLocaleString('en')} writes of an earlier relay applied from its claims`);
  return applied;
}

/**
 * Appends threads (oldest first) to the mailbox logs in bulk and returns each one's places. Threads whose write of
 * those places never lands (an interrupted run) leave entries that lists skip: an entry counts only for the thread
 * that records its position.
 */
export async function placeInMailboxes(
  store: MongoStore,
  threads: ReadonlyArray<Pick<ThreadDoc, '_id' | 'from' | 'to' | 'created_at'> & Partial<Pick<ThreadDoc, 'status'>>>,
): Promise<Map<string, { to: number; from: number }>> {
  const log = store.mailbox;
  if (!log) throw new Error('placeInMailboxes: this server serves lists from its indexes');
  const boxes = new Map<string, Array<{ party: Party; doc: (typeof threads)[number] }>>();
  for (const doc of threads) {
    for (const party of ['to', 'from'] as const) {
      const box = boxName(party, doc[party]);
      const list = boxes.get(box) ?? [];
      list.push({ party, doc });
      boxes.set(box, list);
    }
  }
  const places = new Map<string, { to: number; from: number }>();
  await inParallel([...boxes], async ([box, members]) => {
    // A thread's status as read (a terminal one is so for good) goes into the blocks: lists filtered by status skip it unread.
    const positions = await log.appendMany(box, members.map((m) => ({ thread_id: m.doc._id, created_at: m.doc.created_at, ...(m.doc.status ? { status: m.doc.status } : {}) })));
    members.forEach((m, i) => {
      const place = places.get(m.doc._id) ?? { to: 0, from: 0 };
      place[m.party] = positions[i]!;
      places.set(m.doc._id, place);
    });
  });
  return places;
}

function withoutOutboxFlags(doc: ThreadDoc): ThreadDoc {
  const { outbox_dirty: _d, outbox_enqueued: _e, ...rest } = doc;
  return rest;
}

async function inParallel<T>(items: readonly T[], run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await run(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(WRITERS, items.length) }, lane));
}
