// Unclaimed handoffs: the thread a target with several candidates opens, the claim that makes one of them the recipient, and why a claim was refused.
import type { AgentDoc, OutboxEvent, PolicyStamp, StatusChange, ThreadDoc } from './documents';
import { RelayError } from './errors';
import type { RecipientTarget, Surface } from './schemas';

/** True while `handle` may claim the thread: it is unclaimed and `handle` is one of its candidates. */
export function isCandidate(handle: string, doc: Pick<ThreadDoc, 'status' | 'candidates'>): boolean {
  return doc.status === 'unclaimed' && (doc.candidates ?? []).includes(handle);
}

/** A pending thread (newPendingThread, addressed to the target's label) turned unclaimed: no recipient and no handoff token until the claim. */
export function unclaimedThread(pending: ThreadDoc, target: RecipientTarget, candidates: readonly string[]): ThreadDoc {
  return {
    ...pending,
    to: target.label,
    to_target: target.label,
    candidates: [...candidates],
    claimed_by: null,
    claimed_at: null,
    status: 'unclaimed',
    status_history: pending.status_history.map((entry): StatusChange => ({ ...entry, status: 'unclaimed' })),
    handoff_token: null,
  };
}

/**
 * The thread claimed by `claimer`, or undefined when it is no longer theirs to claim. The claimer becomes the
 * recipient (status pending, a fresh handoff token for their team), and keeps the place the thread already had in
 * their received box; the other candidates' entries stop counting (lists check `to` and the position).
 */
export function claimedThread(
  doc: ThreadDoc,
  claim: {
    claimer: AgentDoc;
    now: Date;
    via: Surface;
    event: OutboxEvent;
    token: ThreadDoc['handoff_token'];
    policy?: PolicyStamp;
  },
): ThreadDoc | undefined {
  const { claimer, now, via, event, token, policy } = claim;
  if (!isCandidate(claimer.handle, doc)) return undefined;
  return {
    ...doc,
    to: claimer.handle,
    team: claimer.team,
    status: 'pending',
    claimed_by: claimer.handle,
    claimed_at: now,
    updated_at: now,
    handoff_token: token,
    // The unclaimed chain ends here; the claimer's pending chain counts from the claim.
    timers: {
      fired: {},
      since: now,
      ...(doc.timers && Object.keys(doc.timers.fired ?? {}).length > 0 ? { unclaimed_fired: doc.timers.fired } : {}),
    },
    status_history: [
      ...doc.status_history,
      { status: 'pending', by: claimer.handle, at: now, via, ...(policy ? { policy } : {}) },
    ],
    outbox: [...doc.outbox, event],
  };
}

/** True when `caller` already claimed the thread: asking again answers success and changes nothing. */
export function isRepeatedClaim(caller: AgentDoc, doc: ThreadDoc): boolean {
  return doc.claimed_by === caller.handle;
}

/** Why a claim wrote nothing, judged on the thread as last read (null: it does not exist). */
export function explainFailedClaim(caller: AgentDoc, threadId: string, doc: ThreadDoc | null): RelayError {
  if (!doc) return new RelayError('thread_not_found', `No thread ${threadId}`);
  // A create held for approval does not exist for its candidates yet.
  if (doc.hidden_from_recipient && doc.from !== caller.handle)
    return new RelayError('thread_not_found', `No thread ${threadId}`);
  if (
    !doc.to_target ||
    !doc.candidates ||
    (doc.candidates.length < 2 && !doc.claimed_by && doc.status !== 'unclaimed')
  ) {
    return new RelayError('invalid_transition', `This handoff was sent to ${doc.to}; there is nothing to claim`, {
      status: doc.status,
    });
  }
  if (!doc.candidates.includes(caller.handle)) {
    return new RelayError(
      'not_a_participant',
      `${caller.handle} is not one of the candidates for this handoff to ${doc.to_target} (${doc.candidates.join(', ')})`,
    );
  }
  if (doc.claimed_by) {
    return new RelayError(
      'invalid_transition',
      `Already claimed by ${doc.claimed_by} at ${doc.claimed_at?.toISOString()}`,
      { status: doc.status, claimed_by: doc.claimed_by },
    );
  }
  if (doc.status !== 'unclaimed') {
    return new RelayError('thread_terminal', `The handoff was ${doc.status} before anyone claimed it`, {
      status: doc.status,
    });
  }
  return new RelayError('invalid_transition', `Cannot claim a handoff that is ${doc.status}`, { status: doc.status });
}
