// The policy asked about a change to an existing thread (a transition, an append, a claim, a Reassign, a run, an
// approved call applied later): its stamp, a deny as policy_denied, a hold recorded as an approval request.
import type { AgentDoc, PolicyStamp, ThreadDoc } from '../domain/documents';
import type { ApprovalRecord } from '../domain/approval';
import { RelayError } from '../domain/errors';
import { parseRecipient, type RecipientTarget, type Surface } from '../domain/schemas';
import type { ThreadWriter } from '../domain/thread-writer';
import type { ApprovalRequests } from './approval-requests';
import { threadFacts, type HeldStamp, type PolicyGate } from './policy-gate';
import type { Teammates } from './teammates';

export type PolicyCheckedAction = Parameters<PolicyGate['check']>[0]['action'];

export interface ThreadPolicyDeps {
  store: Pick<ThreadWriter, 'readThread'>;
  teammates: Pick<Teammates, 'get'>;
  /** The policy enforcement point; without one every call is allowed (tests of other things). */
  gate?: Pick<PolicyGate, 'check' | 'explain'>;
  /** Where a held call is recorded for its approvers. */
  requests: Pick<ApprovalRequests, 'request'>;
}

export class ThreadPolicy {
  constructor(private readonly deps: ThreadPolicyDeps) {}

  /** Whether a policy is in force at all (without one, nothing needs reading to ask it). */
  get enforced(): boolean {
    return this.deps.gate !== undefined;
  }

  /**
   * The policy's stamp for a change to an existing thread; none when the thread is not the caller's to change.
   * A call a rule holds for approval (`args`: the call as asked) is recorded as an approval request and answered
   * approval_pending: nothing else changes until it is approved. `read`: the thread as it read it to judge (none
   * without a policy, or once an approval request has written it), for the change to start from.
   */
  async forChange(
    caller: AgentDoc,
    threadId: string,
    action: PolicyCheckedAction,
    via: Surface,
    sessionId: string | undefined,
    args: Record<string, unknown>,
  ): Promise<{ stamp: PolicyStamp | undefined; read?: ThreadDoc }> {
    const gate = this.deps.gate;
    if (!gate) return { stamp: undefined };
    const doc = await this.deps.store.readThread(threadId);
    if (!doc) return { stamp: undefined };
    const none = { stamp: undefined, read: doc };
    if (doc.from !== caller.handle && doc.to !== caller.handle) return none;
    if (doc.hidden_from_recipient && doc.to === caller.handle && doc.from !== caller.handle) return none;
    const [sender, recipient] = await Promise.all([this.deps.teammates.get(doc.from), this.deps.teammates.get(doc.to)]);
    if (!sender || !recipient) return none;
    const stamp = await gate.check({
      action,
      via,
      actor: caller,
      sender,
      recipient,
      ...threadFacts(doc),
      thread_id: doc._id,
      session_id: sessionId,
    });
    if (stamp === 'replay') return none;
    if (!isHeld(stamp)) return { stamp, read: doc };
    const { hold: rule, ...plain } = stamp;
    // A request may have written the thread: what was read is no longer worth starting from.
    return {
      stamp: await this.deps.requests.request(caller, doc, {
        action,
        args,
        via,
        rule,
        stamp: plain,
        sender,
        recipient,
      }),
    };
  }

  /** The policy as if the handoff had been sent to the claimer directly: a rule that denies that pair denies the claim. */
  async forClaim(caller: AgentDoc, doc: ThreadDoc, via: Surface, sessionId?: string): Promise<PolicyStamp | undefined> {
    if (!this.deps.gate) return undefined;
    const sender = await this.deps.teammates.get(doc.from);
    if (!sender) return undefined;
    return this.asIfSent(sender, caller, doc, via, sessionId);
  }

  /** The policy's `handoff.create` for this thread sent from `sender` to `caller` (a claim, a Reassign): a deny refuses with policy_denied. */
  async asIfSent(
    sender: AgentDoc,
    caller: AgentDoc,
    doc: ThreadDoc,
    via: Surface,
    sessionId?: string,
  ): Promise<PolicyStamp | undefined> {
    if (!this.deps.gate) return undefined;
    const decision = await this.deps.gate.explain({
      action: 'handoff.create',
      via,
      actor: sender,
      sender,
      recipient: caller,
      ...threadFacts(doc),
      thread_id: doc._id,
      session_id: sessionId,
    });
    if (decision.effect === 'deny') {
      throw new RelayError(
        'policy_denied',
        `Policy rule ${decision.rule_id ?? 'default'} denies handoffs from ${doc.from} to ${caller.handle}: ${decision.reason}`,
        {
          rule_id: decision.rule_id,
          policy_version: decision.policy_version,
          reason: decision.reason,
        },
      );
    }
    return { rule_id: decision.rule_id, effect: decision.effect, policy_version: decision.policy_version };
  }

  /** The policy in force now, asked about an approved call as it was asked: why a rule that denies it now refuses it, or null. */
  async recheck(doc: ThreadDoc, record: ApprovalRecord, actor: AgentDoc): Promise<string | null> {
    if (!this.deps.gate) return null;
    const target = doc.to_target && doc.to === doc.to_target ? parseRecipient(doc.to_target) : null;
    const [sender, recipient] = await Promise.all([
      this.deps.teammates.get(doc.from),
      target ? null : this.deps.teammates.get(doc.to),
    ]);
    const to = recipient ?? (target && 'label' in target && sender ? targetParty(target, sender) : null);
    if (!sender || !to) return `${!sender ? doc.from : doc.to} is no longer a teammate`;
    const decision = await this.deps.gate.explain({
      action: record.action,
      via: record.via,
      actor,
      sender,
      recipient: to,
      ...threadFacts(doc),
      thread_id: doc._id,
    });
    if (decision.effect !== 'deny') return null;
    return `the policy changed since it was asked: rule ${decision.rule_id ?? 'default'} (policy ${decision.policy_version}) now denies ${record.action}: ${decision.reason}`;
  }
}

export function isHeld(stamp: PolicyStamp | HeldStamp): stamp is HeldStamp {
  return 'hold' in stamp;
}

/** The target standing in for the recipient in the policy's facts while no one has claimed the handoff. */
export function targetParty(target: RecipientTarget, sender: AgentDoc): AgentDoc {
  return {
    ...sender,
    _id: target.label,
    handle: target.label,
    name: target.label,
    role: target.kind === 'role' ? target.value : '',
    skills: target.kind === 'skill' ? [target.value] : [],
    repos_owned: target.kind === 'owner' ? [target.value] : [],
    slack_user_id: null,
    // A target has no lead: recipient_lead names nobody (the sender's lead is not the target's).
    lead: null,
    blocked: [],
    notification: null,
  };
}
