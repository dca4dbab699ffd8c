// API keys: a recognisable prefix plus 32 random bytes, stored only as an HMAC-SHA-256 under a server pepper.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const API_KEY_PREFIX = 'hr_';

export interface IssuedKey {
  key: string;
  keyId: string;
  hash: string;
}

export function issueApiKey(pepper: string): IssuedKey {
  const keyId = randomBytes(6).toString('hex');
  const key = `${API_KEY_PREFIX}${keyId}_${randomBytes(32).toString('base64url')}`;
  return { key, keyId, hash: hashApiKey(key, pepper) };
}

export function hashApiKey(key: string, pepper: string): string {
  return createHmac('sha256', pepper).update(key).digest('hex');
}

/** The non-secret id inside a key, safe to log. */
export function apiKeyId(key: string): string | undefined {
  const match = /^hr_([0-9a-f]{12})_/.exec(key);
  return match?.[1];
}

export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
