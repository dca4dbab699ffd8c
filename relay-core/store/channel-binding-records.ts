// The channel bindings port (service/channel-bindings.ts) over MongoDB: one `_id`-addressed document per target.
import type { Collection } from 'mongodb';
import type { ChannelBindingDoc } from '../domain/documents';
import { putById } from './thread-writes';

/**
 * Port used by service/channel-bindings.ts: the bindings by target (adapter: MongoChannelBindings; in memory:
 * test/fakes/in-memory-channel-bindings.ts; both pass test/contracts/channel-binding-records-contract.ts).
 */
export interface ChannelBindingRecords {
  /** The binding of one target, or null. */
  get(target: string): Promise<ChannelBindingDoc | null>;
  /** Stores the binding, replacing the target's earlier one. */
  put(binding: ChannelBindingDoc): Promise<void>;
  /** Removes the target's binding; false when there was none. */
  remove(target: string): Promise<boolean>;
  /** Up to `limit` bindings, by target. */
  list(limit: number): Promise<ChannelBindingDoc[]>;
}

export class MongoChannelBindings implements ChannelBindingRecords {
  constructor(private readonly docs: Collection<ChannelBindingDoc>) {}

  get(target: string): Promise<ChannelBindingDoc | null> {
    return this.docs.findOne({ _id: target });
  }

  async put({ _id, ...binding }: ChannelBindingDoc): Promise<void> {
    await putById(this.docs, _id, binding);
  }

  async remove(target: string): Promise<boolean> {
    return (await this.docs.deleteOne({ _id: target })).deletedCount === 1;
  }

  list(limit: number): Promise<ChannelBindingDoc[]> {
    return this.docs.find({}).sort({ _id: 1 }).limit(limit).toArray();
  }
}
