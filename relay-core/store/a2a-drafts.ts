// A2A tasks waiting for their recipient (a SendMessage that named none): one `_id`-addressed document per task, whose
// id is the thread id the handoff gets once a later message in its context names the recipient (jsonrpc/a2a-methods.ts).
import type { Collection, Db, Filter } from 'mongodb';
import type { Artifact, Intent, ProposedAction } from '../domain/schemas';
import { isDuplicateKey } from './thread-writes';

export interface DraftDoc {
  /** The task id: the thread id the handoff is created with (the create's idempotent id under `key`). */
  _id: string;
  from: string;
  /** The idempotency key the handoff is created under: the first message's client key or messageId. */
  key: string;
  message_id: string;
  summary: string;
  intent?: Intent;
  question?: string;
  proposed_action?: ProposedAction;
  artifacts: Artifact[];
  metadata: Record<string, unknown>;
  /** handed: the handoff exists (its thread has this id); kept so that the reply that named the recipient, sent again, changes nothing. */
  status: 'input_required' | 'cancelled' | 'handed';
  /** The messageId of the reply that named the recipient. */
  reply_message_id?: string;
  /**
   * What the sender said in the task before naming a recipient, oldest first: part of its history, and the handoff's
   * first messages once it is made.
   */
  notes?: DraftNote[];
  created_at: Date;
  updated_at: Date;
}

/** A message of the sender's in a task still waiting for its recipient. */
export interface DraftNote {
  message_id: string;
  text: string;
}

/** How many messages a task takes before it names a recipient. */
export const DRAFT_NOTES_MAX = 20;

/** A sender's drafts in a ListTasks page: by status, last change, id, after a cursor position. */
export interface DraftQuery {
  from: string;
  statuses: ReadonlyArray<'input_required' | 'cancelled'>;
  since?: Date;
  id?: string;
  after?: { after: Date; id: string };
  limit: number;
}

export class DraftStore {
  readonly docs: Collection<DraftDoc>;

  constructor(db: Db) {
    this.docs = db.collection<DraftDoc>('a2a_drafts');
  }

  get(id: string): Promise<DraftDoc | null> {
    return this.docs.findOne({ _id: id });
  }

  /** The newest `limit` drafts that match, newest first (the `by_sender` index), and how many match in all. */
  async page(query: DraftQuery): Promise<{ drafts: DraftDoc[]; total: number }> {
    const match: Filter<DraftDoc> = {
      from: query.from,
      status: { $in: [...query.statuses] },
      ...(query.since ? { updated_at: { $gte: query.since } } : {}),
      ...(query.id !== undefined ? { _id: query.id } : {}),
    };
    const range: Filter<DraftDoc> = query.after
      ? {
          $or: [
            { created_at: { $lt: query.after.after } },
            { created_at: query.after.after, _id: { $lt: query.after.id } },
          ],
        }
      : {};
    const [drafts, total] = await Promise.all([
      this.docs
        .find({ ...match, ...range })
        .sort({ created_at: -1, _id: -1 })
        .limit(query.limit)
        .toArray(),
      this.docs.countDocuments(match),
    ]);
    return { drafts, total };
  }

  /** Stores the draft unless its id is there already (the first message sent again): the stored one either way. */
  async put(doc: DraftDoc): Promise<DraftDoc> {
    try {
      await this.docs.insertOne(doc);
      return doc;
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      const stored = await this.get(doc._id);
      if (!stored) throw error;
      return stored;
    }
  }

  /** Cancels a waiting draft; a cancelled one stays cancelled. The draft as it is after. */
  async cancel(id: string, at: Date): Promise<DraftDoc | null> {
    await this.docs.updateOne({ _id: id, status: 'input_required' }, { $set: { status: 'cancelled', updated_at: at } });
    return this.get(id);
  }

  /**
   * Adds a message to a waiting draft, once per messageId (`$addToSet` of the same note sent again adds nothing), while
   * it holds fewer than DRAFT_NOTES_MAX. The draft as it is after, or null when there is none.
   */
  async addNote(id: string, note: DraftNote, at: Date): Promise<DraftDoc | null> {
    await this.docs.updateOne(
      { _id: id, status: 'input_required', [`notes.${DRAFT_NOTES_MAX - 1}`]: { $exists: false } },
      { $addToSet: { notes: note }, $set: { updated_at: at } },
    );
    return this.get(id);
  }

  /** The handoff exists now (its thread has the draft's id), made by the reply `replyMessageId`. */
  async handed(id: string, replyMessageId: string, at: Date): Promise<void> {
    await this.docs.updateOne(
      { _id: id },
      { $set: { status: 'handed', reply_message_id: replyMessageId, updated_at: at } },
    );
  }
}
