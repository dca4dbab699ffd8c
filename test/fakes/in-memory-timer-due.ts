// The due steps (relay-core/store/timer-due.ts TimerDue) of the threads in an InMemoryThreads, for the fast tests of
// service/handoff-timers.ts (test/contracts/timer-due-contract.ts, run against this and against IndexedTimerDue).
import type { ThreadDoc, TimerDoc } from '../../relay-core/domain/documents';
import { armedTimer } from '../../relay-core/domain/timer-schedule';
import type { TimerDue } from '../../relay-core/store/timer-due';
import type { InMemoryThreads } from './in-memory-threads';

export class InMemoryTimerDue implements TimerDue {
  constructor(private readonly threads: Pick<InMemoryThreads, 'all'>) {}

  async due(now: Date): Promise<TimerDoc[]> {
    return this.steps((at) => at <= now.getTime());
  }

  async ahead(from: number, until: number): Promise<TimerDoc[]> {
    return this.steps((at) => at >= from && at < until);
  }

  async *all(): AsyncIterable<TimerDoc> {
    yield* this.steps(() => true);
  }

  private steps(wanted: (dueAt: number) => boolean): TimerDoc[] {
    return this.threads
      .all()
      .flatMap((thread: ThreadDoc) => armedTimer(thread) ?? [])
      .filter((timer) => wanted(timer.due_at.getTime()))
      .sort((a, b) => a.due_at.getTime() - b.due_at.getTime());
  }
}
