// A task's A2A push notification configs (jsonrpc/a2a-push.ts reads and changes them for participants).
import type { ThreadWriter } from '../domain/thread-writer';
import type { PushConfigEntry, PushConfigRecords, PushConfigsDoc } from '../store/push-configs';
import type { Change } from '../store/thread-writes';

export interface PushConfigsDeps {
  configs: PushConfigRecords;
  threads: Pick<ThreadWriter, 'writeThread'>;
}

export class PushConfigs {
  constructor(private readonly deps: PushConfigsDeps) {}

  /** The task's configs. */
  of(taskId: string): Promise<PushConfigEntry[]> {
    return this.deps.configs.of(taskId);
  }

  /** Changes the task's configs in one write; the configs after it. */
  change(taskId: string, change: Change<PushConfigsDoc>): Promise<PushConfigEntry[]> {
    return this.deps.configs.change(taskId, change);
  }

  /** Marks the task as one with push configs (ThreadDoc.push_configs), before its first config is stored. */
  async mark(taskId: string): Promise<void> {
    await this.deps.threads.writeThread(taskId, (thread) =>
      thread.push_configs ? undefined : { ...thread, push_configs: true },
    );
  }
}
