// The channel bindings port (relay-core/store/channel-binding-records.ts) in memory, for the fast tests of
// service/channel-bindings.ts (test/contracts/channel-binding-records-contract.ts, run against this and against
// MongoChannelBindings).
import type { ChannelBindingDoc } from '../../relay-core/domain/documents';
import type { ChannelBindingRecords } from '../../relay-core/store/channel-binding-records';

export class InMemoryChannelBindings implements ChannelBindingRecords {
  private readonly docs = new Map<string, ChannelBindingDoc>();

  async get(target: string): Promise<ChannelBindingDoc | null> {
    const doc = this.docs.get(target);
    return doc ? structuredClone(doc) : null;
  }

  async put(binding: ChannelBindingDoc): Promise<void> {
    this.docs.set(binding._id, structuredClone(binding));
  }

  async remove(target: string): Promise<boolean> {
    return this.docs.delete(target);
  }

  async list(limit: number): Promise<ChannelBindingDoc[]> {
    return [...this.docs.values()]
      .sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0))
      .slice(0, limit)
      .map((doc) => structuredClone(doc));
  }
}
