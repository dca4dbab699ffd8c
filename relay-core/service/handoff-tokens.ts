// Handoff tokens: minted with each new thread, derived again for the recipient's view, stored only as a hash.
import { createHmac, randomBytes } from 'node:crypto';
import { declaredProject, hashHandoffToken } from '../domain/acceptance-verdict';
import type { ThreadDoc } from '../domain/documents';

export const HANDOFF_TOKEN_TTL_MS = 7 * 24 * 60 * 60 * 1000;

export type StoredHandoffToken = NonNullable<ThreadDoc['handoff_token']>;

/** The raw token of a thread: HMAC under the relay's secret, so only its hash is ever stored. */
export function deriveHandoffToken(secret: string, threadId: string, nonce: string): string {
  return `hto_${createHmac('sha256', secret).update(`handoff_token\0${threadId}\0${nonce}`).digest('base64url')}`;
}

/** A new thread's token record: a fresh nonce, the hash of the token it derives, and when it expires. */
export function mintHandoffToken(
  secret: string,
  thread: { id: string; team: string; bodyHash: string; projectId: string | null },
  now: Date,
  ttlMs: number,
): StoredHandoffToken {
  const nonce = randomBytes(16).toString('hex');
  return {
    nonce,
    hash: hashHandoffToken(deriveHandoffToken(secret, thread.id, nonce)),
    team: thread.team,
    body_hash: thread.bodyHash,
    project_id: thread.projectId,
    expires_at: new Date(now.getTime() + ttlMs),
    consumed_at: null,
  };
}

/** The relay's handoff tokens under its secret: minted for a thread's (new) recipient, derived again for their view. */
export class HandoffTokens {
  constructor(
    private readonly secret: string,
    private readonly ttlMs: number = HANDOFF_TOKEN_TTL_MS,
  ) {}

  /** A token record for `thread` going to someone in `team`, bound to `bodyHash`; `metadata` declares its project. */
  mint(
    thread: { id: string; team: string; bodyHash: string; metadata: Record<string, unknown> },
    now: Date,
  ): StoredHandoffToken {
    return mintHandoffToken(
      this.secret,
      {
        id: thread.id,
        team: thread.team,
        bodyHash: thread.bodyHash,
        projectId: declaredProject(thread.metadata).project_id,
      },
      now,
      this.ttlMs,
    );
  }

  /** The raw token of a thread's stored record. */
  derive(threadId: string, nonce: string): string {
    return deriveHandoffToken(this.secret, threadId, nonce);
  }
}
