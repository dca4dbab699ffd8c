// A thread document as the relay stores one, for tests that write the store directly (list pages, store contracts).
import { randomUUID } from 'node:crypto';
import type { ThreadDoc, TimerDoc } from '../../relay-core/domain/documents';
import { armedTimer } from '../../relay-core/domain/timer-schedule';
import type { MongoStore } from '../../relay-core/store/mongo-store';
import type { ThreadStatus } from '../../relay-core/domain/schemas';
import { withClaimable } from '../../relay-core/store/thread-lists';

/** A new thread from `from` to `to`, in `status`, created (and last updated) at `at`, as the store writes it. */
export function threadDocAt(from: string, to: string, status: ThreadStatus, at: Date): ThreadDoc {
  return withClaimable({
    _id: randomUUID(),
    version: 1,
    team: 'acme',
    from,
    to,
    intent: 'inform',
    summary: `from ${from}`,
    question: null,
    proposed_action: null,
    artifacts: [],
    metadata: {},
    status,
    status_history: [],
    request_hash: 'h',
    body_hash: 'h',
    completed_summary: null,
    completion_artifacts: [],
    decline_reason: null,
    cancel_reason: null,
    created_at: at,
    updated_at: at,
    accepted_at: null,
    completed_at: null,
    declined_at: null,
    cancelled_at: null,
    message_seq: 0,
    message_counts: { from: 0, to: 0 },
    outbox: [],
    slack: null,
  } as ThreadDoc);
}

/** The thread's armed timer step as stored (null: none, or no such thread). */
export async function armedTimerOf(store: MongoStore, threadId: string): Promise<TimerDoc | null> {
  const thread = await store.readThread(threadId);
  return thread && armedTimer(thread);
}
