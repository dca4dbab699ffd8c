// The runs port's contract (relay-core/store/run-store.ts RunRecords): what service/handoff-runs.ts relies on of the
// runs and each teammate's open runs. Run against the in-memory fake (test/unit/) and RunStore on the real server
// (test/integration/).
import { randomUUID } from 'node:crypto';
import { newRun, type RunDoc } from '../../relay-core/domain/run';
import { MAX_OPEN_RUNS, type RunRecords } from '../../relay-core/store/run-store';

const NOW = new Date('2026-03-02T10:00:00Z');
const aRun = (handle = `r${randomUUID()}@acme`): RunDoc =>
  newRun({ id: randomUUID(), thread_id: randomUUID(), handle, by: handle, via: 'api', now: NOW });

export function runRecordsContract(name: string, subject: () => RunRecords): void {
  describe(`runs port contract: ${name}`, () => {
    test('an inserted run reads back; its id inserted again is refused and changes nothing', async () => {
      const runs = subject();
      const run = aRun();
      expect(await runs.insert(run)).toBe(true);
      expect(await runs.read(run._id)).toEqual(run);
      expect(await runs.insert({ ...run, status: 'running' })).toBe(false);
      expect(await runs.read(run._id)).toMatchObject({ status: 'queued' });
    });

    test('a write answers the version it changed and the one it stored, each write bumping the version', async () => {
      const runs = subject();
      const run = aRun();
      await runs.insert(run);
      const first = await runs.write(run._id, (r) => ({ ...r, claims: 1 }));
      expect(first.before).toMatchObject({ claims: 0 });
      expect(first.after).toMatchObject({ claims: 1, version: 1 });
      const second = await runs.write(run._id, (r) => ({ ...r, claims: r.claims + 1 }));
      expect(second.after).toMatchObject({ claims: 2, version: 2 });
      expect(await runs.read(run._id)).toMatchObject({ claims: 2, version: 2 });
    });

    test('a change that answers undefined writes nothing, `before` says why; an unknown run is null and null', async () => {
      const runs = subject();
      const run = aRun();
      await runs.insert(run);
      const written = await runs.write(run._id, () => undefined);
      expect(written).toEqual({ before: run, after: null });
      expect(await runs.write(randomUUID(), (r) => r)).toEqual({ before: null, after: null });
      expect(await runs.read(randomUUID())).toBeNull();
    });

    test('concurrent writes lose none of their changes', async () => {
      const runs = subject();
      const run = aRun();
      await runs.insert(run);
      await Promise.all(Array.from({ length: 6 }, () => runs.write(run._id, (r) => ({ ...r, claims: r.claims + 1 }))));
      expect(await runs.read(run._id)).toMatchObject({ claims: 6, version: 6 });
    });

    test('a removed run reads as null', async () => {
      const runs = subject();
      const run = aRun();
      await runs.insert(run);
      await runs.remove(run._id);
      expect(await runs.read(run._id)).toBeNull();
    });

    test("a teammate's open runs: oldest first, each once, closed ones gone, none for a stranger", async () => {
      const runs = subject();
      const handle = `o${randomUUID()}@acme`;
      expect(await runs.openRuns(handle)).toEqual([]);
      expect(await runs.open(handle, 'a')).toBe(true);
      expect(await runs.open(handle, 'b')).toBe(true);
      expect(await runs.open(handle, 'a')).toBe(true);
      expect(await runs.open(handle, 'c')).toBe(true);
      expect(await runs.openRuns(handle)).toEqual(['a', 'b', 'c']);
      await runs.close(handle, ['a', 'c', 'unknown']);
      expect(await runs.openRuns(handle)).toEqual(['b']);
      await runs.close(`n${randomUUID()}@acme`, ['b']);
      expect(await runs.openRuns(handle)).toEqual(['b']);
    });

    test(`a teammate's open runs hold at most ${MAX_OPEN_RUNS}: one more is refused, one already there still answers true`, async () => {
      const runs = subject();
      const handle = `f${randomUUID()}@acme`;
      for (let i = 0; i < MAX_OPEN_RUNS; i += 1) expect(await runs.open(handle, `run-${i}`)).toBe(true);
      expect(await runs.open(handle, 'one-more')).toBe(false);
      expect(await runs.open(handle, 'run-0')).toBe(true);
      expect(await runs.openRuns(handle)).toHaveLength(MAX_OPEN_RUNS);
    });
  });
}
