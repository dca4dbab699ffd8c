// Invitations by invite id over MongoDB: every change of a redemption is one conditional update, so two redemptions
// at once cannot both take an invitation (service/invites.ts).
import type { Collection } from 'mongodb';
import type { AgentDoc, InviteDoc } from '../domain/documents';

/** Who took an invitation, and when: what a redemption's later updates are conditional on. */
export interface InviteTaking {
  handle: string;
  at: Date;
}

/**
 * Port used by service/invites.ts (adapter: MongoInvites; in memory: test/fakes/in-memory-invites.ts; both pass
 * test/contracts/invite-records-contract.ts).
 */
export interface InviteRecords {
  insert(doc: InviteDoc): Promise<void>;
  get(id: string): Promise<InviteDoc | null>;
  /** The newest `limit` invitations, newest first, without their code hashes. */
  newest(limit: number): Promise<Omit<InviteDoc, 'token_hash'>[]>;
  /** Revokes the invitation if it is open; else changes nothing. */
  revokeOpen(id: string, at: Date): Promise<void>;
  /**
   * Revokes an invitation whose taking (`doc`'s, unchanged since it was read) passed its deadline by `now`, dropping
   * the taking; else changes nothing.
   */
  revokeStale(doc: InviteDoc, now: Date): Promise<void>;
  /**
   * Takes an unexpired invitation that is open, or taken by a redemption past its deadline, for `taking` until
   * `until`; whether this call took it.
   */
  take(id: string, taking: InviteTaking, until: Date): Promise<boolean>;
  /** Opens the invitation again, if `taking` still holds it. */
  giveBack(id: string, taking: InviteTaking): Promise<void>;
  /** Makes `taking` final (no deadline left); false when another redemption took the invitation over meanwhile. */
  confirm(id: string, taking: InviteTaking): Promise<boolean>;
  /** Whether the teammate `handle` was registered at or after `at` (a stalled redemption did finish). */
  registeredSince(handle: string, at: Date): Promise<boolean>;
}

const taken = (taking: InviteTaking) => ({
  status: 'redeemed' as const,
  redeemed_by: taking.handle,
  redeemed_at: taking.at,
});

export class MongoInvites implements InviteRecords {
  private readonly invites: Collection<InviteDoc>;
  private readonly agents: Collection<AgentDoc>;

  constructor(store: { invites: Collection<InviteDoc>; agents: Collection<AgentDoc> }) {
    this.invites = store.invites;
    this.agents = store.agents;
  }

  async insert(doc: InviteDoc): Promise<void> {
    await this.invites.insertOne(doc);
  }

  get(id: string): Promise<InviteDoc | null> {
    return this.invites.findOne({ _id: id });
  }

  newest(limit: number): Promise<Omit<InviteDoc, 'token_hash'>[]> {
    return this.invites.find({}, { projection: { token_hash: 0 }, sort: { created_at: -1 }, limit }).toArray();
  }

  async revokeOpen(id: string, at: Date): Promise<void> {
    await this.invites.updateOne({ _id: id, status: 'open' }, { $set: { status: 'revoked', revoked_at: at } });
  }

  async revokeStale(doc: InviteDoc, now: Date): Promise<void> {
    await this.invites.updateOne(
      { _id: doc._id, redeemed_by: doc.redeemed_by, redeemed_at: doc.redeemed_at, redeeming_until: { $lte: now } },
      {
        $set: { status: 'revoked', revoked_at: now },
        $unset: { redeemed_at: '', redeemed_by: '', redeeming_until: '' },
      },
    );
  }

  async take(id: string, taking: InviteTaking, until: Date): Promise<boolean> {
    const takeable = [
      { status: 'open' as const },
      { status: 'redeemed' as const, redeeming_until: { $lte: taking.at } },
    ];
    const result = await this.invites.updateOne(
      { _id: id, expires_at: { $gt: taking.at }, $or: takeable },
      { $set: { ...taken(taking), redeeming_until: until } },
    );
    return result.modifiedCount === 1;
  }

  async giveBack(id: string, taking: InviteTaking): Promise<void> {
    await this.invites.updateOne(
      { _id: id, ...taken(taking) },
      { $set: { status: 'open' }, $unset: { redeemed_at: '', redeemed_by: '', redeeming_until: '' } },
    );
  }

  async confirm(id: string, taking: InviteTaking): Promise<boolean> {
    return (
      (await this.invites.updateOne({ _id: id, ...taken(taking) }, { $unset: { redeeming_until: '' } }))
        .matchedCount === 1
    );
  }

  async registeredSince(handle: string, at: Date): Promise<boolean> {
    return (await this.agents.findOne({ _id: handle, created_at: { $gte: at } }, { projection: { _id: 1 } })) !== null;
  }
}
