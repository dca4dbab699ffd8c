// Holding a call for approval: a held create becomes awaiting_approval, a held change to a thread is recorded as an
// approval request bound to that call; both answer approval_pending and arm the approval's timers.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { approvalId, bindingOf, type ApprovalRecord, type ApproverRef } from '../domain/approval';
import type { Clock } from '../domain/clock';
import type { AgentDoc, OutboxEvent, PolicyStamp, ThreadDoc } from '../domain/documents';
import type { PolicyAction } from '../domain/policy';
import type { Surface } from '../domain/schemas';
import { stateVersion } from '../domain/thread-lifecycle';
import type { ThreadWriter } from '../domain/thread-writer';
import type { ApprovalRecords } from './approval-records';
import type { ApprovalTimers } from './approval-timers';
import type { Approvers } from './approval-approvers';
import { approvalPending, type ApprovalRule } from './approvals';
import type { Outbox } from './outbox';

export interface ApprovalRequestsDeps {
  store: Pick<ThreadWriter, 'writeThread'>;
  outbox: Pick<Outbox, 'recording'>;
  approvers: Pick<Approvers, 'resolve'>;
  records: Pick<ApprovalRecords, 'write'>;
  timers: Pick<ApprovalTimers, 'arm'>;
  clock: Clock;
  log: Logger;
}

export class ApprovalRequests {
  constructor(private readonly deps: ApprovalRequestsDeps) {}

  private newRecord(
    doc: ThreadDoc,
    fields: {
      action: PolicyAction;
      actor: AgentDoc;
      via: Surface;
      args: Record<string, unknown>;
      state_version: number;
      stamp: PolicyStamp;
      rule: ApprovalRule;
      approvers: ApproverRef[];
    },
  ): ApprovalRecord {
    const now = this.deps.clock.now();
    const id = approvalId(doc._id, (doc.approvals?.length ?? 0) + 1);
    const { rule } = fields;
    const base = {
      action: fields.action,
      args: fields.args,
      actor: fields.actor.handle,
      state_version: fields.state_version,
      policy_version: fields.stamp.policy_version,
    };
    return {
      id,
      ...base,
      via: fields.via,
      rule_id: rule.id,
      binding: bindingOf({ ...base, thread_id: doc._id }),
      approvers: fields.approvers,
      quorum: Math.min(rule.quorum, fields.approvers.length),
      approvals: [],
      status: 'pending',
      reason: null,
      decided_by: null,
      decided_at: null,
      outcome: null,
      created_at: now,
      remind_after_ms: rule.remind_after ?? null,
      remind_at: rule.remind_after ? new Date(now.getTime() + rule.remind_after) : null,
      timeout_ms: rule.timeout,
      deadline: new Date(now.getTime() + rule.timeout),
      on_timeout: rule.on_timeout,
      escalate_to: rule.escalate_to ?? [],
      step: 0,
      history: [{ at: now, what: 'requested', by: fields.actor.handle }],
    };
  }

  /**
   * Turns a new thread into a create held for approval: status awaiting_approval, hidden from the recipient, the
   * approval record on it and `thread.awaiting_approval` (not thread.created) in its outbox. Throws before any
   * write when an approver does not resolve.
   */
  async holdCreate(
    doc: ThreadDoc,
    rule: ApprovalRule,
    stamp: PolicyStamp,
    sender: AgentDoc,
    recipient: AgentDoc,
    via: Surface,
  ): Promise<ApprovalRecord> {
    const approvers = await this.deps.approvers.resolve(
      rule.approvers,
      { sender, recipient, actor: sender },
      rule.id,
      0,
    );
    const record = this.newRecord(doc, {
      action: 'handoff.create',
      actor: sender,
      via,
      args: {},
      state_version: 1,
      stamp,
      rule,
      approvers,
    });
    doc.status = 'awaiting_approval';
    doc.status_history = doc.status_history.map((entry) => ({ ...entry, status: 'awaiting_approval', policy: stamp }));
    doc.hidden_from_recipient = true;
    doc.approvals = [record];
    doc.outbox = doc.outbox.map((event) => ({ ...event, type: 'thread.awaiting_approval' }));
    return record;
  }

  /** After the held thread (or a new approval request) is stored: its listing entry, open for the sweep, and its timers. */
  async opened(threadId: string, record: ApprovalRecord): Promise<void> {
    await this.deps.records.write(threadId, record);
    await this.deps.timers.arm(record);
  }

  /**
   * Holds a call on an existing thread: records an approval request bound to the call (one per identical call
   * against the same state: a retry gets the same approval) and throws approval_pending. Nothing else changes.
   */
  async request(
    actor: AgentDoc,
    doc: ThreadDoc,
    fields: {
      action: PolicyAction;
      args: Record<string, unknown>;
      via: Surface;
      rule: ApprovalRule;
      stamp: PolicyStamp;
      sender: AgentDoc;
      recipient: AgentDoc;
    },
  ): Promise<never> {
    const approvers = await this.deps.approvers.resolve(
      fields.rule.approvers,
      { sender: fields.sender, recipient: fields.recipient, actor },
      fields.rule.id,
      0,
    );
    let held: ApprovalRecord | undefined;
    let fresh = false;
    const event: OutboxEvent = {
      id: randomUUID(),
      type: 'approval.requested',
      at: this.deps.clock.now(),
      by: actor.handle,
      via: fields.via,
    };
    await this.deps.outbox.recording(event, async () => {
      const written = await this.deps.store.writeThread(doc._id, (current) => {
        fresh = false;
        const version = stateVersion(current);
        const binding = bindingOf({
          action: fields.action,
          args: fields.args,
          actor: actor.handle,
          state_version: version,
          policy_version: fields.stamp.policy_version,
          thread_id: current._id,
        });
        held = current.approvals?.find((a) => a.binding === binding && a.status === 'pending');
        if (held) return undefined;
        held = this.newRecord(current, {
          action: fields.action,
          actor,
          via: fields.via,
          args: fields.args,
          state_version: version,
          stamp: fields.stamp,
          rule: fields.rule,
          approvers,
        });
        fresh = true;
        return { ...current, approvals: [...(current.approvals ?? []), held], outbox: [...current.outbox, event] };
      });
      return written.after;
    });
    if (fresh && held) {
      await this.opened(doc._id, held);
      this.deps.log.info(
        { thread_id: doc._id, approval_id: held.id, action: fields.action, actor: actor.handle },
        'call held for approval',
      );
    }
    throw approvalPending(held!);
  }
}
