// Invitations over REST: an admin makes, lists and revokes them; an invitee redeems one with no key but its code,
// and gets its API key once. Codes travel in bodies (or the redeem path) and are never logged (routes log patterns).
import express, { type NextFunction, type Request, type Response } from 'express';
import { z } from 'zod';
import { RelayError, invalidParams } from '../domain/errors';
import { INVITE_CODE_PATTERN, INVITE_ID_PATTERN, inviteCreateSchema, inviteRedemptionSchema } from '../domain/invite';
import type { RateLimiter } from '../ops/rate-limiter';
import type { Invites } from '../service/invites';

export interface InviteRouteDeps {
  invites: Invites;
  requireAdmin(req: Request): void;
  /** The relay's public URL, for the redeem URL a creation answers with. */
  publicUrl: string;
  /** Counts every redemption by the client's address before its body is read (429 past the limit). */
  redeemLimiter?: RateLimiter;
}

function parse<T extends z.ZodType>(schema: T, value: unknown, source: string): z.infer<T> {
  const parsed = schema.safeParse(value ?? {});
  if (!parsed.success) throw invalidParams(parsed.error.issues, source);
  return parsed.data;
}

const listQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(500).default(500) });

/** The invite code of a redemption: the path's when the path holds the whole code, else the body's `token`. */
function redeemCode(pathId: string, token: string | undefined): string {
  const pathIsCode = INVITE_CODE_PATTERN.test(pathId);
  if (!pathIsCode && !INVITE_ID_PATTERN.test(pathId))
    throw new RelayError('invalid_params', 'path.id: must be an invite id or an invite code (hri_…)');
  const code = pathIsCode ? pathId : token;
  if (code === undefined)
    throw new RelayError('invalid_params', 'body.token: required: the invite code (hri_…) you were given');
  if (pathIsCode && token !== undefined && token !== pathId)
    throw new RelayError('invalid_params', 'body.token: differs from the code in the path; send one of them');
  // A code for another invitation than the path names is answered as any wrong code is.
  if (!pathIsCode && INVITE_CODE_PATTERN.exec(code)?.[1] !== pathId)
    throw new RelayError('not_found', 'No such invitation: check the code you were given (handoff-relay join hri_…)');
  return code;
}

export function mountInviteRoutes(app: express.Express, deps: InviteRouteDeps): void {
  const { invites, requireAdmin } = deps;
  const json = express.json({ limit: '64kb', strict: false, type: () => true });

  app.post('/admin/invites', json, async (req, res) => {
    requireAdmin(req);
    const created = await invites.create(parse(inviteCreateSchema, req.body, 'body'), 'admin');
    res.status(201).json({
      ...created,
      redeem_url: `${deps.publicUrl.replace(/\/+$/, '')}/invites/${created.id}/redeem`,
      join_command: `handoff-relay join ${created.token}`,
    });
  });

  app.get('/admin/invites', async (req, res) => {
    requireAdmin(req);
    const { limit } = parse(listQuery, req.query, 'query');
    res.json({ invites: await invites.list(limit) });
  });

  app.delete('/admin/invites/:id', async (req, res) => {
    requireAdmin(req);
    res.json(await invites.revoke(String(req.params.id)));
  });

  // No key to count by: the address is (the socket's; `trust proxy` is off, so a forwarded header cannot pick it).
  const limitByAddress = async (req: Request, _res: Response, next: NextFunction) => {
    await deps.redeemLimiter?.consume(req.ip ?? req.socket.remoteAddress ?? 'unknown');
    next();
  };

  app.post('/invites/:id/redeem', limitByAddress, json, async (req, res) => {
    const choice = parse(inviteRedemptionSchema, req.body, 'body');
    const code = redeemCode(String(req.params.id), choice.token);
    const { card, api_key, invite_id } = await invites.redeem(code, choice);
    res.status(201).json({ ...card, agent_id: card.handle, api_key, invite_id });
  });
}
