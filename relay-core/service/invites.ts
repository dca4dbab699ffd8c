// Invitations: an admin makes a single-use, expiring code; its invitee redeems it with a handle and card and is
// registered through Teammates.register, so every rule of a registration applies. One conditional update takes the
// invitation from `open`, so two redemptions at once make one teammate.
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../domain/clock';
import type { InviteDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';
import {
  invitedCard,
  inviteView,
  INVITE_ID_PATTERN,
  type InviteCreate,
  type InviteRedemption,
  type InviteView,
} from '../domain/invite';
import { constantTimeEqual, hashApiKey } from '../ops/api-keys';
import { inviteIdOf, issueInviteCode } from '../ops/invite-codes';
import type { AccountLog } from '../store/account-log';
import type { InviteRecords } from '../store/invite-records';
import type { OwnCard, Teammates } from './teammates';

export interface InvitesDeps {
  invites: InviteRecords;
  /** Where a redemption is recorded in the invitee's account history. */
  accountLog: Pick<AccountLog, 'record'>;
  teammates: Pick<Teammates, 'get' | 'register' | 'disable'>;
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
/**
 * How long a redemption holds the invitation it took before registering: a process that dies in between leaves it
 * taken, and after this a later redemption may take it again (registering takes milliseconds).
 */
export const REDEEM_DEADLINE_MS = 2 * 60_000;

/** The one answer to an unknown id and to a wrong code, so a guess learns nothing. */
const noSuchInvite = () =>
  new RelayError('not_found', 'No such invitation: check the code you were given (handoff-relay join hri_…)');

export class Invites {
  private readonly invites: InviteRecords;
  private readonly accountLog: Pick<AccountLog, 'record'>;
  private readonly teammates: Pick<Teammates, 'get' | 'register' | 'disable'>;
  private readonly keyPepper: string;
  private readonly log: Logger;
  private readonly clock: Clock;

  constructor(deps: InvitesDeps) {
    this.invites = deps.invites;
    this.accountLog = deps.accountLog;
    this.teammates = deps.teammates;
    this.keyPepper = deps.keyPepper;
    this.log = deps.log;
    this.clock = deps.clock ?? systemClock;
  }

  /** Makes an invitation; its code is in this answer only (the store keeps its hash). */
  async create(input: InviteCreate, createdBy: string): Promise<InviteView & { token: string }> {
    if (input.lead !== undefined) {
      const lead = await this.teammates.get(input.lead);
      if (!lead || lead.status !== 'active')
        throw new RelayError(
          'invalid_params',
          `body.lead: no active teammate with handle ${input.lead} (register the lead first)`,
          { field: 'lead' },
        );
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
    await this.invites.insert(doc);
    this.log.info({ invite_id: id, created_by: createdBy, expires_at: doc.expires_at }, 'invitation created');
    return { ...inviteView(doc, now), token: code };
  }

  /** Newest first; never a code or its hash. */
  async list(limit = LIST_LIMIT): Promise<InviteView[]> {
    const now = this.clock.now();
    const docs = await this.invites.newest(limit);
    return docs.map((doc) => inviteView(doc, now));
  }

  /**
   * Revokes an open invitation, or one whose redemption stopped past its deadline without a teammate; revoking one
   * again answers it as it is; a redeemed one, or one a redemption holds now, is a conflict.
   */
  async revoke(id: string): Promise<InviteView> {
    if (!INVITE_ID_PATTERN.test(id))
      throw new RelayError('invalid_params', `path.id: not an invite id this relay issues (got "${id.slice(0, 100)}")`);
    const now = this.clock.now();
    const before = await this.invites.get(id);
    if (
      before?.redeeming_until &&
      before.redeeming_until.getTime() <= now.getTime() &&
      !(await this.finishedBefore(before))
    ) {
      await this.invites.revokeStale(before, now);
    } else {
      await this.invites.revokeOpen(id, now);
    }
    const doc = await this.invites.get(id);
    if (!doc) throw new RelayError('not_found', `No invitation with id ${id}`);
    if (doc.redeeming_until) {
      throw new RelayError(
        'conflict',
        `Invitation ${id} is being redeemed right now (as ${doc.redeemed_by}); if that does not finish, revoke it after ${doc.redeeming_until.toISOString()}`,
        { reason: 'busy' },
      );
    }
    if (doc.status === 'redeemed') {
      throw new RelayError(
        'conflict',
        `Invitation ${id} was already redeemed by ${doc.redeemed_by}; disable that teammate instead (POST /admin/agents/${doc.redeemed_by}/disable)`,
        { reason: 'redeemed' },
      );
    }
    this.log.info({ invite_id: id }, 'invitation revoked');
    return inviteView(doc, now);
  }

  /**
   * Whether the redemption that took `doc` and missed its deadline registered its teammate before it stopped (then
   * the invitation is used, and is marked so).
   */
  private async finishedBefore(doc: InviteDoc): Promise<boolean> {
    const taking = { handle: doc.redeemed_by!, at: doc.redeemed_at! };
    if (!(await this.invites.registeredSince(taking.handle, taking.at))) return false;
    await this.invites.confirm(doc._id, taking);
    return true;
  }

  /**
   * The invitation a code opens, when it can be redeemed now; else the same clear error a redemption answers.
   * Nothing changes: Slack asks this before it opens the window a redemption fills in.
   */
  async usable(code: string): Promise<{ doc: InviteDoc; now: Date }> {
    const id = inviteIdOf(code);
    if (!id) throw noSuchInvite();
    const doc = await this.invites.get(id);
    if (!doc || !constantTimeEqual(doc.token_hash, hashApiKey(code, this.keyPepper))) throw noSuchInvite();
    const now = this.clock.now();
    assertUsable(doc, now);
    return { doc, now };
  }

  /**
   * Registers the invitee: the code is checked against its hash, the card made from the preset and the choice, then
   * the invitation is taken by one conditional update before Teammates.register runs; a registration that is
   * refused (a handle taken, a lead gone) gives the invitation back. The taking holds until `redeeming_until`, when
   * the registration confirms it: a taking whose process died is taken again after that, unless its teammate
   * exists; a process that resumes after its taking was taken over disables the teammate it just made.
   */
  async redeem(
    code: string,
    choice: InviteRedemption,
    from: RedeemVia = { via: 'api' },
  ): Promise<{ card: OwnCard; api_key: string; invite_id: string }> {
    const { doc, now } = await this.usable(code);
    const id = doc._id;
    const card = invitedCard(
      doc.preset,
      choice,
      from.via === 'slack' ? { slackUserId: from.slackUserId, team: from.team, role: from.role } : {},
    );
    if ('field' in card)
      throw new RelayError('invalid_params', `body.${card.field}: ${card.message}`, { field: card.field });

    if (doc.redeeming_until && (await this.finishedBefore(doc))) throw used();
    const taking = { handle: card.handle, at: now };
    if (!(await this.invites.take(id, taking, new Date(now.getTime() + REDEEM_DEADLINE_MS)))) {
      const current = await this.invites.get(id);
      if (current) assertUsable(current, now);
      // Open and unexpired again: a redemption that had it was refused and gave it back just now.
      throw busy();
    }
    let registered: { card: OwnCard; api_key: string };
    try {
      registered = await this.teammates.register(card);
    } catch (error) {
      await this.invites.giveBack(id, taking);
      throw error;
    }
    if (!(await this.invites.confirm(id, taking))) {
      // This process stalled past the deadline and another redemption took the invitation: one teammate per invitation.
      await this.teammates.disable(card.handle);
      this.log.warn(
        { invite_id: id, handle: card.handle },
        'invitation taken over during a stalled redemption; its teammate disabled',
      );
      throw new RelayError(
        'conflict',
        'This redemption took too long and the invitation was used by another; ask an admin for a new one',
        { reason: 'redeemed' },
      );
    }
    this.log.info({ invite_id: id, handle: card.handle, via: from.via }, 'invitation redeemed');
    await this.accountLog.record([
      {
        handle: card.handle,
        at: now,
        actor: card.handle,
        action: 'invite.redeemed',
        resource_type: 'invite',
        resource_id: id,
        via: from.via,
      },
    ]);
    return { ...registered, invite_id: id };
  }
}

const used = () =>
  new RelayError('conflict', 'This invitation was already used; ask an admin for a new one', { reason: 'redeemed' });
const busy = () =>
  new RelayError('conflict', 'This invitation is being redeemed by someone else right now; try again in a moment', {
    reason: 'busy',
  });

/**
 * A clear refusal for an invitation that can no longer be redeemed: 409 once used or while a redemption holds it,
 * 410 once revoked or expired. A taking past its deadline can be taken again.
 */
function assertUsable(doc: InviteDoc, now: Date): void {
  if (doc.status === 'redeemed' && doc.redeeming_until && doc.redeeming_until.getTime() > now.getTime()) throw busy();
  if (doc.status === 'redeemed' && !doc.redeeming_until) throw used();
  if (doc.status === 'revoked')
    throw new RelayError(
      'conflict',
      'This invitation was revoked; ask an admin for a new one',
      { reason: 'revoked' },
      410,
    );
  if (doc.expires_at.getTime() <= now.getTime()) {
    throw new RelayError(
      'conflict',
      `This invitation expired at ${doc.expires_at.toISOString()}; ask an admin for a new one`,
      { reason: 'expired' },
      410,
    );
  }
}
