// A task's A2A push notification configs (jsonrpc/a2a-push.ts reads and changes them for participants).
import type { MongoStore } from '../store/mongo-store';

export class PushConfigs {
  constructor(private readonly store: MongoStore) {}

  /** The task's configs. */
  of(taskId: string): ReturnType<MongoStore['pushConfigs']['of']> {
    return this.store.pushConfigs.of(taskId);
  }

  /** Changes the task's configs in one write. */
  change(...args: Parameters<MongoStore['pushConfigs']['change']>): ReturnType<MongoStore['pushConfigs']['change']> {
    return this.store.pushConfigs.change(...args);
  }

  /** Marks the task as one with push configs (ThreadDoc.push_configs), before its first config is stored. */
  async mark(taskId: string): Promise<void> {
    await this.store.writeThread(taskId, (thread) =>
      thread.push_configs ? undefined : { ...thread, push_configs: true },
    );
  }
}
