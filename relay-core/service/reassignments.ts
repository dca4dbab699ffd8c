// The sender's follow-ups of a handoff nobody took in time (README: Reminders, escalation and expiry): Reassign it
// to another teammate, or Resend an expired one as a new handoff.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock';
import type { AgentDoc, OutboxEvent, ThreadDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';
import { canonicalHash } from '../domain/canonical-json';
import { isEscalationLead } from '../domain/timer-schedule';
import { TERMINAL_STATUSES as TERMINAL, withCanonicalLines, type Surface } from '../domain/schemas';
import type { ThreadWriter } from '../domain/thread-writer';
import type { CreateHandoff, CreateResult } from './create-handoff';
import type { HandoffTokens } from './handoff-tokens';
import type { Outbox } from './outbox';
import type { Teammates } from './teammates';
import type { ThreadPolicy } from './thread-policy';
import type { ThreadReads } from './thread-reads';

// Only the thread-write port of the store (relay-core/domain/thread-writer.ts), so the fast tier runs it on the
// in-memory one (test/unit/reassignments.test.ts).
export interface ReassignmentsDeps {
  store: Pick<ThreadWriter, 'readThread' | 'writeThread'>;
  teammates: Pick<Teammates, 'get' | 'assertNotBlocked'>;
  outbox: Pick<Outbox, 'recording'>;
  tokens: HandoffTokens;
  policy: Pick<ThreadPolicy, 'enforced' | 'asIfSent'>;
  reads: Pick<ThreadReads, 'readThread'>;
  creates: Pick<CreateHandoff, 'create'>;
  clock: Clock;
  log: Logger;
}

export class Reassignments {
  constructor(private readonly deps: ReassignmentsDeps) {}

  /**
   * The sender hands a pending handoff to another teammate (Reassign): one versioned write changes `to`, re-binds the
   * handoff token to the new body, starts the timers over, and drops the old recipient's Slack records, so the new
   * recipient gets the normal DM (with the thread's messages as replies) and the old DM is redrawn to say it moved.
   */
  async reassign(caller: AgentDoc, threadId: string, to: string, via: Surface): Promise<ThreadDoc> {
    const recipient = await this.deps.teammates.get(to);
    if (!recipient || recipient.status !== 'active')
      throw new RelayError('recipient_not_found', `No active teammate with handle ${to}`);
    const read = await this.deps.store.readThread(threadId);
    // The lead a handoff was escalated to may take it on themselves; the sender may not hand it to themselves.
    if (recipient.handle === caller.handle && (!read || !isEscalationLead(read, caller.handle)))
      throw new RelayError('invalid_params', 'You cannot reassign a handoff to yourself');
    this.deps.teammates.assertNotBlocked(caller, recipient);
    // Reassign is a create to the new recipient as far as the policy goes: a rule denying that pair refuses it.
    const current = this.deps.policy.enforced ? read : null;
    // A lead's reassign is judged as if the sender had sent it to the new recipient.
    const asSender =
      current && current.from !== caller.handle && isEscalationLead(current, caller.handle)
        ? await this.deps.teammates.get(current.from)
        : caller;
    const policy =
      current && asSender && current.from === asSender.handle
        ? await this.deps.policy.asIfSent(asSender, recipient, current, via)
        : undefined;
    const now = this.deps.clock.now();
    const event: OutboxEvent = { id: randomUUID(), type: 'thread.reassigned', at: now, by: caller.handle, via };
    let before: ThreadDoc | null = null;
    const after = await this.deps.outbox.recording(event, async () => {
      const written = await this.deps.store.writeThread(threadId, (doc) => {
        // An unclaimed handoff nobody claimed can be handed to one teammate too (its escalation offers Reassign).
        if (
          (doc.from !== caller.handle && !isEscalationLead(doc, caller.handle)) ||
          (doc.status !== 'pending' && doc.status !== 'unclaimed') ||
          doc.to === recipient.handle
        )
          return undefined;
        const body = {
          from: doc.from,
          to: recipient.handle,
          intent: doc.intent,
          summary: doc.summary,
          question: doc.question,
          proposed_action: doc.proposed_action,
          artifacts: doc.artifacts,
          metadata: doc.metadata,
        };
        const bodyHash = canonicalHash(withCanonicalLines(body));
        const keep = (key: string) => !key.startsWith('recipient') && key !== 'escalation' && !key.includes(':t:');
        return {
          ...doc,
          to: recipient.handle,
          team: recipient.team,
          body_hash: bodyHash,
          status: 'pending',
          handoff_token:
            doc.handoff_token || doc.status === 'unclaimed'
              ? this.deps.tokens.mint({ id: doc._id, team: recipient.team, bodyHash, metadata: doc.metadata }, now)
              : doc.handoff_token,
          updated_at: now,
          timers: { fired: {}, since: now },
          status_history: [
            ...doc.status_history,
            { status: 'pending', by: caller.handle, at: now, via, ...(policy ? { policy } : {}) },
          ],
          slack: null,
          slack_replies: Object.fromEntries(Object.entries(doc.slack_replies ?? {}).filter(([key]) => keep(key))),
          slack_pending: Object.fromEntries(Object.entries(doc.slack_pending ?? {}).filter(([key]) => keep(key))),
          reassigned_from: [
            ...(doc.reassigned_from ?? []),
            { handle: doc.to, slack: doc.slack, at: now, by: caller.handle },
          ],
          outbox: [...doc.outbox, event],
        };
      });
      before = written.before;
      return written.after;
    });
    if (after) {
      this.deps.log.info(
        { thread_id: threadId, from: (before as ThreadDoc | null)?.to, to: recipient.handle, by: caller.handle, via },
        'handoff reassigned',
      );
      return after;
    }
    const doc = before as ThreadDoc | null;
    if (!doc) throw new RelayError('thread_not_found', `No thread ${threadId}`);
    if (doc.from !== caller.handle && !isEscalationLead(doc, caller.handle))
      throw new RelayError(
        'not_authorized_transition',
        `Only the sender (${doc.from}) or the lead it was escalated to can reassign this handoff`,
      );
    if (doc.to === recipient.handle)
      throw new RelayError('invalid_params', `The handoff already goes to ${recipient.handle}`);
    throw new RelayError(
      TERMINAL.includes(doc.status) ? 'thread_terminal' : 'invalid_transition',
      `Only a pending or unclaimed handoff can be reassigned; this one is ${doc.status}`,
      { status: doc.status },
    );
  }

  /**
   * The sender's Resend of an expired handoff: a new handoff with the same body, `metadata.resent_from` naming the
   * old one, which records `resent_as`. Its idempotency key derives from the old thread, so Resend twice is one new handoff.
   */
  async resend(caller: AgentDoc, threadId: string, via: Surface): Promise<CreateResult> {
    const doc = await this.deps.reads.readThread(caller, threadId);
    if (doc.from !== caller.handle)
      throw new RelayError('not_authorized_transition', `Only the sender (${doc.from}) can resend this handoff`);
    if (doc.status !== 'expired')
      throw new RelayError('invalid_transition', `Only an expired handoff can be resent; this one is ${doc.status}`, {
        status: doc.status,
      });
    const created = await this.deps.creates.create(
      caller,
      {
        to: doc.to,
        intent: doc.intent,
        summary: doc.summary,
        ...(doc.question !== null ? { question: doc.question } : {}),
        artifacts: doc.artifacts,
        proposed_action: doc.proposed_action,
        metadata: { ...doc.metadata, resent_from: doc._id },
        idempotency_key: `resend:${doc._id}`,
      },
      via,
    );
    await this.deps.store.writeThread(threadId, (d) =>
      d.resent_as ? undefined : { ...d, resent_as: created.task_id },
    );
    return created;
  }
}
