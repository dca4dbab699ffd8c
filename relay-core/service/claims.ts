// Claiming an unclaimed handoff (sent to a role, skill or owner that named several teammates): the first claim wins.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock';
import type { AgentDoc, OutboxEvent, ThreadDoc } from '../domain/documents';
import { claimedThread, explainFailedClaim, isCandidate, isRepeatedClaim } from '../domain/claim';
import type { Surface, ThreadStatus } from '../domain/schemas';
import type { ThreadWriter } from '../domain/thread-writer';
import type { HandoffTokens } from './handoff-tokens';
import type { Outbox } from './outbox';
import type { ThreadPolicy } from './thread-policy';

export interface ClaimResult {
  thread_id: string;
  status: ThreadStatus;
  recipient: string;
  claimed_by: string;
  claimed_at: string | null;
}

export interface ClaimsDeps {
  store: Pick<ThreadWriter, 'readThread' | 'writeThread'>;
  outbox: Pick<Outbox, 'recording'>;
  tokens: Pick<HandoffTokens, 'mint'>;
  policy: Pick<ThreadPolicy, 'forClaim'>;
  clock: Clock;
  log: Logger;
}

export class Claims {
  constructor(private readonly deps: ClaimsDeps) {}

  /**
   * A candidate takes an unclaimed handoff: the first claim wins (one versioned write), the claimer becomes the
   * recipient (pending, with a handoff token) and thread.claimed goes out. The claimer asking again answers success;
   * anyone else, or a claim after a cancel, is refused and changes nothing.
   */
  async claim(caller: AgentDoc, threadId: string, via: Surface, sessionId?: string): Promise<ClaimResult> {
    const { store, outbox, tokens, clock, log } = this.deps;
    const current = await store.readThread(threadId);
    if (current && isRepeatedClaim(caller, current)) return claimResult(current);
    if (!current || !isCandidate(caller.handle, current)) throw explainFailedClaim(caller, threadId, current);
    const policy = await this.deps.policy.forClaim(caller, current, via, sessionId);
    const now = clock.now();
    const event: OutboxEvent = { id: randomUUID(), type: 'thread.claimed', at: now, by: caller.handle, via };
    let before: ThreadDoc | null = null;
    const after = await outbox.recording(event, async () => {
      const written = await store.writeThread(threadId, (doc) => {
        const token = tokens.mint(
          { id: doc._id, team: caller.team, bodyHash: doc.body_hash, metadata: doc.metadata },
          now,
        );
        return claimedThread(doc, { claimer: caller, now, via, event, token, ...(policy ? { policy } : {}) });
      });
      before = written.before;
      return written.after;
    });
    if (!after) {
      const seen = before as ThreadDoc | null;
      if (seen && isRepeatedClaim(caller, seen)) return claimResult(seen);
      throw explainFailedClaim(caller, threadId, seen);
    }
    log.info({ thread_id: threadId, claimed_by: caller.handle, via }, 'handoff claimed');
    return claimResult(after);
  }
}

function claimResult(doc: ThreadDoc): ClaimResult {
  return {
    thread_id: doc._id,
    status: doc.status,
    recipient: doc.to,
    claimed_by: doc.claimed_by!,
    claimed_at: doc.claimed_at?.toISOString() ?? null,
  };
}
