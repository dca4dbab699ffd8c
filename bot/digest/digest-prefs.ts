// Whether a teammate gets the daily digest: one document per teammate, addressed by `_id` = the handle.
import type { Collection } from 'mongodb';
import { putById } from '../../relay-core/store/thread-writes';

export interface DigestPrefDoc {
  _id: string;
  off: boolean;
  updated_at: Date;
}

export class DigestPrefs {
  constructor(private readonly docs: Collection<DigestPrefDoc>) {}

  async isOff(handle: string): Promise<boolean> {
    return (await this.docs.findOne({ _id: handle }))?.off === true;
  }

  /** The last writer wins, which is what two clicks of off and on mean. */
  async set(handle: string, off: boolean, at: Date): Promise<void> {
    await putById(this.docs, handle, { off, updated_at: at });
  }
}
