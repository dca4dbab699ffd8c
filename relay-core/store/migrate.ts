// Brings a database written by an earlier layout up to this one, on start and by `handoff-relay migrate`.
// Idempotent (a version marker in `meta`), resumable (each step picks up what is left), with progress lines.
import type { OutboxEntryDoc, ThreadDoc, TimerDoc } from '../domain/documents';
import type { EventEntryDoc } from './event-log';
import type { MongoStore } from './mongo-store';
import { jobKey } from './outbox-ledger';
import { readerKey } from './read-marks';
import { inParallel } from '../ops/in-parallel';
import { putById } from './thread-writes';

/**
 * 1: outbox as flags on threads, lists by query. 2: outbox entries, and on FerretDB mailbox logs, message blocks,
 * minute buckets and claims. 3: one design on every engine: conditional replaces, lists and lookups by index.
 * 4: event logs and open approvals read by index, without marks, heads or a collection of the open approvals.
 * 5: a task that has had an A2A push config is marked on its thread (ThreadDoc.push_configs).
 * 6: a thread's armed timer step and its events' pending jobs are on the thread (`next_timer` and `next_due_at`,
 *    `jobs_pending` and `pending_since`), not in the `timers` and `outbox_entries` collections.
 * 7: an unclaimed thread is marked `claimable` (store/thread-lists.ts withClaimable), which its candidates' lists read.
 * 8: the web inbox's text search: each thread's words for its participants in `thread_terms`.
 * 9: the text search under a text index: one document per thread in `thread_text` (thread-text.ts).
 * 10: what each reader has seen of a thread is on the thread (`reads`, read-marks.ts), not in `thread_reads`.
 * 11: a card's skills and owned repos are found through multikey indexes of `agents`, not tags in `agent_tags`.
 */
export const SCHEMA_VERSION = 11;
const MARKER_ID = 'schema';
/** Up to layout 3: set once the pending approvals of an earlier layout were in the `approvals_open` collection. */
const OPEN_APPROVALS_ID = 'open_approvals_placed';
const WRITERS = 8;
/** Documents one step of a migration reads and writes per command. */
const PAGE = 1_000;

export async function schemaVersion(store: MongoStore): Promise<number> {
  return ((await store.meta.findOne({ _id: MARKER_ID }))?.value as number | undefined) ?? 1;
}

/**
 * Runs every step still to do and returns how many threads it touched. On an up-to-date database it costs one
 * `_id` read. The steps read whole collections once: this is the one place allowed to, and a new database has
 * nothing to read. Run it before the relay serves (start does): a relay of the previous layout writing meanwhile
 * could leave a write in a claims collection this drops.
 */
export async function migrateStore(store: MongoStore, progress: (line: string) => void): Promise<number> {
  const current = await schemaVersion(store);
  if (current >= SCHEMA_VERSION) return 0;
  let touched = 0;

  // Step 0, before anything here writes: the claims of FerretDB writes up to layout 2 that no document holds yet.
  if (current < 3) touched += await applyClaims(store, progress);

  // Step 1: events the previous sweep had not yet seen on their queues get their jobs pending.
  // (A clean thread keeps its `outbox_dirty: false`: nothing reads it any more.)
  const dirty =
    current >= 2 ? [] : await store.threads.find({ outbox_dirty: true }, { projection: { _id: 1 } }).toArray();
  if (dirty.length > 0)
    progress(`migrate: marking the unsent events of ${dirty.length.toLocaleString('en')} threads pending`);
  await inParallel(dirty, WRITERS, async ({ _id }) => {
    await store.writeThread(_id, (doc) =>
      doc.outbox_dirty === undefined
        ? undefined
        : store.outbox.withPending(
            withoutOutboxFlags(doc),
            doc.outbox.slice(doc.outbox_enqueued ?? 0),
            new Date(),
            LAYOUT_5_QUEUES,
          ),
    );
  });
  touched += dirty.length;

  // Step 2: the event logs and open approvals of layout 3 and before, as indexes read them now. What the relay kept
  // where the embedded FerretDB served no index goes last (dropLegacyCollections). A thread's own `mailbox` and
  // `recent_messages` fields stay, unread, and so do an old event log's entries (read by their `handle` and `seq`).
  if (current < 4) {
    touched += await settleEventLogs(store, progress);
    await markOpenApprovals(store, progress);
  }

  // Step 3: an event's fan-out reads a task's push configs only when its thread is marked; configs made before the
  // mark would never be read again.
  if (current < 5) touched += await markPushTasks(store, progress);

  // Step 4: each open thread's armed timer step, and the pending jobs of its events, move onto the thread.
  if (current < 6) {
    touched += await moveTimersOntoThreads(store, progress);
    touched += await moveOutboxOntoThreads(store, progress);
  }

  // Step 5: the unclaimed handoffs are read through their mark, no longer by status.
  if (current < 7) {
    const marked = await store.threads.updateMany({ status: 'unclaimed' }, { $set: { claimable: 1 } });
    if (marked.modifiedCount > 0)
      progress(`migrate: ${marked.modifiedCount.toLocaleString('en')} unclaimed handoffs marked claimable`);
    touched += marked.modifiedCount;
  }

  // Step 6: the words of every thread, under the text index; the words per participant of layout 8 go.
  if (current < 9) {
    touched += await fillThreadText(store, progress);
    if ((await store.db.listCollections({ name: 'thread_terms' }, { nameOnly: true }).toArray()).length > 0)
      await store.db.collection('thread_terms').drop();
  }

  // Step 7: the read marks move onto their threads.
  if (current < 10) touched += await moveReadMarksOntoThreads(store, progress);

  // Step 8: what indexes serve now goes (mailbox logs, message blocks, the timers' minute buckets, the teammate
  // directory's change log, the event logs' marks and heads, the cards' tags: MongoStore.ensureIndexes).
  await dropLegacyCollections(store, current, progress);

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
    await inParallel([...newest.values()], WRITERS, async (doc) => {
      for (;;) {
        const stored = await collection.findOne({ _id: doc._id });
        if (!stored || (stored.version ?? 0) >= (doc.version ?? 0)) return;
        const replaced = await collection.replaceOne(
          { _id: doc._id, version: stored.version ?? { $exists: false } },
          doc,
        );
        if (replaced.matchedCount === 1) {
          applied += 1;
          return;
        }
      }
    });
    await store.db.collection(claims).drop();
  }
  if (applied > 0)
    progress(`migrate: ${applied.toLocaleString('en')} writes of an earlier relay applied from its claims`);
  return applied;
}

/**
 * Up to layout 3, an event's place in a log was the entry its mark (`event_marks`, `handle|event id` → position)
 * named; another entry of the event (two recorders raced, or one died before its mark) was skipped by readers. Each
 * entry its mark names gets its `event_id` (the unique `by_event` index needs it); the others go. One pass over the
 * logs, a page at a time, and a rerun skips the entries done.
 */
async function settleEventLogs(store: MongoStore, progress: (line: string) => void): Promise<number> {
  const marks = store.db.collection<{ _id: string; seq: number }>('event_marks');
  const entries = store.eventLog.entries
    .find({}, { projection: { _id: 1, handle: 1, seq: 1, event_id: 1, 'event.id': 1 } })
    .batchSize(PAGE);
  let settled = 0;
  let page: EventEntryDoc[] = [];
  const settle = async () => {
    const names = new Map(
      (await marks.find({ _id: { $in: page.map((e) => `${e.handle}|${e.event.id}`) } }).toArray()).map((m) => [
        m._id,
        m.seq,
      ]),
    );
    const named = new Set(page.filter((e) => names.get(`${e.handle}|${e.event.id}`) === e.seq));
    // One update command each, not one bulk write: the embedded FerretDB holds each statement's read (one of its 100
    // SQLite connections) until its whole command is done, so a command of 100 updates waited forever for a
    // connection, and every other command with it (a relay on a log of 100 events never started).
    await inParallel([...named], WRITERS, async (e) => {
      await store.eventLog.entries.updateOne({ _id: e._id }, { $set: { event_id: e.event.id } });
    });
    const unnamed = page.filter((e) => !named.has(e)).map((e) => e._id);
    if (unnamed.length > 0) await store.eventLog.entries.deleteMany({ _id: { $in: unnamed } });
    settled += page.length;
    page = [];
    progress(`migrate: ${settled.toLocaleString('en')} event log entries settled`);
  };
  for await (const entry of entries) {
    if (entry.event_id !== undefined) continue;
    page.push(entry);
    if (page.length === PAGE) await settle();
  }
  if (page.length > 0) await settle();
  return settled;
}

/**
 * Up to layout 3, the open approvals had a collection of their own (`approvals_open`), and before it (no
 * OPEN_APPROVALS_ID marker) the sweep read the pending ones: those are marked open on their listing entries now.
 */
async function markOpenApprovals(store: MongoStore, progress: (line: string) => void): Promise<void> {
  const ledgered = (await store.meta.findOne({ _id: OPEN_APPROVALS_ID })) !== null;
  const open = ledgered
    ? store.db.collection<{ _id: string }>('approvals_open').find({})
    : store.approvals.find({ status: 'pending' });
  const ids = (await open.project<{ _id: string }>({ _id: 1 }).toArray()).map((doc) => doc._id);
  for (let i = 0; i < ids.length; i += PAGE)
    await store.approvals.updateMany({ _id: { $in: ids.slice(i, i + PAGE) } }, { $set: { open: 1 } });
  await store.meta.deleteOne({ _id: OPEN_APPROVALS_ID });
  if (ids.length > 0)
    progress(`migrate: ${ids.length.toLocaleString('en')} open approvals marked on their listing entries`);
}

/** Marks the thread of every task with push configs (one document per such task, so the collection is small). */
async function markPushTasks(store: MongoStore, progress: (line: string) => void): Promise<number> {
  const tasks = await store.pushConfigs.docs.find({}, { projection: { _id: 1 } }).toArray();
  let marked = 0;
  await inParallel(tasks, WRITERS, async ({ _id }) => {
    const { after } = await store.writeThread(_id, (thread) =>
      thread.push_configs ? undefined : { ...thread, push_configs: true },
    );
    if (after) marked += 1;
  });
  if (marked > 0) progress(`migrate: ${marked.toLocaleString('en')} tasks with A2A push configs marked`);
  return marked;
}

/**
 * Up to layout 5, a thread's armed step was a row of its own in `timers` (`_id` = the thread's). Each row goes onto
 * its thread (a rerun sets the same fields again); then the collection goes.
 */
async function moveTimersOntoThreads(store: MongoStore, progress: (line: string) => void): Promise<number> {
  const timers = store.db.collection<TimerDoc>('timers');
  const rows = await timers.find({}).toArray();
  await inParallel(rows, WRITERS, async ({ _id, due_at, ...step }) => {
    await store.threads.updateOne({ _id }, { $set: { next_timer: step, next_due_at: due_at } });
  });
  if ((await store.db.listCollections({ name: 'timers' }, { nameOnly: true }).toArray()).length > 0)
    await timers.drop();
  if (rows.length > 0)
    progress(`migrate: the armed timer steps of ${rows.length.toLocaleString('en')} threads moved onto the threads`);
  return rows.length;
}

/**
 * Up to layout 5, an event whose jobs had not finished had an entry in `outbox_entries` naming their queues (every
 * queue, on entries written before layout 5). Each entry's jobs go onto its thread, pending since the entry was
 * written (a rerun adds none twice); then the collection goes.
 */
async function moveOutboxOntoThreads(store: MongoStore, progress: (line: string) => void): Promise<number> {
  const entries = store.db.collection<OutboxEntryDoc>('outbox_entries');
  const byThread = new Map<string, OutboxEntryDoc[]>();
  for (const entry of await entries.find({}).toArray())
    byThread.set(entry.thread_id, [...(byThread.get(entry.thread_id) ?? []), entry]);
  await inParallel([...byThread], WRITERS, async ([threadId, waiting]) => {
    await store.writeThread(threadId, (doc) => {
      const keys = waiting.flatMap((entry) => (entry.jobs ?? LAYOUT_5_QUEUES).map((queue) => jobKey(queue, entry._id)));
      const pending = doc.jobs_pending ?? [];
      const added = keys.filter((key) => !pending.includes(key) && doc.outbox.some((e) => key.endsWith(`:${e.id}`)));
      if (added.length === 0) return undefined;
      const since = new Date(Math.min(...waiting.map((entry) => entry.at.getTime())));
      return {
        ...doc,
        jobs_pending: [...pending, ...added],
        pending_since: doc.pending_since && doc.pending_since < since ? doc.pending_since : since,
      };
    });
  });
  if ((await store.db.listCollections({ name: 'outbox_entries' }, { nameOnly: true }).toArray()).length > 0)
    await entries.drop();
  if (byThread.size > 0)
    progress(`migrate: the events in flight of ${byThread.size.toLocaleString('en')} threads moved onto the threads`);
  return byThread.size;
}

/** How far fillThreadText got (the last thread `_id` done), so a stopped migration picks up there. */
const TEXT_FILLED_ID = 'thread_text_filled_through';
/** Threads whose words one round of fillThreadText writes (their messages are one more query). */
const TEXT_PAGE = 200;

/**
 * Up to layout 8 the search had no text index: each thread's words (its own and its messages' bodies) go into
 * `thread_text`, in `_id` order a page at a time (the threads, their messages, one insert). Resumable (the last
 * `_id` done is kept in `meta`) and idempotent (a thread already there keeps its document).
 */
async function fillThreadText(store: MongoStore, progress: (line: string) => void): Promise<number> {
  let through = ((await store.meta.findOne({ _id: TEXT_FILLED_ID }))?.value as string | undefined) ?? '';
  let filled = 0;
  for (;;) {
    const page = await store.threads
      .find({ _id: { $gt: through } })
      .sort({ _id: 1 })
      .limit(TEXT_PAGE)
      .toArray();
    if (page.length === 0) break;
    const bodies = await store.messageBodies(page.map((d) => d._id));
    await store.text.addThreads(page.map((doc) => ({ doc, messages: bodies.get(doc._id) ?? [] })));
    filled += page.length;
    through = page[page.length - 1]!._id;
    await putById(store.meta, TEXT_FILLED_ID, { value: through, at: new Date() });
    progress(`migrate: the words of ${filled.toLocaleString('en')} threads written for the inbox search`);
  }
  await store.meta.deleteOne({ _id: TEXT_FILLED_ID });
  return filled;
}

/**
 * Up to layout 9, what a reader had seen of a thread was a document of its own in `thread_reads` (`_id`
 * `<thread id>:<handle>`, `seen`). Each goes onto its thread (`$max`: a mark written since, by a relay of this layout,
 * is kept when higher), a page at a time; then the collection goes. Resumable and idempotent as it is.
 */
async function moveReadMarksOntoThreads(store: MongoStore, progress: (line: string) => void): Promise<number> {
  const old = store.db.collection<{ _id: string; seen: number }>('thread_reads');
  if ((await store.db.listCollections({ name: 'thread_reads' }, { nameOnly: true }).toArray()).length === 0) return 0;
  let moved = 0;
  let through = '';
  for (;;) {
    const page = await old
      .find({ _id: { $gt: through } })
      .sort({ _id: 1 })
      .limit(PAGE)
      .toArray();
    if (page.length === 0) break;
    const updates = page.map((mark) => {
      const at = mark._id.lastIndexOf(':');
      const field = `reads.${readerKey(mark._id.slice(at + 1))}`;
      return { updateOne: { filter: { _id: mark._id.slice(0, at) }, update: { $max: { [field]: mark.seen } } } };
    });
    // Fifty statements a command: the embedded FerretDB stalls on commands of a hundred (outbox-ledger.ts).
    for (let i = 0; i < updates.length; i += 50)
      await store.threads.bulkWrite(updates.slice(i, i + 50), { ordered: false });
    moved += page.length;
    through = page[page.length - 1]!._id;
    progress(`migrate: ${moved.toLocaleString('en')} read marks moved onto their threads`);
  }
  await old.drop();
  return moved;
}

/**
 * The queues an event's jobs went to up to layout 5 (an entry of before layout 5 names none: it waited for each).
 * Without Slack the sweep finds no `slack` queue to wait for, and takes that job out.
 */
const LAYOUT_5_QUEUES = ['webhooks', 'slack'];

/** The collections of the structures each layout replaced with indexes. */
const LEGACY_COLLECTIONS: Record<number, string[]> = {
  3: [
    'mailbox_entries',
    'mailbox_heads',
    'mailbox_blocks',
    'message_blocks',
    'timer_due',
    'timer_due_heads',
    'timer_due_marks',
  ],
  4: ['event_marks', 'event_heads', 'approvals_open'],
  11: ['agent_tags'],
};
/** Their `meta` documents: the mailboxes' placement marker, the due ledger's cursor, the directory log's head. */
const LEGACY_META = ['mailboxes_placed', 'timers_due_cursor', 'agents_log_head'];

async function dropLegacyCollections(
  store: MongoStore,
  current: number,
  progress: (line: string) => void,
): Promise<void> {
  const existing = new Set((await store.db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name));
  const legacy = Object.entries(LEGACY_COLLECTIONS).flatMap(([layout, names]) =>
    Number(layout) > current ? names : [],
  );
  const dropped = legacy.filter((name) => existing.has(name));
  for (const name of dropped) await store.db.collection(name).drop();
  await store.meta.deleteMany({ _id: { $in: LEGACY_META } });
  // The directory's change log: `agents_log#<n>`, one entry per card change ever made.
  await store.meta.deleteMany({ _id: { $regex: /^agents_log#/ } });
  if (dropped.length > 0)
    progress(
      `migrate: dropped ${dropped.join(', ')} (indexes serve lists, messages, timers, event logs and cards now)`,
    );
}

function withoutOutboxFlags(doc: ThreadDoc): ThreadDoc {
  const { outbox_dirty: _d, outbox_enqueued: _e, ...rest } = doc;
  return rest;
}
