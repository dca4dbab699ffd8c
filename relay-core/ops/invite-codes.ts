// Invite codes: `hri_` + a 12-hex id + 32 random bytes, stored only as an HMAC-SHA-256 under the key pepper, as API keys are.
import { randomBytes } from 'node:crypto';
import { INVITE_CODE_PATTERN } from '../domain/invite';
import { hashApiKey } from './api-keys';

export function issueInviteCode(pepper: string): { code: string; id: string; hash: string } {
  const id = randomBytes(6).toString('hex');
  const code = `hri_${id}_${randomBytes(32).toString('base64url')}`;
  return { code, id, hash: hashApiKey(code, pepper) };
}

/** The invite id inside a well-formed code (safe to log and show), or undefined. */
export function inviteIdOf(code: string): string | undefined {
  return INVITE_CODE_PATTERN.exec(code)?.[1];
}
