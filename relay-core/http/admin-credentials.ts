// The admin key as /metrics and /admin/queues take it: a Bearer token, or HTTP Basic (any user name, the key as
// password) so that a browser can open them; a refusal says both ways and challenges for both.
import type { Request, Response } from 'express';
import { constantTimeEqual } from '../ops/api-keys';
import { bearer } from './bearer-auth';

const REALM = 'handoff-relay admin';

/** What a refusal says: which key, and the two ways to send it. */
export const ADMIN_KEY_HELP =
  'send the admin key (RELAY_ADMIN_KEY, or the .data/admin-key file `npm start` wrote) as `Authorization: Bearer <key>`, or as the password of HTTP Basic with any user name (a browser asks for it)';

/** The key presented, and how: `Authorization: Bearer <key>`, or Basic with the key as password. */
export function presentedKey(req: Request): { key: string; scheme: 'bearer' | 'basic' } | undefined {
  const token = bearer(req);
  if (token) return { key: token, scheme: 'bearer' };
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(req.get('authorization') ?? '');
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : { key: decoded.slice(colon + 1), scheme: 'basic' };
}

/** The presented key when it is one of `accepted` (unset ones never match). */
export function acceptedKey(
  req: Request,
  accepted: ReadonlyArray<string | undefined>,
): ReturnType<typeof presentedKey> {
  const presented = presentedKey(req);
  if (!presented) return undefined;
  return accepted.some((key) => key && constantTimeEqual(presented.key, key)) ? presented : undefined;
}

/** The 401's challenges: Basic first (a browser then asks for the key), Bearer for programs. */
export function challengeForAdminKey(res: Response): void {
  res.setHeader('WWW-Authenticate', [`Basic realm="${REALM}", charset="UTF-8"`, `Bearer realm="${REALM}"`]);
}
