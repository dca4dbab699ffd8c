// Runs and each teammate's open runs, `_id`-addressed on every server and changed only through the versioned write
// of thread-writes.ts (one conditional replace), as threads and push configs are.
import type { Collection, Db } from 'mongodb';
import type { RunDoc } from '../domain/run';
import { isDuplicateKey, VersionedWriter, type Change, type VersionedWrite } from './thread-writes';

/** A teammate's runs that are queued or running (`_id` = handle), oldest first: what a runner's claim looks through. */
export interface RunBoxDoc {
  _id: string;
  version?: number;
  open: string[];
}

/** More open runs than this for one teammate is refused (a runner works a few at a time; a queue this long is a loop). */
export const MAX_OPEN_RUNS = 50;

/**
 * Port used by service/handoff-runs.ts: the runs and each teammate's open runs (adapter: RunStore; in memory:
 * test/fakes/in-memory-runs.ts; both pass test/contracts/run-records-contract.ts).
 */
export interface RunRecords {
  read(runId: string): Promise<RunDoc | null>;
  /** Inserts a new run; false when its id is taken. */
  insert(run: RunDoc): Promise<boolean>;
  /** One versioned write of the run (`after` null when `change` answered undefined, both null when it is unknown). */
  write(runId: string, change: Change<RunDoc>): Promise<VersionedWrite<RunDoc>>;
  /** Deletes a run that never existed for anyone (its request lost the race). */
  remove(runId: string): Promise<void>;
  /** The ids of `handle`'s open runs, oldest first. */
  openRuns(handle: string): Promise<string[]>;
  /** Adds a run to its teammate's open runs (once); false when the box is full (MAX_OPEN_RUNS). */
  open(handle: string, runId: string): Promise<boolean>;
  /** Takes finished (or vanished) runs out of the teammate's open runs. */
  close(handle: string, runIds: readonly string[]): Promise<void>;
}

export class RunStore implements RunRecords {
  readonly runs: Collection<RunDoc>;
  readonly boxes: Collection<RunBoxDoc>;
  readonly runWriter: VersionedWriter<RunDoc>;
  readonly boxWriter: VersionedWriter<RunBoxDoc>;

  constructor(db: Db) {
    this.runs = db.collection<RunDoc>('runs');
    this.boxes = db.collection<RunBoxDoc>('run_boxes');
    this.runWriter = new VersionedWriter(this.runs, 'run');
    this.boxWriter = new VersionedWriter(this.boxes, 'run queue');
  }

  read(runId: string): Promise<RunDoc | null> {
    return this.runWriter.read(runId);
  }

  /** Inserts a new run; false when its id is taken. */
  async insert(run: RunDoc): Promise<boolean> {
    try {
      await this.runs.insertOne(run);
      return true;
    } catch (error) {
      if (isDuplicateKey(error)) return false;
      throw error;
    }
  }

  write(runId: string, change: Change<RunDoc>): Promise<VersionedWrite<RunDoc>> {
    return this.runWriter.write(runId, change);
  }

  async remove(runId: string): Promise<void> {
    await this.runs.deleteOne({ _id: runId });
  }

  /** The ids of `handle`'s open runs, oldest first. */
  async openRuns(handle: string): Promise<string[]> {
    return (await this.boxWriter.read(handle))?.open ?? [];
  }

  /** Adds a run to its teammate's open runs (once); false when the box is full. */
  async open(handle: string, runId: string): Promise<boolean> {
    try {
      await this.boxes.insertOne({ _id: handle, open: [] });
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
    }
    const { before, after } = await this.boxWriter.write(handle, (box) => {
      if (box.open.includes(runId) || box.open.length >= MAX_OPEN_RUNS) return undefined;
      return { ...box, open: [...box.open, runId] };
    });
    return after !== null || Boolean(before?.open.includes(runId));
  }

  /** Takes finished (or vanished) runs out of the teammate's open runs. */
  async close(handle: string, runIds: readonly string[]): Promise<void> {
    if (runIds.length === 0) return;
    await this.boxWriter.write(handle, (box) => {
      const open = box.open.filter((id) => !runIds.includes(id));
      return open.length === box.open.length ? undefined : { ...box, open };
    });
  }
}
