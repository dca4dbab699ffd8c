// Appending a message to a thread as a participant: the policy asked (draft.attach or message.append), then the
// append itself (message-append.ts), idempotent under the caller's key.
import type { ApprovalRecord } from '../domain/approval';
import type { AgentDoc, ThreadDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';
import type { Surface } from '../domain/schemas';
import type { IdempotencyLedger } from './idempotency';
import type { AppendRequest, AppendResult, MessageAppender } from './message-append';
import type { ThreadPolicy } from './thread-policy';

export interface MessagesDeps {
  ledger: Pick<IdempotencyLedger, 'run'>;
  appender: Pick<MessageAppender, 'append'>;
  policy: Pick<ThreadPolicy, 'forChange'>;
}

export class Messages {
  constructor(private readonly deps: MessagesDeps) {}

  /** Appends a message (message-append.ts); idempotent under the caller's key. */
  async append(
    caller: AgentDoc,
    request: AppendRequest,
    via: Surface,
    idempotencyKey?: string,
    sessionId?: string,
  ): Promise<AppendResult> {
    return this.deps.ledger.run(caller.handle, idempotencyKey, { method: 'append', ...request }, async (turn) => {
      // A draft for a proposed action (draft_proposed_action marks it) is its own action, so a rule can hold drafts apart.
      const action = request.payload?.kind === 'draft' ? 'draft.attach' : 'message.append';
      // A held append answers approval_pending; approved, it is appended as the caller (appendApproved).
      const { read } = await this.deps.policy.forChange(caller, request.thread_id, action, via, sessionId, {
        ...request,
      });
      return this.deps.appender.append(caller, request, via, turn, read);
    });
  }

  /**
   * An approved message.append or draft.attach, appended as its actor by the normal append; the approval id is the
   * idempotency key, so however many processes finish the approval the message is appended once.
   */
  async appendApproved(
    _doc: ThreadDoc,
    record: ApprovalRecord,
    actor: AgentDoc,
  ): Promise<{ message: string } | { refusal: string }> {
    const request = record.args as unknown as AppendRequest;
    try {
      const done = await this.deps.ledger.run(
        actor.handle,
        `approval:${record.id}`,
        { method: 'append', ...request },
        (turn) => this.deps.appender.append(actor, request, record.via, turn),
      );
      return { message: `${record.action} was applied as ${actor.handle} (message ${done.sequence_no})` };
    } catch (error) {
      if (isRefusal(error)) return { refusal: error.message };
      throw error;
    }
  }
}

/** A relay error that says why an approved call no longer applies (not one that says to try again later). */
export function isRefusal(error: unknown): error is RelayError {
  return (
    error instanceof RelayError &&
    error.code !== 'internal' &&
    error.code !== 'state_changed' &&
    error.code !== 'unavailable'
  );
}
