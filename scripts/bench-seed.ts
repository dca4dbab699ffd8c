// Bench data: grows the relay's threads and agents collections in bulk, each document a copy of a real
// one the relay wrote (so sizes and fields match), with _id, dates, parties and status varied.
import { randomUUID } from 'node:crypto';
import type { Collection } from 'mongodb';
import type { AgentDoc, ThreadDoc } from '../relay-core/domain/documents';
import type { ThreadStatus } from '../relay-core/domain/schemas';
import type { MongoStore } from '../relay-core/store/mongo-store';

const BATCH = 2_000;
const DAY_MS = 24 * 3600 * 1000;

/** Status mix of the seeded threads: an inbox is mostly finished work with some open handoffs. */
const STATUS_CYCLE: readonly ThreadStatus[] = [
  'pending',
  'accepted',
  'completed',
  'completed',
  'declined',
  'completed',
  'cancelled',
  'pending',
  'completed',
  'completed',
];

/** The measuring reader receives every MAILBOX_EVERY-th thread, so its mailbox grows with the collection. */
export const MAILBOX_EVERY = 10;
/** The agents/list role, skill and repo filters each match this many teammates at every scale (an index should find them). */
export const TARGET_SKILL_HOLDERS = 20;
export const TARGET_SKILL = 'bench-target-skill';
export const TARGET_ROLE = 'bench-target-role';
export const TARGET_REPO = 'bench-target-repo/';

export function seededHandle(i: number): string {
  return `mate-${String(i).padStart(5, '0')}@bench`;
}

export function seededAgent(template: AgentDoc, i: number, epoch: number): AgentDoc {
  const handle = seededHandle(i);
  const at = new Date(epoch + i * 1000);
  const skills = [`skill-${i % 50}`, `skill-${(i * 7) % 300}`];
  if (i < TARGET_SKILL_HOLDERS) skills.push(TARGET_SKILL);
  return {
    ...template,
    _id: handle,
    handle,
    team: 'bench',
    name: `Teammate ${i}`,
    role: i < TARGET_SKILL_HOLDERS ? TARGET_ROLE : `role-${i % 40}`,
    skills,
    repos_owned: i < TARGET_SKILL_HOLDERS ? [TARGET_REPO] : [`repo-${i % 200}/`],
    slack_user_id: null,
    created_at: at,
    updated_at: at,
  };
}

/** Thread i of the seed: to the reader every MAILBOX_EVERY-th time, else between two seeded teammates. */
/** Status of seeded thread i. */
function seededStatus(i: number): ThreadStatus {
  return STATUS_CYCLE[Math.floor(i / MAILBOX_EVERY) % STATUS_CYCLE.length]!;
}

/** How many of the reader's seeded threads are open (pending or accepted) once `threads` are seeded. */
export function openInMailbox(threads: number): number {
  let open = 0;
  for (let i = 0; i < threads; i += MAILBOX_EVERY) if (['pending', 'accepted'].includes(seededStatus(i))) open++;
  return open;
}

export function seededThread(
  thread: ThreadDoc,
  i: number,
  opts: { reader: string; teammates: number; epoch: number },
): ThreadDoc {
  // Without what the template's own life left on it: its jobs in flight and its armed timer step (history's threads
  // have neither running: no sweep is to work through them during a measurement).
  const {
    jobs_pending: _jobs,
    pending_since: _since,
    next_timer: _step,
    next_due_at: _due,
    timer_version: _armed,
    ...template
  } = thread;
  const status = seededStatus(i);
  const from = seededHandle(i % opts.teammates);
  const to = i % MAILBOX_EVERY === 0 ? opts.reader : seededHandle((i + 1) % opts.teammates);
  const created = new Date(opts.epoch + i * 60_000);
  const changed = status === 'pending' ? created : new Date(created.getTime() + DAY_MS);
  const stamp = (s: ThreadStatus) => (status === s ? changed : null);
  const via = template.status_history[0]!.via;
  return {
    ...template,
    _id: randomUUID(),
    from,
    to,
    status,
    status_history:
      status === 'pending'
        ? [{ status: 'pending', by: from, at: created, via }]
        : [
            { status: 'pending', by: from, at: created, via },
            { status, by: status === 'cancelled' ? from : to, at: changed, via },
          ],
    created_at: created,
    updated_at: changed,
    accepted_at: status === 'accepted' || status === 'completed' ? changed : null,
    completed_at: stamp('completed'),
    declined_at: stamp('declined'),
    cancelled_at: stamp('cancelled'),
    outbox: [{ ...template.outbox[0]!, id: randomUUID(), at: created, by: from }],
  };
}

/** Inserts threads make(from..to-1) in batches, oldest first in each. Returns the seconds it took. */
export async function seedThreads(
  store: MongoStore,
  from: number,
  to: number,
  make: (i: number) => ThreadDoc,
  progress: (line: string) => void,
): Promise<number> {
  const started = Date.now();
  let lastReport = started;
  for (let start = from; start < to; start += BATCH) {
    const docs: ThreadDoc[] = [];
    for (let i = start; i < Math.min(to, start + BATCH); i++) docs.push(make(i));
    docs.sort((a, b) => a.created_at.getTime() - b.created_at.getTime());
    await store.threads.insertMany(docs, { ordered: false });
    const done = Math.min(to, start + BATCH);
    if (Date.now() - lastReport > 10_000 || done === to) {
      lastReport = Date.now();
      progress(
        `  threads: ${done.toLocaleString('en')} of ${to.toLocaleString('en')} (${Math.round((done - from) / ((Date.now() - started) / 1000))} docs/s)`,
      );
    }
  }
  return (Date.now() - started) / 1000;
}

/** Inserts make(from..to-1) in batches; reports progress and returns the seconds it took. */
export async function seed<T extends { _id: string }>(
  collection: Collection<T>,
  from: number,
  to: number,
  make: (i: number) => T,
  progress: (line: string) => void,
): Promise<number> {
  const started = Date.now();
  let lastReport = started;
  for (let start = from; start < to; start += BATCH) {
    const docs: T[] = [];
    for (let i = start; i < Math.min(to, start + BATCH); i++) docs.push(make(i));
    await collection.insertMany(docs as never, { ordered: false });
    const done = Math.min(to, start + BATCH);
    if (Date.now() - lastReport > 10_000 || done === to) {
      lastReport = Date.now();
      const seconds = (Date.now() - started) / 1000;
      progress(
        `  ${collection.collectionName}: ${done.toLocaleString('en')} of ${to.toLocaleString('en')} (${Math.round((done - from) / seconds)} docs/s)`,
      );
    }
  }
  return (Date.now() - started) / 1000;
}
