// The invitations port (relay-core/store/invite-records.ts) in memory, for the fast test of service/invites.ts: each
// change checks its condition and applies it with nothing awaited in between, as one conditional update does
// (test/contracts/invite-records-contract.ts, run against this and against MongoInvites). Teammates registered are
// told to it (`registered`), as the agents collection holds them.
import type { InviteDoc } from '../../relay-core/domain/documents';
import type { InviteRecords, InviteTaking } from '../../relay-core/store/invite-records';

export class InMemoryInvites implements InviteRecords {
  private readonly docs = new Map<string, InviteDoc>();
  /** When each teammate was registered. */
  readonly registered = new Map<string, Date>();

  async insert(doc: InviteDoc): Promise<void> {
    if (this.docs.has(doc._id)) throw new Error(`duplicate invite id ${doc._id}`);
    this.docs.set(doc._id, structuredClone(doc));
  }

  async get(id: string): Promise<InviteDoc | null> {
    const doc = this.docs.get(id);
    return doc ? structuredClone(doc) : null;
  }

  async newest(limit: number): Promise<Omit<InviteDoc, 'token_hash'>[]> {
    return [...this.docs.values()]
      .sort((a, b) => b.created_at.getTime() - a.created_at.getTime())
      .slice(0, limit)
      .map(({ token_hash: _, ...doc }) => structuredClone(doc));
  }

  async revokeOpen(id: string, at: Date): Promise<void> {
    this.change(id, (doc) => doc.status === 'open', { status: 'revoked', revoked_at: at });
  }

  async revokeStale(before: InviteDoc, now: Date): Promise<void> {
    this.change(
      before._id,
      (doc) =>
        sameTaking(doc, before) && doc.redeeming_until !== undefined && doc.redeeming_until.getTime() <= now.getTime(),
      {
        status: 'revoked',
        revoked_at: now,
        redeemed_at: undefined,
        redeemed_by: undefined,
        redeeming_until: undefined,
      },
    );
  }

  async take(id: string, taking: InviteTaking, until: Date): Promise<boolean> {
    const now = taking.at.getTime();
    return this.change(
      id,
      (doc) =>
        doc.expires_at.getTime() > now &&
        (doc.status === 'open' ||
          (doc.status === 'redeemed' && doc.redeeming_until !== undefined && doc.redeeming_until.getTime() <= now)),
      { status: 'redeemed', redeemed_by: taking.handle, redeemed_at: taking.at, redeeming_until: until },
    );
  }

  async giveBack(id: string, taking: InviteTaking): Promise<void> {
    this.change(id, (doc) => heldBy(doc, taking), {
      status: 'open',
      redeemed_at: undefined,
      redeemed_by: undefined,
      redeeming_until: undefined,
    });
  }

  async confirm(id: string, taking: InviteTaking): Promise<boolean> {
    return this.change(id, (doc) => heldBy(doc, taking), { redeeming_until: undefined });
  }

  async registeredSince(handle: string, at: Date): Promise<boolean> {
    const registered = this.registered.get(handle);
    return registered !== undefined && registered.getTime() >= at.getTime();
  }

  /** Applies `set` (undefined: the field removed) when `when` holds; whether it matched. */
  private change(id: string, when: (doc: InviteDoc) => boolean, set: Partial<InviteDoc>): boolean {
    const doc = this.docs.get(id);
    if (!doc || !when(doc)) return false;
    const next = { ...doc, ...set } as Record<string, unknown>;
    for (const [field, value] of Object.entries(set)) if (value === undefined) delete next[field];
    this.docs.set(id, next as unknown as InviteDoc);
    return true;
  }
}

const sameTaking = (doc: InviteDoc, other: Pick<InviteDoc, 'redeemed_by' | 'redeemed_at'>) =>
  doc.redeemed_by === other.redeemed_by && doc.redeemed_at?.getTime() === other.redeemed_at?.getTime();

const heldBy = (doc: InviteDoc, taking: InviteTaking) =>
  doc.status === 'redeemed' && sameTaking(doc, { redeemed_by: taking.handle, redeemed_at: taking.at });
