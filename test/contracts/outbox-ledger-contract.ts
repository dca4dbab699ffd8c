// The outbox ledger's contract (relay-core/store/outbox-ledger.ts): what the outbox sweep relies on of waiting, remove,
// finished and flush. Run against the in-memory fake (test/unit/) and against OutboxLedger on the real server
// (test/integration/).
import type { ThreadDoc } from '../../relay-core/domain/documents';
import type { OutboxLedger } from '../../relay-core/store/outbox-ledger';
import { threadDocAt } from '../helpers/thread-docs';

export interface OutboxLedgerUnderTest {
  ledger: Pick<OutboxLedger, 'waiting' | 'remove' | 'finished' | 'flush'>;
  /** Stores a thread as a write that recorded events leaves it. */
  insert(doc: ThreadDoc): Promise<void>;
  read(id: string): Promise<ThreadDoc | null>;
}

/** Every test's threads wait from its own minute, so tests sharing a collection never see each other's in `waiting`. */
let minute = Date.UTC(2026, 0, 1);

/** A thread whose jobs `keys` have been pending since `since`. */
function withJobs(since: Date, keys: string[]): ThreadDoc {
  return { ...threadDocAt('a@acme', 'b@acme', 'pending', since), jobs_pending: keys, pending_since: since };
}

export function outboxLedgerContract(name: string, subject: () => OutboxLedgerUnderTest): void {
  describe(`outbox ledger contract: ${name}`, () => {
    let t0: Date;
    const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
    beforeEach(() => {
      t0 = new Date((minute += 60_000));
    });

    test('waiting lists the threads pending since `before` or earlier, oldest first, up to the limit', async () => {
      const { ledger, insert } = subject();
      const [late, early, middle, settled] = [
        withJobs(at(30), ['slack:e1']),
        withJobs(at(10), ['slack:e2']),
        withJobs(at(20), ['webhook:e3']),
        threadDocAt('a@acme', 'b@acme', 'accepted', at(5)),
      ];
      for (const doc of [late, early, middle, settled]) await insert(doc);
      const ours = new Set([late, early, middle, settled].map((d) => d._id));
      const waiting = async (before: Date, limit: number) =>
        (await ledger.waiting(before, limit)).filter((d) => ours.has(d._id)).map((d) => d._id);
      expect(await waiting(at(25), 500)).toEqual([early._id, middle._id]);
      expect(await waiting(at(59), 500)).toEqual([early._id, middle._id, late._id]);
      const first = await ledger.waiting(at(59), 1);
      expect(first).toHaveLength(1);
      expect(first[0]!._id).not.toBe(late._id);
    });

    test('remove takes some jobs out and keeps the thread waiting; taking the last lets go of it', async () => {
      const { ledger, insert, read } = subject();
      const doc = withJobs(at(1), ['slack:e1', 'webhook:e1']);
      await insert(doc);
      await ledger.remove(doc._id, ['slack:e1']);
      expect(await read(doc._id)).toMatchObject({ jobs_pending: ['webhook:e1'], pending_since: at(1) });
      await ledger.remove(doc._id, ['webhook:e1', 'slack:e9']);
      const after = await read(doc._id);
      expect(after?.jobs_pending).toBeUndefined();
      expect(after?.pending_since).toBeUndefined();
      expect((await ledger.waiting(at(59), 500)).map((d) => d._id)).not.toContain(doc._id);
    });

    test('remove of jobs the thread does not hold, or of none, changes nothing', async () => {
      const { ledger, insert, read } = subject();
      const doc = withJobs(at(1), ['slack:e1']);
      await insert(doc);
      await ledger.remove(doc._id, ['slack:e2']);
      await ledger.remove(doc._id, []);
      expect(await read(doc._id)).toMatchObject({ jobs_pending: ['slack:e1'], pending_since: at(1), version: 1 });
    });

    test('finished jobs are taken out at the next flush', async () => {
      const { ledger, insert, read } = subject();
      const doc = withJobs(at(1), ['slack:e1', 'webhook:e1', 'slack:e2']);
      await insert(doc);
      ledger.finished(doc._id, 'slack', 'e1');
      ledger.finished(doc._id, 'slack', 'e2');
      await ledger.flush();
      expect((await read(doc._id))?.jobs_pending).toEqual(['webhook:e1']);
      ledger.finished(doc._id, 'webhook', 'e1');
      await ledger.flush();
      expect((await read(doc._id))?.pending_since).toBeUndefined();
    });

    test('one flush of many threads leaves each as its own finished jobs say, whatever the others', async () => {
      const { ledger, insert, read } = subject();
      // More threads than one update command takes, mixed: all of a thread's jobs finished, some, some after the
      // sweep took others out, none of those it holds.
      const kinds = ['all', 'some', 'rest after the sweep', 'none of its own'] as const;
      const docs = Array.from({ length: 240 }, (_, i) => ({
        kind: kinds[i % kinds.length]!,
        doc: withJobs(at(1), [`slack:e${i}`, `webhook:e${i}`]),
      }));
      for (const { doc } of docs) await insert(doc);
      for (const { kind, doc } of docs) {
        const n = doc._id;
        const e = doc.jobs_pending![0]!.slice('slack:'.length);
        if (kind === 'rest after the sweep') await ledger.remove(n, [`slack:${e}`]);
        if (kind === 'none of its own') ledger.finished(n, 'slack', `${e}-other`);
        else ledger.finished(n, 'slack', e);
        if (kind === 'all' || kind === 'rest after the sweep') ledger.finished(n, 'webhook', e);
      }
      await ledger.flush();
      for (const { kind, doc } of docs) {
        const after = await read(doc._id);
        const e = doc.jobs_pending![0]!.slice('slack:'.length);
        if (kind === 'all' || kind === 'rest after the sweep') {
          expect(after?.jobs_pending).toBeUndefined();
          expect(after?.pending_since).toBeUndefined();
        } else if (kind === 'some') {
          expect(after).toMatchObject({ jobs_pending: [`webhook:${e}`], pending_since: at(1) });
        } else {
          expect(after).toMatchObject({ jobs_pending: [`slack:${e}`, `webhook:${e}`], pending_since: at(1) });
        }
      }
      expect((await ledger.waiting(at(59), 500)).filter((d) => docs.some((x) => x.doc._id === d._id))).toHaveLength(
        120,
      );
    });
  });
}
