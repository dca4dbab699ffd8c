// The runs port (relay-core/store/run-store.ts RunRecords) in memory, for the fast tests of service/handoff-runs.ts:
// one write at a time, each bumping the version, and each teammate's open runs capped as RunStore caps them
// (test/contracts/run-records-contract.ts, run against this and against RunStore).
import type { RunDoc } from '../../relay-core/domain/run';
import { MAX_OPEN_RUNS, type RunRecords } from '../../relay-core/store/run-store';
import type { Change, VersionedWrite } from '../../relay-core/store/thread-writes';

export class InMemoryRuns implements RunRecords {
  private readonly runs = new Map<string, RunDoc>();
  private readonly boxes = new Map<string, string[]>();

  async read(runId: string): Promise<RunDoc | null> {
    const run = this.runs.get(runId);
    return run ? structuredClone(run) : null;
  }

  async insert(run: RunDoc): Promise<boolean> {
    if (this.runs.has(run._id)) return false;
    this.runs.set(run._id, structuredClone(run));
    return true;
  }

  async write(runId: string, change: Change<RunDoc>): Promise<VersionedWrite<RunDoc>> {
    const current = this.runs.get(runId);
    if (!current) return { before: null, after: null };
    const changed = change(structuredClone(current));
    if (!changed) return { before: structuredClone(current), after: null };
    const after = { ...changed, _id: runId, version: (current.version ?? 0) + 1 };
    this.runs.set(runId, structuredClone(after));
    return { before: structuredClone(current), after: structuredClone(after) };
  }

  async remove(runId: string): Promise<void> {
    this.runs.delete(runId);
  }

  async openRuns(handle: string): Promise<string[]> {
    return [...(this.boxes.get(handle) ?? [])];
  }

  async open(handle: string, runId: string): Promise<boolean> {
    const open = this.boxes.get(handle) ?? [];
    if (open.includes(runId)) return true;
    if (open.length >= MAX_OPEN_RUNS) return false;
    this.boxes.set(handle, [...open, runId]);
    return true;
  }

  async close(handle: string, runIds: readonly string[]): Promise<void> {
    const open = this.boxes.get(handle);
    if (open)
      this.boxes.set(
        handle,
        open.filter((id) => !runIds.includes(id)),
      );
  }
}
