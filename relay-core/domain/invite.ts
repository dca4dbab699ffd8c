// Invitations (service/invites.ts): what an admin presets when inviting, what the invitee chooses when redeeming,
// and the card the two make together, checked by the same schema as a registration.
import { z } from 'zod';
import type { InviteDoc } from './documents';
import { durationSchema } from './duration';
import { agentCardInputSchema, handleSchema, LIMITS, text, type AgentCardInput } from './schemas';

/** `hri_<invite id>_<secret>`: the id (12 hex) is what lists and routes show; the whole code is the secret. */
export const INVITE_ID_PATTERN = /^[0-9a-f]{12}$/;
export const INVITE_CODE_PATTERN = /^hri_([0-9a-f]{12})_[A-Za-z0-9_-]{43}$/;

export const DEFAULT_INVITE_TTL = '7d';
const MAX_INVITE_TTL_MS = 30 * 86_400_000;

const teamSchema = z
  .string()
  .max(LIMITS.handle)
  .regex(/^[A-Za-z0-9._-]+$/, 'must be a team like acme (letters, digits, ".", "_", "-")');
const list = (max: number) => z.array(text(max).min(1)).max(LIMITS.skills);

/** POST /admin/invites: every preset optional; `expires_in` a duration such as 30m, 24h or 7d (at most 30d). */
export const inviteCreateSchema = z.strictObject({
  team: teamSchema.optional(),
  role: text(LIMITS.role).min(1).optional(),
  skills: list(LIMITS.skill).optional(),
  repos_owned: list(LIMITS.path).optional(),
  lead: handleSchema.optional(),
  note: text(LIMITS.title).min(1).optional(),
  expires_in: durationSchema(
    {
      min: 1,
      max: MAX_INVITE_TTL_MS,
      message: (value) => `must be a duration such as 30m, 24h or 7d (at most 30d), got "${value.slice(0, 20)}"`,
    },
    DEFAULT_INVITE_TTL,
  ),
});
export type InviteCreate = z.infer<typeof inviteCreateSchema>;

/**
 * POST /invites/:id/redeem: the invitee's handle and card. With a preset team the handle may be the part before
 * `@` alone. No `slack_user_id`: a Slack user is linked only by redeeming from Slack, where Slack says who it is.
 */
export const inviteRedemptionSchema = z.strictObject({
  /** The invite code, when the path carries the invite id. */
  token: z.string().max(200).optional(),
  handle: z.string().min(1).max(LIMITS.handle),
  name: text(LIMITS.name).min(1).optional(),
  display_name: text(LIMITS.name).min(1).optional(),
  role: text(LIMITS.role).min(1).optional(),
  skills: list(LIMITS.skill).optional(),
  repos_owned: list(LIMITS.path).optional(),
  tools: list(LIMITS.skill).optional(),
  lead: handleSchema.optional(),
});
export type InviteRedemption = z.infer<typeof inviteRedemptionSchema>;

/**
 * What lists and the creation answer show of an invitation: never its code or hash. `expired` is read off the clock;
 * `redeeming` while a redemption holds it (until `redeeming_until`, then it can be redeemed or revoked again).
 */
export interface InviteView {
  id: string;
  status: 'open' | 'redeeming' | 'redeemed' | 'revoked' | 'expired';
  preset: InviteDoc['preset'];
  note: string | null;
  created_by: string;
  created_at: string;
  expires_at: string;
  redeemed_at: string | null;
  redeemed_by: string | null;
  redeeming_until: string | null;
  revoked_at: string | null;
}

export function inviteView(doc: Omit<InviteDoc, 'token_hash'>, now: Date): InviteView {
  const expired = doc.status === 'open' && doc.expires_at.getTime() <= now.getTime();
  return {
    id: doc._id,
    status: expired ? 'expired' : doc.redeeming_until ? 'redeeming' : doc.status,
    preset: doc.preset,
    note: doc.note ?? null,
    created_by: doc.created_by,
    created_at: doc.created_at.toISOString(),
    expires_at: doc.expires_at.toISOString(),
    redeemed_at: doc.redeemed_at?.toISOString() ?? null,
    redeemed_by: doc.redeemed_by ?? null,
    redeeming_until: doc.redeeming_until?.toISOString() ?? null,
    revoked_at: doc.revoked_at?.toISOString() ?? null,
  };
}

const union = (a: string[] = [], b: string[] = []) => [...new Set([...a, ...b])];

/**
 * What a surface that asks for less than REST does brings along: Slack links the person it knows, and fills in a
 * team for a bare handle (RELAY_TEAM) and a role when neither the invitation nor the person gave one.
 */
export interface RedeemDefaults {
  slackUserId?: string;
  team?: string;
  role?: string;
}

/**
 * The card an invitation and its invitee's choice make: the preset team binds the handle, a preset role or lead is
 * the card's (a different one is refused, naming the field), preset skills and paths are added to the invitee's.
 * The result goes through the registration schema, so every rule of a card applies.
 */
export function invitedCard(
  preset: InviteDoc['preset'],
  choice: InviteRedemption,
  defaults: RedeemDefaults = {},
): AgentCardInput | { field: string; message: string } {
  let handle = choice.handle.replace(/^@/, '');
  if (preset.team) {
    const [local, team] = handle.split('@');
    if (team !== undefined && team !== preset.team)
      return {
        field: 'handle',
        message: `this invitation is for team ${preset.team}: the handle must end in @${preset.team}`,
      };
    handle = `${local}@${preset.team}`;
  } else if (defaults.team && !handle.includes('@')) {
    handle = `${handle}@${defaults.team}`;
  }
  for (const field of ['role', 'lead'] as const) {
    if (preset[field] !== undefined && choice[field] !== undefined && choice[field] !== preset[field]) {
      return { field, message: `this invitation sets ${field} ${preset[field]}; leave it out or send the same` };
    }
  }
  if (choice.name !== undefined && choice.display_name !== undefined && choice.name !== choice.display_name) {
    return { field: 'display_name', message: 'differs from name; send one of them' };
  }
  const name = choice.name ?? choice.display_name;
  if (name === undefined) return { field: 'name', message: 'required (or display_name)' };
  const role = preset.role ?? choice.role ?? defaults.role;
  if (role === undefined) return { field: 'role', message: 'required (this invitation does not set one)' };
  const lead = preset.lead ?? choice.lead;
  const parsed = agentCardInputSchema.safeParse({
    handle,
    name,
    role,
    skills: union(preset.skills, choice.skills),
    repos_owned: union(preset.repos_owned, choice.repos_owned),
    tools: choice.tools ?? [],
    ...(lead ? { lead } : {}),
    ...(defaults.slackUserId ? { slack_user_id: defaults.slackUserId } : {}),
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { field: issue.path.map(String).join('.') || 'body', message: issue.message };
  }
  return parsed.data;
}
