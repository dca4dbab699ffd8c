// Human approval: a call a require_approval rule holds is recorded on its thread, decided by its approvers, and
// (once approved) applied exactly once as the original actor, each step one versioned thread write.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import {
  approvalId,
  approvalsCount,
  bindingOf,
  castVote,
  describeApprovers,
  dueTimer,
  threadOfApproval,
  timerJobId,
  type ApprovalRecord,
  type ApproverRef,
  type TimerStep,
  type VoteRefusal,
  type Voter,
} from '../domain/approval';
import type { Clock } from '../domain/clock';
import type { AgentDoc, ApprovalIndexDoc, OutboxEvent, PolicyAuditDoc, PolicyStamp, ThreadDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';
import type { PolicyAction, PolicyRule } from '../domain/policy';
import type { EventType, Surface } from '../domain/schemas';
import { stateVersion } from '../domain/thread-lifecycle';
import type { JobQueue } from '../queues/bullmq-queues';
import { putById, type MongoStore } from '../store/mongo-store';
import { policyAuditEvents } from '../store/account-log';
import type { Outbox } from './outbox';
import type { Teammates } from './teammates';
import { approvalView, type ApprovalView } from './wire-views';

export type ApprovalRule = Extract<PolicyRule, { effect: 'require_approval' }>;

/** The `verify` queue job that fires an approval's reminder or timeout. */
export const APPROVAL_TIMER_JOB = 'approval-timer';

/**
 * Applies an approved non-create call to the thread as its actor: the next thread (with the call's event in its
 * outbox), or why it no longer applies. Supplied by the relay service, which owns the transitions.
 */
export type ApplyApproved = (
  doc: ThreadDoc,
  record: ApprovalRecord,
  actor: AgentDoc,
  emit: (type: EventType) => OutboxEvent,
  now: Date,
) => { next: ThreadDoc; type: EventType } | { refusal: string };

/** How the relay service applies approved calls; it owns the transitions, the appends and the policy. */
export interface ApprovalAppliers {
  /** An approved transition, in the thread write that records the approval. */
  transition: ApplyApproved;
  /**
   * An approved message.append or draft.attach, appended as its actor through the normal append (or an approved
   * handoff.run, queued as its actor): exactly once
   * per approval however often it is asked (the approval id is its idempotency key). What was appended, or why not.
   */
  message: (doc: ThreadDoc, record: ApprovalRecord, actor: AgentDoc) => Promise<{ message: string } | { refusal: string }>;
  /** The policy in force now, asked about the approved call: why it no longer lets it through (a rule now denies it), or null. */
  recheck: (doc: ThreadDoc, record: ApprovalRecord, actor: AgentDoc) => Promise<string | null>;
}

/** The held calls applied after their approval (an append, a run queued), not in the approval's own thread write. */
export function isAppliedAfterApproval(action: PolicyAction): boolean {
  return action === 'message.append' || action === 'draft.attach' || action === 'handoff.run';
}

export interface ApprovalsDeps {
  store: MongoStore;
  teammates: Teammates;
  outbox: Outbox;
  clock: Clock;
  log: Logger;
  /** The `verify` queue, where reminders and timeouts wait as delayed jobs; without one only the sweep fires them. */
  timers?: JobQueue;
}

/** What a decision did, for whoever made it (Slack, the CLI, the API). */
export interface DecisionAnswer {
  approval: ApprovalView;
  /** One sentence: what changed, or why nothing did. */
  message: string;
  changed: boolean;
  /** Why nothing changed, when a vote was refused. */
  refusal?: VoteRefusal;
}

/** The approval_pending error: the call is held, nothing changed; data names the approval and who must approve. */
export function approvalPending(record: ApprovalRecord): RelayError {
  return new RelayError(
    'approval_pending',
    `Policy rule ${record.rule_id} holds ${record.action} for approval by ${describeApprovers(record.approvers)} (approval ${record.id}); nothing was changed. ` +
      'Waiting for a person is normal: check_approval tells where it stands, and the call is applied once approved.',
    { approval_id: record.id, approvers: describeApprovers(record.approvers).split(', '), quorum: record.quorum, rule_id: record.rule_id, policy_version: record.policy_version },
  );
}

export class Approvals {
  private appliers?: ApprovalAppliers;

  constructor(private readonly deps: ApprovalsDeps) {}

  /** The relay service hands in how approved calls are applied and re-checked (it owns the transitions and the policy). */
  setAppliers(appliers: ApprovalAppliers): void {
    this.appliers = appliers;
  }

  /**
   * The people a rule's approvers name. Each entry must resolve: a handle to an active teammate, `role:NAME` to at
   * least one, `recipient_lead`/`sender_lead` to the lead on that card; otherwise policy_denied names the entry.
   * The actor never approves their own call.
   */
  async resolve(names: readonly string[], parties: { sender: AgentDoc; recipient: AgentDoc; actor: AgentDoc }, ruleId: string, step: number): Promise<ApproverRef[]> {
    const refs: ApproverRef[] = [];
    const refuse = (why: string) =>
      new RelayError('policy_denied', `Policy rule ${ruleId} needs approval, but ${why}; ask an admin to fix the policy or the card`, { rule_id: ruleId, approver: why });
    const teammate = async (handle: string, source: string) => {
      const agent = await this.deps.teammates.get(handle);
      if (!agent || agent.status !== 'active') throw refuse(`approver ${source === handle ? handle : `${source} (${handle})`} is not an active teammate`);
      refs.push({ label: agent.handle, handle: agent.handle, slack_user_id: agent.slack_user_id, source, step });
    };
    for (const name of names) {
      if (/^[UW][A-Z0-9]{2,}$/.test(name)) {
        const agent = await this.deps.teammates.bySlackUser(name);
        refs.push({ label: agent?.handle ?? name, handle: agent?.handle ?? null, slack_user_id: name, source: name, step });
      } else if (name.startsWith('role:')) {
        const role = name.slice('role:'.length);
        const cards = await this.deps.teammates.list({ role });
        const others = cards.filter((c) => c.handle !== parties.actor.handle);
        if (others.length === 0) throw refuse(`approver ${name} names no active teammate${cards.length ? ' other than the caller' : ''}`);
        for (const card of others) await teammate(card.handle, name);
      } else if (name === 'recipient_lead' || name === 'sender_lead') {
        const party = name === 'recipient_lead' ? parties.recipient : parties.sender;
        if (!party.lead) throw refuse(`approver ${name}: ${party.handle} has no lead on their card`);
        await teammate(party.lead, name);
      } else {
        await teammate(name, name);
      }
    }
    const seen = new Set<string>();
    const unique = refs.filter((r) => r.handle !== parties.actor.handle && !seen.has(r.label) && seen.add(r.label));
    if (unique.length === 0) throw refuse(`nobody but the caller (${parties.actor.handle}) could approve it`);
    return unique;
  }

  private newRecord(
    doc: ThreadDoc,
    fields: { action: PolicyAction; actor: AgentDoc; via: Surface; args: Record<string, unknown>; state_version: number; stamp: PolicyStamp; rule: ApprovalRule; approvers: ApproverRef[] },
  ): ApprovalRecord {
    const now = this.deps.clock.now();
    const id = approvalId(doc._id, (doc.approvals?.length ?? 0) + 1);
    const { rule } = fields;
    const base = { action: fields.action, args: fields.args, actor: fields.actor.handle, state_version: fields.state_version, policy_version: fields.stamp.policy_version };
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
  async holdCreate(doc: ThreadDoc, rule: ApprovalRule, stamp: PolicyStamp, sender: AgentDoc, recipient: AgentDoc, via: Surface): Promise<ApprovalRecord> {
    const approvers = await this.resolve(rule.approvers, { sender, recipient, actor: sender }, rule.id, 0);
    const record = this.newRecord(doc, { action: 'handoff.create', actor: sender, via, args: {}, state_version: 1, stamp, rule, approvers });
    doc.status = 'awaiting_approval';
    doc.status_history = doc.status_history.map((entry) => ({ ...entry, status: 'awaiting_approval', policy: stamp }));
    doc.hidden_from_recipient = true;
    doc.approvals = [record];
    doc.outbox = doc.outbox.map((event) => ({ ...event, type: 'thread.awaiting_approval' }));
    return record;
  }

  /** After the held thread (or a new approval request) is stored: its listing entry, open for the sweep, and its timers. */
  async opened(threadId: string, record: ApprovalRecord): Promise<void> {
    await this.writeIndex(threadId, record);
    await this.arm(record);
  }

  /**
   * Holds a call on an existing thread: records an approval request bound to the call (one per identical call
   * against the same state: a retry gets the same approval) and throws approval_pending. Nothing else changes.
   */
  async request(
    actor: AgentDoc,
    doc: ThreadDoc,
    fields: { action: PolicyAction; args: Record<string, unknown>; via: Surface; rule: ApprovalRule; stamp: PolicyStamp; sender: AgentDoc; recipient: AgentDoc },
  ): Promise<never> {
    const approvers = await this.resolve(fields.rule.approvers, { sender: fields.sender, recipient: fields.recipient, actor }, fields.rule.id, 0);
    let held: ApprovalRecord | undefined;
    let fresh = false;
    const event: OutboxEvent = { id: randomUUID(), type: 'approval.requested', at: this.deps.clock.now(), by: actor.handle, via: fields.via };
    await this.deps.outbox.recording(event, async () => {
      const written = await this.deps.store.writeThread(doc._id, (current) => {
        fresh = false;
        const version = stateVersion(current);
        const binding = bindingOf({ action: fields.action, args: fields.args, actor: actor.handle, state_version: version, policy_version: fields.stamp.policy_version, thread_id: current._id });
        held = current.approvals?.find((a) => a.binding === binding && a.status === 'pending');
        if (held) return undefined;
        held = this.newRecord(current, { action: fields.action, actor, via: fields.via, args: fields.args, state_version: version, stamp: fields.stamp, rule: fields.rule, approvers });
        fresh = true;
        return { ...current, approvals: [...(current.approvals ?? []), held], outbox: [...current.outbox, event] };
      });
      return written.after;
    });
    if (fresh && held) {
      await this.opened(doc._id, held);
      this.deps.log.info({ thread_id: doc._id, approval_id: held.id, action: fields.action, actor: actor.handle }, 'call held for approval');
    }
    throw approvalPending(held!);
  }

  /** Who `identity` (a handle or a Slack user id) votes as: the teammate and its linked Slack user, or the Slack user and its teammate. */
  async voterFor(identity: string): Promise<Voter> {
    if (/^[UW][A-Z0-9]{2,}$/.test(identity)) {
      const linked = await this.deps.teammates.bySlackUser(identity);
      return { slack_user_id: identity, handle: linked?.handle ?? null, label: linked?.handle ?? identity };
    }
    const agent = await this.deps.teammates.get(identity);
    if (!agent || agent.status !== 'active') throw new RelayError('invalid_params', `body.as: no active teammate with handle ${identity}`);
    return { handle: agent.handle, slack_user_id: agent.slack_user_id, label: agent.handle };
  }

  /** The approval and its thread; not_found for an id this relay did not issue. */
  async get(id: string): Promise<{ thread: ThreadDoc; record: ApprovalRecord }> {
    const threadId = threadOfApproval(id);
    const thread = threadId ? await this.deps.store.readThread(threadId) : null;
    const record = thread?.approvals?.find((a) => a.id === id);
    if (!thread || !record) throw new RelayError('not_found', `No approval ${id}`);
    return { thread, record };
  }

  /** The approval as `caller` may read it: its actor, the thread's sender, or one of its approvers. */
  async viewFor(caller: AgentDoc, id: string): Promise<ApprovalView> {
    const { thread, record } = await this.get(id).catch(() => {
      throw new RelayError('not_found', `No approval ${id} that you can see`);
    });
    const approver = record.approvers.some((a) => a.handle === caller.handle || (caller.slack_user_id !== null && a.slack_user_id === caller.slack_user_id));
    if (record.actor !== caller.handle && thread.from !== caller.handle && !approver) throw new RelayError('not_found', `No approval ${id} that you can see`);
    return approvalView(thread._id, record);
  }

  /** The approvals of a thread the caller takes part in (its recipient sees none while the create is held). */
  async forThread(caller: AgentDoc, thread: ThreadDoc): Promise<ApprovalView[]> {
    return (thread.approvals ?? []).filter((a) => a.actor === caller.handle || thread.from === caller.handle || thread.to === caller.handle && !thread.hidden_from_recipient).map((a) => approvalView(thread._id, a));
  }

  /** The approvals listing, newest first (the admin API and CLI). */
  async list(filter: { status?: ApprovalRecord['status']; approver?: string }, limit = 200): Promise<ApprovalView[]> {
    // The pending ones come from the open approvals (the `open` index), never from a scan of every approval.
    const entries: Array<{ _id: string; created_at: Date }> =
      filter.status === 'pending'
        ? await this.openApprovals(OPEN_READ_LIMIT)
        : await this.deps.store.approvals.find(filter.status ? { status: filter.status } : {}).sort({ created_at: -1 }).limit(OPEN_READ_LIMIT).toArray();
    entries.sort((a, b) => b.created_at.getTime() - a.created_at.getTime());
    const views: ApprovalView[] = [];
    for (const entry of entries) {
      if (views.length >= limit) break;
      const found = await this.get(entry._id).catch(() => null);
      if (!found) continue;
      if (filter.status && found.record.status !== filter.status) continue;
      if (filter.approver && !found.record.approvers.some((a) => a.label === filter.approver || a.handle === filter.approver || a.slack_user_id === filter.approver)) continue;
      views.push(approvalView(found.thread._id, found.record));
    }
    return views;
  }

  /**
   * One approver's Approve or Reject. A vote that reaches the quorum applies the call in the same thread write:
   * a held create becomes pending and is delivered as a new handoff; a held call is applied as its actor — or,
   * when the thread has moved on since it was asked (cancelled, already accepted), nothing is applied and the
   * answer says so. A refused vote (not an approver, second vote, already decided) changes nothing.
   */
  async decide(id: string, voter: Voter, decision: 'approve' | 'reject', via: Surface, reason?: string): Promise<DecisionAnswer> {
    const threadId = threadOfApproval(id);
    if (!threadId) throw new RelayError('not_found', `No approval ${id}`);
    for (let round = 0; round < 5; round += 1) {
      const { thread: seen, record } = await this.get(id);
      const actor = await this.deps.teammates.get(record.actor);
      const eventId = randomUUID();
      // Who an event is by: the actor when it carries their call (the create, the transition), else the approver.
      const emit = (type: EventType): OutboxEvent => {
        const asActor = type !== 'thread.rejected' && type !== 'approval.decided';
        return { id: eventId, type, at: this.deps.clock.now(), by: asActor ? record.actor : voter.label, via: asActor ? record.via : via };
      };
      // A vote that reaches the quorum asks the policy in force again first: one changed to deny since applies nothing.
      const reaches = castVote(record, voter, decision, this.deps.clock.now(), via, reason).kind === 'approved';
      const refusal = reaches && actor && this.appliers && !isAppliedAfterApproval(record.action) ? await this.appliers.recheck(seen, record, actor) : null;
      const planned = this.vote(seen, record, voter, decision, via, this.deps.clock.now(), reason, actor, emit, refusal).event;
      const event = planned ? emit(planned) : null;
      let result: Planned | undefined;
      let drifted = false;
      const write = async () =>
        this.deps.store.writeThread(threadId, (current) => {
          const currentRecord = current.approvals?.find((a) => a.id === id);
          if (!currentRecord) return undefined;
          result = this.vote(current, currentRecord, voter, decision, via, this.deps.clock.now(), reason, actor, emit, refusal);
          drifted = (result.event ?? null) !== (event?.type ?? null);
          return drifted ? undefined : result.next;
        });
      const written = event ? await this.deps.outbox.recording(event, async () => (await write()).after) : (await write()).after;
      if (drifted) continue;
      if (!result) throw new RelayError('not_found', `No approval ${id}`);
      if (!written || !result.record) {
        return { approval: approvalView(threadId, result.record ?? record), message: result.message, changed: false, ...(result.refusal ? { refusal: result.refusal } : {}) };
      }
      await this.index(threadId, result.record);
      this.deps.log.info({ thread_id: threadId, approval_id: id, by: voter.label, decision, status: result.record.status, ...(voter.admin ? { admin_on_behalf: true } : {}) }, 'approval vote');
      if (voter.admin) await this.auditAdmin(threadId, result.record, voter, decision);
      let final = result.record;
      let message = result.message;
      if (final.status === 'approved' && isAppliedAfterApproval(final.action) && !final.outcome) {
        final = await this.finishHeld(threadId, id);
        message = final.outcome?.applied ? `Approved: ${final.outcome.message}.` : `Approval ${id} is approved, but ${final.outcome?.message ?? 'it is still being applied'}.`;
      }
      return { approval: approvalView(threadId, final), message: voter.admin ? `${message} (Recorded as decided by the admin key on behalf of ${voter.label}.)` : message, changed: true };
    }
    throw new RelayError('state_changed', `Approval ${id} is changing too fast right now; try again`);
  }

  private vote(
    thread: ThreadDoc,
    record: ApprovalRecord,
    voter: Voter,
    decision: 'approve' | 'reject',
    via: Surface,
    now: Date,
    reason: string | undefined,
    actor: AgentDoc | null,
    emit: (type: EventType) => OutboxEvent,
    refusal: string | null,
  ): Planned {
    const vote = castVote(record, voter, decision, now, via, reason);
    if (vote.kind === 'refused') return { message: vote.message, refusal: vote.why };
    if (vote.kind === 'recorded') {
      const left = record.quorum - approvalsCount(vote.record);
      // The other approvers' DMs are redrawn to show the vote (approval.voted).
      return {
        record: vote.record,
        event: 'approval.voted',
        next: { ...withRecord(thread, vote.record), outbox: [...thread.outbox, emit('approval.voted')] },
        message: `Your approval of ${record.id} is recorded; it needs ${left} more.`,
      };
    }
    return this.conclude(thread, vote.record, now, actor, emit, refusal);
  }

  /**
   * An approval that was just approved, rejected or timed out: the thread as it follows from it, and its event.
   * `refusal`: why the policy in force now refuses the approved call (then nothing is applied).
   */
  private conclude(thread: ThreadDoc, record: ApprovalRecord, now: Date, actor: AgentDoc | null, emit: (type: EventType) => OutboxEvent, refusal: string | null = null): Planned {
    const withEvent = (doc: ThreadDoc, type: EventType): ThreadDoc => ({ ...doc, outbox: [...doc.outbox, emit(type)] });
    const stamp: PolicyStamp = { rule_id: record.rule_id, effect: 'require_approval', policy_version: record.policy_version };
    const notApplied = (why: string): Planned => {
      const done = finished(record, now, false, `nothing was applied: ${why}`);
      return {
        record: done,
        event: 'approval.decided',
        next: withEvent(withRecord(thread, done), 'approval.decided'),
        message: `Approval ${record.id} is ${record.status.replace('_', ' ')}, but ${done.outcome!.message}.`,
      };
    };
    if (record.action === 'handoff.create') {
      if (thread.status !== 'awaiting_approval') return notApplied(`the handoff is ${thread.status} now`);
      if (record.status === 'approved' && !refusal) {
        // A handoff to a role, skill or owner with several candidates opens unclaimed: its Claim cards go out as usual.
        const unclaimed = Boolean(thread.to_target && thread.to === thread.to_target);
        const done = finished(record, now, true, unclaimed ? `the handoff was opened to its candidates (${thread.to})` : 'the handoff was delivered to its recipient');
        const status = unclaimed ? 'unclaimed' : 'pending';
        const next: ThreadDoc = {
          ...withRecord(thread, done),
          status,
          hidden_from_recipient: false,
          updated_at: now,
          status_history: [...thread.status_history, { status, by: record.actor, at: now, via: record.via, policy: stamp }],
        };
        const message = unclaimed
          ? `Approved: the handoff from ${thread.from} is open to ${thread.to} (${(thread.candidates ?? []).join(', ')}); the first to claim it gets it.`
          : `Approved: the handoff from ${thread.from} is delivered to ${thread.to}.`;
        return { record: done, event: 'thread.created', next: withEvent(next, 'thread.created'), message };
      }
      const decided = refusal ? finished(record, now, false, `nothing was applied: ${refusal}`) : record;
      const why = refusal ?? record.reason ?? 'rejected';
      const by = refusal ? 'policy' : (record.decided_by ?? 'policy');
      const next: ThreadDoc = {
        ...withRecord(thread, decided),
        status: 'rejected',
        reject_reason: why,
        rejected_at: now,
        updated_at: now,
        status_history: [...thread.status_history, { status: 'rejected', by, at: now, via: emit('thread.rejected').via, policy: stamp }],
      };
      const message = refusal
        ? `Approval ${record.id} is approved, but ${decided.outcome!.message}; ${thread.from} is told why and nothing is delivered to ${thread.to}.`
        : `Rejected: ${thread.from} is told why; nothing is delivered to ${thread.to}.`;
      return { record: decided, event: 'thread.rejected', next: withEvent(next, 'thread.rejected'), message };
    }
    if (record.status !== 'approved') {
      const verb = record.status === 'rejected' ? 'Rejected' : 'Timed out';
      return { record, event: 'approval.decided', next: withEvent(withRecord(thread, record), 'approval.decided'), message: `${verb}: ${record.action} by ${record.actor} is not applied; they are told.` };
    }
    if (stateVersion(thread) !== record.state_version) return notApplied(`the thread changed since it was asked (it is ${thread.status} now)`);
    if (!actor || actor.status !== 'active') return notApplied(`${record.actor} is no longer an active teammate`);
    if (!this.appliers) return notApplied('this relay cannot apply it');
    if (refusal) return notApplied(refusal);
    // An approved append is applied right after this write (finishHeld): the record waits for its outcome meanwhile.
    if (isAppliedAfterApproval(record.action)) return { record, next: withRecord(thread, record), message: `Approved: ${record.action} is being applied as ${record.actor}.` };
    const done = finished(record, now, true, `${record.action} was applied as ${record.actor}`);
    const applied = this.appliers.transition(withRecord(thread, done), done, actor, emit, now);
    if ('refusal' in applied) return notApplied(applied.refusal);
    return { record: done, event: applied.type, next: applied.next, message: `Approved: ${done.outcome!.message}.` };
  }

  /**
   * Applies an approved message.append or draft.attach: the policy in force is asked again, then the message is
   * appended as its actor through the normal append (exactly once: the approval id is its idempotency key), and the
   * outcome is recorded on the approval with approval.decided, once. Safe to run any number of times and from any
   * process (a decision, the sweep after a crash between the decision and the append).
   */
  async finishHeld(threadId: string, id: string): Promise<ApprovalRecord> {
    const { thread, record } = await this.get(id);
    if (record.status !== 'approved' || record.outcome || !isAppliedAfterApproval(record.action)) return record;
    const actor = await this.deps.teammates.get(record.actor);
    let outcome: { applied: boolean; message: string };
    if (stateVersion(thread) !== record.state_version) outcome = { applied: false, message: `nothing was applied: the thread changed since it was asked (it is ${thread.status} now)` };
    else if (!actor || actor.status !== 'active') outcome = { applied: false, message: `nothing was applied: ${record.actor} is no longer an active teammate` };
    else if (!this.appliers) outcome = { applied: false, message: 'nothing was applied: this relay cannot apply it' };
    else {
      const refusal = await this.appliers.recheck(thread, record, actor);
      const applied = refusal ? { refusal } : await this.appliers.message(thread, record, actor);
      outcome = 'refusal' in applied ? { applied: false, message: `nothing was applied: ${applied.refusal}` } : { applied: true, message: applied.message };
    }
    const event: OutboxEvent = { id: randomUUID(), type: 'approval.decided', at: this.deps.clock.now(), by: record.actor, via: record.via };
    const written = await this.deps.outbox.recording(event, async () => {
      const result = await this.deps.store.writeThread(threadId, (current) => {
        const rec = current.approvals?.find((a) => a.id === id);
        if (!rec || rec.status !== 'approved' || rec.outcome) return undefined;
        return { ...withRecord(current, finished(rec, this.deps.clock.now(), outcome.applied, outcome.message)), outbox: [...current.outbox, event] };
      });
      return result.after;
    });
    const latest = written?.approvals?.find((a) => a.id === id) ?? (await this.get(id)).record;
    await this.index(threadId, latest);
    this.deps.log.info({ thread_id: threadId, approval_id: id, action: record.action, applied: latest.outcome?.applied }, 'approved call finished');
    return latest;
  }

  /** A decision the admin key made on an approver's behalf, in the policy audit (GET /admin/policy/audit). */
  private async auditAdmin(threadId: string, record: ApprovalRecord, voter: Voter, decision: 'approve' | 'reject'): Promise<void> {
    const at = this.deps.clock.now();
    const thread = await this.deps.store.readThread(threadId);
    const doc: PolicyAuditDoc = {
      _id: `${at.toISOString()}_${randomUUID()}`,
      at,
      action: record.action,
      actor: 'admin',
      sender: thread?.from ?? '',
      recipient: thread?.to ?? '',
      via: 'api',
      thread_id: threadId,
      session_id: null,
      rule_id: record.rule_id,
      effect: 'require_approval',
      policy_version: record.policy_version,
      outcome: 'admin_on_behalf',
      reason: `the admin key ${decision === 'approve' ? 'approved' : 'rejected'} ${record.id} on behalf of approver ${voter.label}`,
    };
    await Promise.all([this.deps.store.policyAudit.insertOne(doc), this.deps.store.accountLog.record(policyAuditEvents(doc))]).catch((error: Error) =>
      this.deps.log.warn({ approval_id: record.id, err: error.message }, 'admin decision not audited'),
    );
  }

  // ── timers ─────────────────────────────────────────────────────────────────

  /** Puts the approval's next reminder and its timeout on the queue (deterministic job ids: arming twice is once). */
  async arm(record: ApprovalRecord): Promise<void> {
    const timers = this.deps.timers;
    if (!timers || record.status !== 'pending') return;
    const now = this.deps.clock.now().getTime();
    const jobs: Array<[TimerStep, Date]> = [['timeout', record.deadline]];
    if (record.remind_at) jobs.push(['remind', record.remind_at]);
    for (const [kind, at] of jobs) {
      await timers.add(APPROVAL_TIMER_JOB, { approval_id: record.id }, timerJobId(record, kind), Math.max(0, at.getTime() - now)).catch((error: Error) => {
        this.deps.log.warn({ approval_id: record.id, err: error.message }, 'approval timer not armed yet; the sweep arms it');
      });
    }
  }

  /**
   * Fires what is due on the approval now (by the relay's clock, whatever the job's delay said): a reminder to
   * the approvers, or the timeout — deny (the call is refused, the actor told), or escalate once to escalate_to
   * with a fresh deadline. Safe to run any number of times: each step is one conditional thread write.
   */
  async fire(id: string): Promise<'reminded' | 'escalated' | 'timed_out' | 'not_due'> {
    const threadId = threadOfApproval(id);
    if (!threadId) return 'not_due';
    for (let round = 0; round < 5; round += 1) {
      const { thread, record } = await this.get(id).catch(() => ({ thread: null, record: null }));
      if (!thread || !record) return 'not_due';
      const due = dueTimer(record, this.deps.clock.now());
      if (!due) return 'not_due';
      const escalate = due === 'timeout' && record.on_timeout === 'escalate' && record.step === 0 && record.escalate_to.length > 0;
      const added = escalate ? await this.escalationApprovers(thread, record) : [];
      const type: EventType = due === 'remind' || escalate ? 'approval.requested' : record.action === 'handoff.create' && thread.status === 'awaiting_approval' ? 'thread.rejected' : 'approval.decided';
      const event: OutboxEvent = { id: randomUUID(), type, at: this.deps.clock.now(), by: 'policy', via: record.via };
      let outcome: 'reminded' | 'escalated' | 'timed_out' | null = null;
      let drifted = false;
      const written = await this.deps.outbox.recording(event, async () => {
        const result = await this.deps.store.writeThread(threadId, (current) => {
          const now = this.deps.clock.now();
          const rec = current.approvals?.find((a) => a.id === id);
          outcome = null;
          drifted = false;
          if (!rec || dueTimer(rec, now) !== due || rec.step !== record.step) return undefined;
          if (due === 'remind') {
            outcome = 'reminded';
            const next = { ...rec, remind_at: null, history: [...rec.history, { at: now, what: 'reminded' as const, note: `step ${rec.step}` }] };
            return { ...withRecord(current, next), outbox: [...current.outbox, event] };
          }
          if (escalate) {
            outcome = 'escalated';
            const seen = new Set(rec.approvers.map((a) => a.label));
            const next: ApprovalRecord = {
              ...rec,
              step: 1,
              approvers: [...rec.approvers, ...added.filter((a) => !seen.has(a.label))],
              deadline: new Date(now.getTime() + rec.timeout_ms),
              remind_at: rec.remind_after_ms ? new Date(now.getTime() + rec.remind_after_ms) : null,
              history: [...rec.history, { at: now, what: 'escalated', note: `no decision within ${describeMs(rec.timeout_ms)}; asked ${describeApprovers(added)}` }],
            };
            return { ...withRecord(current, next), outbox: [...current.outbox, event] };
          }
          outcome = 'timed_out';
          const timedOut: ApprovalRecord = {
            ...rec,
            status: 'timed_out',
            reason: `no approval within ${describeMs(rec.timeout_ms)}${rec.step ? ' after escalation' : ''} (rule ${rec.rule_id}, on_timeout: deny)`,
            decided_by: 'policy',
            decided_at: now,
            remind_at: null,
            history: [...rec.history, { at: now, what: 'timed_out', note: 'denied' }],
          };
          const planned = this.conclude(current, timedOut, now, null, () => event);
          drifted = planned.event !== type;
          return drifted ? undefined : planned.next;
        });
        return result.after;
      });
      if (drifted) continue;
      if (!written || !outcome) return 'not_due';
      const updated = written.approvals!.find((a) => a.id === id)!;
      await this.index(threadId, updated);
      if (outcome === 'escalated' || outcome === 'reminded') await this.arm(updated);
      this.deps.log.info({ thread_id: threadId, approval_id: id, outcome }, 'approval timer fired');
      return outcome;
    }
    return 'not_due';
  }

  private async escalationApprovers(thread: ThreadDoc, record: ApprovalRecord): Promise<ApproverRef[]> {
    const [sender, recipient, actor] = await Promise.all([this.deps.teammates.get(thread.from), this.deps.teammates.get(thread.to), this.deps.teammates.get(record.actor)]);
    if (!sender || !recipient || !actor) return [];
    return this.resolve(record.escalate_to, { sender, recipient, actor }, record.rule_id, 1).catch((error: Error) => {
      this.deps.log.warn({ approval_id: record.id, err: error.message }, 'escalation approvers do not resolve; the approval times out instead');
      return [];
    });
  }

  /**
   * Re-arms the timers of every pending approval (a lost delayed job, Redis flushed), fires what is overdue, and
   * finishes an approved append a crash left unapplied. It reads the open approvals only (the `open` index): its
   * reads grow with the approvals still open, not with every approval ever decided.
   */
  async sweep(limit = 500): Promise<number> {
    const open = await this.openApprovals(limit);
    let fired = 0;
    for (const entry of open) {
      const found = await this.get(entry._id).catch((error: unknown) => {
        if (error instanceof RelayError && error.code === 'not_found') return null;
        throw error;
      });
      if (!found) {
        await this.deps.store.approvals.updateOne({ _id: entry._id }, { $unset: { open: '' } });
        continue;
      }
      if (found.record.status === 'approved' && isAppliedAfterApproval(found.record.action) && !found.record.outcome) {
        await this.finishHeld(found.thread._id, entry._id);
        continue;
      }
      if (found.record.status !== 'pending') {
        await this.index(found.thread._id, found.record);
        continue;
      }
      if (dueTimer(found.record, this.deps.clock.now())) {
        if ((await this.fire(entry._id)) !== 'not_due') fired += 1;
      } else {
        await this.arm(found.record);
      }
    }
    return fired;
  }

  /** The open approvals, oldest first (no more than `limit`): one read on the `open` index. */
  private openApprovals(limit: number): Promise<ApprovalIndexDoc[]> {
    return this.deps.store.approvals.find({ open: 1 }).sort({ created_at: 1 }).limit(limit).toArray();
  }

  /** The approval's listing entry, open until it is decided and done. */
  private async writeIndex(threadId: string, record: ApprovalRecord): Promise<void> {
    await putById(this.deps.store.approvals, record.id, {
      thread_id: threadId,
      status: record.status,
      action: record.action,
      actor: record.actor,
      approvers: record.approvers.map((a) => a.label),
      created_at: record.created_at,
      deadline: record.deadline,
      ...(isOpen(record) ? { open: 1 as const } : {}),
    });
  }

  /** writeIndex after a change: a failure leaves the entry as it was (still open, the next sweep writes it again). */
  private async index(threadId: string, record: ApprovalRecord): Promise<void> {
    await this.writeIndex(threadId, record).catch((error: Error) => this.deps.log.warn({ approval_id: record.id, err: error.message }, 'approval listing not updated'));
  }
}

interface Planned {
  refusal?: VoteRefusal;
  record?: ApprovalRecord;
  next?: ThreadDoc;
  event?: EventType;
  message: string;
}

/** The open approvals a pending listing reads at most. */
const OPEN_READ_LIMIT = 5_000;

/** Still the sweep's to look at: pending, or approved and its append not applied yet. */
function isOpen(record: ApprovalRecord): boolean {
  return record.status === 'pending' || (record.status === 'approved' && isAppliedAfterApproval(record.action) && !record.outcome);
}

function withRecord(thread: ThreadDoc, record: ApprovalRecord): ThreadDoc {
  return { ...thread, approvals: (thread.approvals ?? []).map((a) => (a.id === record.id ? record : a)) };
}

function finished(record: ApprovalRecord, at: Date, applied: boolean, message: string): ApprovalRecord {
  return { ...record, outcome: { applied, message }, history: [...record.history, { at, what: applied ? 'applied' : 'not_applied', note: message }] };
}

function describeMs(ms: number): string {
  if (ms % 86_400_000 === 0) return `${ms / 86_400_000}d`;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  return `${Math.round(ms / 1000)}s`;
}
