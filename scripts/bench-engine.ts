// Bench phase `engine` (BENCH_ONLY=engine): the embedded FerretDB alone, driven with the commands an accept and a
// `tasks/get` send it, for work on its build (scripts/local-services/ferretdb-build.ts). The relay's share of a
// request moves 20–40% between runs on these machines and hides a change of a few percent in FerretDB; one FerretDB
// per binary, on the relay's indexes, measured in alternated rounds, shows it.
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Collection } from 'mongodb';
import type { AgentDoc, MessageDoc, ThreadDoc } from '../relay-core/domain/documents';
import type { NewHandoff } from '../relay-core/domain/schemas';
import { newPendingThread } from '../relay-core/domain/thread-lifecycle';
import { MongoStore } from '../relay-core/store/mongo-store';
import { percentile, type PhaseOutput } from './bench-measure';
import { cpuMeter } from './bench-process';
import { startFerretDb, type RunningFerretDb } from './local-services/ferretdb';

export interface EngineOptions extends PhaseOutput {
  /** FerretDB binaries to compare (BENCH_FERRETDB_BINARIES); none: the relay's own build. */
  binaries: string[];
  rounds: number;
  requests: number;
}

/** Threads of about 5 KB (a 2.6 KB diff among the relay's fields) that the rounds read and write across. */
const THREADS = 3_000;
/** Of them, the first this many have 20 messages each (the `tasks/get` read). */
const WITH_MESSAGES = 200;

interface Engine {
  name: string;
  ferret: RunningFerretDb;
  store: MongoStore;
  dir: string;
}

/**
 * Per binary and round, `requests` times: an accept's commands (the thread's `_id` read, its conditional update,
 * both parties' event-log entries, the marks update that follows a second later), then a `tasks/get`'s (the thread,
 * its 20 messages by `thread_order`). FerretDB's CPU per request of each, from /proc.
 */
export async function benchEngine(opts: EngineOptions): Promise<void> {
  const engines: Engine[] = [];
  try {
    for (const binary of opts.binaries.length > 0 ? opts.binaries : [undefined]) {
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'handoff-bench-engine-'));
      const ferret = await startFerretDb({ dataDir: dir, log: opts.progress, ...(binary ? { binary } : {}) });
      const store = await MongoStore.connect(ferret.url, 'bench_engine');
      engines.push({ name: binary ?? "the relay's build", ferret, store, dir });
      await store.ensureIndexes();
      await seedEngine(store);
      opts.progress(`engine: ${binary ?? "the relay's build"} seeded with ${THREADS} threads`);
    }
    let seq = 0;
    const accept = async (store: MongoStore) => {
      const thread = await store.threads.findOne({ _id: threadId((seq * 7919) % THREADS) });
      seq += 1;
      if (!thread) throw new Error('engine bench: a seeded thread is gone');
      const at = new Date();
      const eventId = randomUUID();
      // The accept's own write: the changed fields, on the version read (the history kept at two entries, so that
      // the documents stay the size they start at over any number of rounds).
      const written = await store.threads.updateOne(
        { _id: thread._id, version: thread.version },
        {
          $set: {
            version: thread.version + 1,
            status: thread.status === 'pending' ? 'accepted' : 'pending',
            status_history: [thread.status_history[0]!, { status: 'accepted', at, by: thread.to, via: 'api' }],
            updated_at: at,
            accepted_at: at,
            jobs_pending: [`events:${eventId}`],
            pending_since: at,
          },
        },
      );
      if (written.matchedCount !== 1) throw new Error('engine bench: a conditional update matched nothing');
      await store.eventLog.entries.insertMany(
        [thread.to, thread.from].map((handle) => ({
          _id: `${handle}:${seq}`,
          handle,
          seq,
          thread_id: thread._id,
          event_id: eventId,
          event: { id: eventId, type: 'thread.accepted', at, by: thread.to, via: 'api' },
          recorded_at: at,
        })),
        { ordered: false },
      );
      await store.threads.updateOne(
        { _id: thread._id, jobs_pending: { $all: [`events:${eventId}`], $size: 1 } },
        { $unset: { jobs_pending: '', pending_since: '' } },
      );
    };
    const read = async (store: MongoStore) => {
      const id = threadId(seq % WITH_MESSAGES);
      seq += 1;
      await store.threads.findOne({ _id: id });
      await store.messages
        .find({ thread_id: id, sequence_no: { $in: Array.from({ length: 20 }, (_, n) => n + 1) } })
        .sort({ sequence_no: 1 })
        .toArray();
    };
    // A warm-up of each, not counted: the first commands of a fresh FerretDB prepare its statements and fill its caches.
    for (const engine of engines)
      for (let n = 0; n < Math.min(200, opts.requests); n += 1) {
        await accept(engine.store);
        await read(engine.store);
      }
    const results = new Map<string, { accept: number[]; read: number[] }>();
    for (let round = 1; round <= opts.rounds; round += 1) {
      for (const engine of engines) {
        const figures = results.get(engine.name) ?? { accept: [], read: [] };
        results.set(engine.name, figures);
        for (const [kind, work] of [
          ['accept', accept],
          ['read', read],
        ] as const) {
          const cpu = await cpuMeter([engine.ferret.pid]);
          for (let n = 0; n < opts.requests; n += 1) await work(engine.store);
          figures[kind].push(await cpu.read());
        }
        opts.progress(
          `engine round ${round}, ${engine.name}: accept ${perRequest(figures.accept.at(-1)!, opts.requests)}, ` +
            `tasks/get ${perRequest(figures.read.at(-1)!, opts.requests)} ms of FerretDB CPU a request`,
        );
      }
    }
    opts.out(
      `FerretDB alone (${opts.rounds} alternated rounds of ${opts.requests}; CPU ms a request, each round, then the median):`,
    );
    for (const [name, figures] of results) {
      const line = (values: number[]) =>
        `${values.map((v) => perRequest(v, opts.requests)).join(' / ')} (median ${perRequest(
          percentile(
            [...values].sort((a, b) => a - b),
            50,
          ),
          opts.requests,
        )})`;
      opts.out(`  ${name}: accept ${line(figures.accept)}; tasks/get ${line(figures.read)}`);
    }
  } finally {
    for (const engine of engines) {
      await engine.store.close().catch(() => undefined);
      await engine.ferret.stop().catch(() => undefined);
      await fs.rm(engine.dir, { recursive: true, force: true });
    }
  }
}

function threadId(i: number): string {
  return `engine-${String(i).padStart(5, '0')}`;
}

function perRequest(cpuMs: number, requests: number): string {
  return (cpuMs / requests).toFixed(2);
}

async function seedEngine(store: MongoStore): Promise<void> {
  const diff = `--- a/src/scheduler.ts\n+++ b/src/scheduler.ts\n${'+  const zone = user.timezone ?? team.timezone;\n'.repeat(55)}`;
  for (let from = 0; from < THREADS; from += 500) {
    const docs = Array.from({ length: Math.min(500, THREADS - from) }, (_, k) => engineThread(from + k, diff));
    await store.threads.insertMany(docs);
  }
  const messages: Collection<MessageDoc> = store.messages;
  for (let i = 0; i < WITH_MESSAGES; i += 1) {
    await messages.insertMany(
      Array.from({ length: 20 }, (_, n) => ({
        _id: `${threadId(i)}:${n + 1}`,
        id: randomUUID(),
        thread_id: threadId(i),
        sequence_no: n + 1,
        from: n % 2 ? 'mate-00001@bench' : 'mate-00002@bench',
        body: 'What changed, where to look and what is left to decide, at a message’s usual length. '.repeat(3),
        payload: {},
        artifacts: [],
        via: 'api',
        created_at: new Date(),
      })),
    );
  }
}

/** A pending handoff as the relay's create builds one (newPendingThread), with a 2.6 KB diff and its first timer due. */
function engineThread(i: number, diff: string): ThreadDoc {
  const at = new Date(Date.UTC(2026, 0, 1) + i * 1000);
  const party = (n: number) => ({ handle: `mate-${String(n).padStart(5, '0')}@bench`, team: 'bench' }) as AgentDoc;
  const input = {
    to: party(100 + (i % 41)).handle,
    intent: 'propose_action',
    summary: 'The scheduler now reads the user’s timezone before the team’s; please check the web client. '.repeat(2),
    proposed_action: { description: 'Merge the timezone fix', rationale: 'Reminders fire at 3 am', target_files: [] },
    artifacts: [{ type: 'file_diff', path: 'src/scheduler.ts', diff }],
    metadata: {},
  } as unknown as NewHandoff;
  const doc = newPendingThread(
    {
      id: threadId(i),
      sender: party(i % 37),
      recipient: party(100 + (i % 41)),
      input,
      via: 'api',
      now: at,
      eventId: randomUUID(),
    },
    () => null,
  );
  return { ...doc, next_due_at: new Date(at.getTime() + 86_400_000) };
}
