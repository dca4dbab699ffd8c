// The push configs port (relay-core/store/push-configs.ts PushConfigRecords) in memory, for the fast test of
// service/push-configs.ts: one write at a time, each bumping the version, as the contract suite asks
// (test/contracts/push-config-records-contract.ts, run against this and against PushConfigStore).
import type { PushConfigEntry, PushConfigRecords, PushConfigsDoc } from '../../relay-core/store/push-configs';
import type { Change } from '../../relay-core/store/thread-writes';

export class InMemoryPushConfigs implements PushConfigRecords {
  private readonly docs = new Map<string, PushConfigsDoc>();

  async of(taskId: string): Promise<PushConfigEntry[]> {
    return structuredClone(this.docs.get(taskId)?.configs ?? []);
  }

  async change(taskId: string, change: Change<PushConfigsDoc>): Promise<PushConfigEntry[]> {
    const current = this.docs.get(taskId) ?? { _id: taskId, configs: [] };
    this.docs.set(taskId, current);
    const changed = change(structuredClone(current));
    if (!changed) return structuredClone(current.configs);
    const after = { ...changed, _id: taskId, version: (current.version ?? 0) + 1 };
    this.docs.set(taskId, structuredClone(after));
    return structuredClone(after.configs);
  }
}
