// Invitations: an admin makes a single-use, expiring code; its invitee redeems it with a handle and card and is
// registered through Teammates.register, so every rule of a registration applies. One conditional update takes the
// invitation from `open`, so two redemptions at once make one teammate.
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../domain/clock';
import type { InviteDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';
import { invitedCard, inviteView, INVITE_ID_PATTERN, type InviteCreate, type InviteRedemption, type InviteView } from '../domain/invite';
import { constantTimeEqual, hashApiKey } from '../ops/api-keys';
import { inviteIdOf, issueInviteCode } from '../ops/invite-codes';
import type { MongoStore } from '../store/mongo-store';
import type { OwnCard, Teammates } from './teammates';

export interface InvitesDeps {
  store: MongoStore;
  teammates: Teammates;
  keyPepper: string;
  log: Logger;
  clock?: Clock;
}

/**
 * Where a redemption comes from: the REST API, or Slack (then the Slack user is linked in the same registration,
 * and a bare handle joins `team`, `role` filling in when the invitation sets none).
 */
export type RedeemVia = { via: 'api' } | { via: 'slack'; slackUserId: string; team?: string; role?: string };

const LIST_LIMIT = 500;

/** The one answer to an unknown id and to a wrong code, so a guess learns nothing. */
const noSuchInvite = () => new RelayError('not_found', 'No such invitation: check the code you were given (handoff-relay join hri_…)');

export class Invites {
  private readonly store: MongoStore;
  private readonly teammates: Teammates;
  private readonly keyPepper: string;
  private readonly log: Logger;
  private readonly clock: Clock;

  constructor(deps: InvitesDeps) {
    this.store = deps.store;
    this.teammates = deps.teammates;
    this.keyPepper = deps.keyPepper;
    this.log = deps.log;
    this.clock = deps.clock ?? systemClock;
  }

  /** Makes an invitation; its code is in this answer only (the store keeps its hash). */
  async create(input: InviteCreate, createdBy: string): Promise<InviteView & { token: string }> {
    if (input.lead !== undefined) {
      const lead = await this.teammates.get(input.lead);
      if (!lead || lead.status !== 'active') throw new RelayError('invalid_params', `body.lead: no active teammate with handle ${input.lead} (register the lead first)`, { field: 'lead' });
    }
    const now = this.clock.now();
    const { code, id, hash } = issueInviteCode(this.keyPepper);
    const preset: InviteDoc['preset'] = {};
    for (const field of ['team', 'role', 'skills', 'repos_owned', 'lead'] as const) {
      if (input[field] !== undefined) (preset as Record<string, unknown>)[field] = input[field];
    }
    const doc: InviteDoc = {
      _id: id,
      token_hash: hash,
      status: 'open',
      preset,
      ...(input.note ? { note: input.note } : {}),
      created_by: createdBy,
      created_at: now,
      expires_at: new Date(now.getTime() + input.expires_in),
    };
    await this.store.invites.insertOne(doc);
    this.log.info({ invite_id: id, created_by: createdBy, expires_at: doc.expires_at }, 'invitation created');
    return { ...inviteView(doc, now), token: code };
  }

  /** Newest first; never a code or its hash. */
  async list(limit = LIST_LIMIT): Promise<InviteView[]> {
    const now = this.clock.now();
    const docs = await this.store.invites.find({}, { projection: { token_hash: 0 }, sort: { created_at: -1 }, limit }).toArray();
    return docs.map((doc) => inviteView(doc, now));
  }

  /** Revokes an open invitation; revoking one again answers it as it is; a redeemed one is a conflict. */
  async revoke(id: string): Promise<InviteView> {
    if (!INVITE_ID_PATTERN.test(id)) throw new RelayError('invalid_params', `path.id: not an invite id this relay issues (got "${id.slice(0, 100)}")`);
    const now = this.clock.now();
    await this.store.invites.updateOne({ _id: id, status: 'open' }, { $set: { status: 'revoked', revoked_at: now } });
    const doc = await this.store.invites.findOne({ _id: id });
    if (!doc) throw new RelayError('not_found', `No invitation with id ${id}`);
    if (doc.status === 'redeemed') {
      throw new RelayError('conflict', `Invitation ${id} was already redeemed by ${doc.redeemed_by}; disable that teammate instead (POST /admin/agents/${doc.redeemed_by}/disable)`, { reason: 'redeemed' });
    }
    this.log.info({ invite_id: id }, 'invitation revoked');
    return inviteView(doc, now);
  }

  /**
   * The invitation a code opens, when it can be redeemed now; else the same clear error a redemption answers.
   * Nothing changes: Slack asks this before it opens the window a redemption fills in.
   */
  async usable(code: string): Promise<{ doc: InviteDoc; now: Date }> {
    const id = inviteIdOf(code);
    if (!id) throw noSuchInvite();
    const doc = await this.store.invites.findOne({ _id: id });
    if (!doc || !constantTimeEqual(doc.token_hash, hashApiKey(code, this.keyPepper))) throw noSuchInvite();
    const now = this.clock.now();
    assertUsable(doc, now);
    return { doc, now };
  }

  /**
   * Registers the invitee: the code is checked against its hash, the card made from the preset and the choice, then
   * the invitation is taken from `open` by one conditional update before Teammates.register runs; a registration
   * that is refused (a handle taken, a lead gone) gives the invitation back.
   */
  async redeem(code: string, choice: InviteRedemption, from: RedeemVia = { via: 'api' }): Promise<{ card: OwnCard; api_key: string; invite_id: string }> {
    const { doc, now } = await this.usable(code);
    const id = doc._id;
    const card = invitedCard(doc.preset, choice, from.via === 'slack' ? { slackUserId: from.slackUserId, team: from.team, role: from.role } : {});
    if ('field' in card) throw new RelayError('invalid_params', `body.${card.field}: ${card.message}`, { field: card.field });

    const claim = { status: 'redeemed' as const, redeemed_at: now, redeemed_by: card.handle };
    const taken = await this.store.invites.updateOne({ _id: id, status: 'open', expires_at: { $gt: now } }, { $set: claim });
    if (taken.modifiedCount !== 1) {
      const current = await this.store.invites.findOne({ _id: id });
      if (current) assertUsable(current, now);
      // Open and unexpired again: a redemption that had it was refused and gave it back just now.
      throw new RelayError('conflict', 'This invitation is being redeemed by someone else right now; try again in a moment', { reason: 'busy' });
    }
    let registered: { card: OwnCard; api_key: string };
    try {
      registered = await this.teammates.register(card);
    } catch (error) {
      await this.store.invites.updateOne({ _id: id, ...claim }, { $set: { status: 'open' }, $unset: { redeemed_at: '', redeemed_by: '' } });
      throw error;
    }
    this.log.info({ invite_id: id, handle: card.handle, via: from.via }, 'invitation redeemed');
    await this.store.accountLog.record([{ handle: card.handle, at: now, actor: card.handle, action: 'invite.redeemed', resource_type: 'invite', resource_id: id, via: from.via }]);
    return { ...registered, invite_id: id };
  }
}

/** A clear refusal for an invitation that can no longer be redeemed: 409 once used, 410 once revoked or expired. */
function assertUsable(doc: InviteDoc, now: Date): void {
  if (doc.status === 'redeemed') throw new RelayError('conflict', 'This invitation was already used; ask an admin for a new one', { reason: 'redeemed' });
  if (doc.status === 'revoked') throw new RelayError('conflict', 'This invitation was revoked; ask an admin for a new one', { reason: 'revoked' }, 410);
  if (doc.expires_at.getTime() <= now.getTime()) {
    throw new RelayError('conflict', `This invitation expired at ${doc.expires_at.toISOString()}; ask an admin for a new one`, { reason: 'expired' }, 410);
  }
}
