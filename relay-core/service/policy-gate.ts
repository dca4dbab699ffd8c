// The policy enforcement point: the service asks it before every write; refusals are audited, allowances stamped.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock';
import type { AgentDoc, PolicyAuditDoc, PolicyStamp, ThreadDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';
import { decide, type PartyFacts, type PolicyDecision, type PolicyRequest } from '../domain/policy-decision';
import { defaultPolicy, parsePolicy, type Policy, type PolicyAction, type PolicyRule } from '../domain/policy';
import type { Artifact, Intent, Surface } from '../domain/schemas';
import type { PolicyLimiter } from '../ops/rate-limiter';
import { policyAuditEvents } from '../store/account-log';
import type { MongoStore } from '../store/mongo-store';
import { putById } from '../store/thread-writes';

/** How long a process trusts its copy of the policy before reading `policies/current` again (one `_id` read). */
const POLICY_REFRESH_MS = 2_000;

const CURRENT = 'current';

/** Where the policy in force lives: one document every relay process reads, so an apply reaches them all. */
export class PolicyStore {
  private cached: { policy: Policy; readAt: number } | null = null;

  constructor(
    private readonly store: MongoStore,
    private readonly clock: Clock,
  ) {}

  async current(): Promise<Policy> {
    const now = Date.now();
    if (this.cached && now - this.cached.readAt < POLICY_REFRESH_MS) return this.cached.policy;
    const doc = await this.store.policies.findOne({ _id: CURRENT });
    const policy = !doc
      ? defaultPolicy()
      : this.cached?.policy.version === doc.version
        ? this.cached.policy
        : parsePolicy(doc.source, 'stored policy');
    this.cached = { policy, readAt: now };
    return policy;
  }

  /**
   * The policy as this process last read it, for what must decide without a read of its own (a thread write's timer
   * step): `current()` keeps it fresh, on every gated call and at each timer sweep. Null before the first read.
   */
  known(): Policy | null {
    return this.cached?.policy ?? null;
  }

  /**
   * Validates and stores a policy; a bad one throws invalid_params naming line and field, and the old one stays.
   * With `checkApprovers` (the admin API) every approver a rule names by handle or `role:` must exist now.
   */
  async apply(
    source: string,
    by: string,
    fileName = 'policy',
    opts: { checkApprovers?: boolean } = {},
  ): Promise<Policy> {
    const policy = parsePolicyOrRefuse(source, fileName);
    if (opts.checkApprovers) await this.checkApprovers(policy, fileName);
    // Two processes starting with the same RELAY_POLICY_FILE both upsert: the loser of the insert race replaces.
    await putById(this.store.policies, CURRENT, {
      source,
      version: policy.version,
      applied_at: this.clock.now(),
      applied_by: by,
    });
    this.cached = { policy, readAt: Date.now() };
    return policy;
  }

  private async checkApprovers(policy: Policy, fileName: string): Promise<void> {
    const problem = await firstMissingApprover(this.store, policy, fileName);
    if (problem) throw problem;
  }
}

export interface ApproverProblemSource {
  agents: MongoStore['agents'];
  agentWriter: MongoStore['agentWriter'];
}

/** The first approver (or escalate_to entry) of a require_approval rule that names nobody: invalid_params naming it. */
async function firstMissingApprover(
  store: ApproverProblemSource,
  policy: Policy,
  fileName: string,
): Promise<RelayError | null> {
  for (const [i, rule] of policy.rules.entries()) {
    if (rule.effect !== 'require_approval') continue;
    for (const [list, names] of [
      ['approvers', rule.approvers],
      ['escalate_to', rule.escalate_to ?? []],
    ] as const) {
      for (const [j, name] of names.entries()) {
        const field = `rules[${i}].${list}[${j}]`;
        if (name.startsWith('role:')) {
          const role = name.slice(5);
          const member = await store.agents.findOne({ role, status: 'active' }, { projection: { _id: 1 } });
          if (!member)
            return new RelayError(
              'invalid_params',
              `${fileName}: ${field}: ${name} names no active teammate (nobody has role "${role}")`,
              { field },
            );
        } else if (name.includes('@')) {
          const agent = await store.agentWriter.read(name);
          if (!agent || agent.status !== 'active')
            return new RelayError('invalid_params', `${fileName}: ${field}: no active teammate with handle ${name}`, {
              field,
            });
        }
      }
    }
  }
  return null;
}

export function parsePolicyOrRefuse(source: string, fileName: string): Policy {
  try {
    return parsePolicy(source, fileName);
  } catch (error) {
    if (error instanceof Error && error.name === 'PolicyError') {
      const { line, field } = error as Error & { line: number | null; field: string };
      throw new RelayError('invalid_params', error.message, { line, field });
    }
    throw error;
  }
}

/** A require_approval decision: the stamp, and the rule whose approvers must approve (the service holds the call). */
export interface HeldStamp extends PolicyStamp {
  effect: 'require_approval';
  hold: Extract<PolicyRule, { effect: 'require_approval' }>;
}

/** What the caller asks to do, as the service knows it before writing. */
export interface GateRequest {
  action: PolicyAction;
  via: Surface;
  actor: AgentDoc;
  sender: AgentDoc;
  recipient: AgentDoc;
  intent: Intent;
  artifacts: readonly Artifact[];
  target_files: readonly string[];
  thread_id?: string;
  /** The agent session (the MCP server sends its own); per-session limits fall back to the teammate without one. */
  session_id?: string;
  /** When the call happens; now unless a test asks about another time. */
  at?: Date;
}

export interface PolicyGateDeps {
  policies: PolicyStore;
  limiter: PolicyLimiter;
  store: MongoStore;
  clock: Clock;
  log: Logger;
}

export class PolicyGate {
  constructor(private readonly deps: PolicyGateDeps) {}

  /**
   * The decision for one call, enforced: deny and an exhausted rate limit throw (and are audited); otherwise the
   * stamp to record on the write. A require_approval rule answers a HeldStamp: the service holds the call for approval.
   */
  async check(request: GateRequest, isReplay?: () => Promise<boolean>): Promise<PolicyStamp | HeldStamp | 'replay'> {
    const policy = await this.deps.policies.current();
    const decision = decide(policy, this.facts(request));
    const stamp: PolicyStamp = {
      rule_id: decision.rule_id,
      effect: decision.effect,
      policy_version: decision.policy_version,
    };
    if (decision.effect === 'allow') return stamp;
    // A retry of a call that already went through replays its answer: it is neither refused again nor counted twice.
    if (isReplay && (await isReplay())) return 'replay';
    if (decision.effect === 'deny') {
      await this.audit(request, decision, 'denied', decision.reason!);
      throw new RelayError(
        'policy_denied',
        `Policy rule ${decision.rule_id ?? 'default'} denies ${request.action}: ${decision.reason}`,
        {
          rule_id: decision.rule_id,
          policy_version: decision.policy_version,
          reason: decision.reason,
        },
      );
    }
    if (decision.effect === 'rate_limit' && decision.rule?.effect === 'rate_limit') {
      const rule = decision.rule;
      const key = this.limitKey(rule.per, request);
      const refused = await this.deps.limiter.consume(`policy:${rule.id}`, key, rule.max, rule.window);
      if (refused) {
        const message = `Policy rule ${rule.id} allows at most ${rule.max} ${request.action} per ${describeWindow(rule.window)} per ${rule.per}`;
        await this.audit(request, decision, 'rate_limited', message);
        throw new RelayError('rate_limited', message, {
          retry_after_ms: refused.retry_after_ms,
          rule_id: rule.id,
          policy_version: policy.version,
        });
      }
      return stamp;
    }
    if (decision.rule?.effect !== 'require_approval')
      throw new Error(`policy decision ${decision.effect} without its rule`);
    return { ...stamp, effect: 'require_approval', hold: decision.rule };
  }

  /** The decision a call would get, enforcing nothing (`policy test`, the admin API); the policy in force by default. */
  async explain(request: GateRequest, policy?: Policy): Promise<PolicyDecision> {
    const { rule: _rule, ...decision } = decide(policy ?? (await this.deps.policies.current()), this.facts(request));
    return decision;
  }

  private facts(request: GateRequest): PolicyRequest {
    return {
      action: request.action,
      via: request.via,
      actor: party(request.actor),
      sender: party(request.sender),
      recipient: party(request.recipient),
      intent: request.intent,
      artifact_types: [...new Set(request.artifacts.map((a) => a.type))],
      target_files: request.target_files,
      at: request.at ?? this.deps.clock.now(),
    };
  }

  private limitKey(per: 'teammate' | 'pair' | 'session', request: GateRequest): string {
    const other = request.actor.handle === request.sender.handle ? request.recipient.handle : request.sender.handle;
    if (per === 'pair') return `${request.actor.handle}>${other}`;
    if (per === 'session' && request.session_id) return `${request.actor.handle}#${request.session_id}`;
    return request.actor.handle;
  }

  private async audit(
    request: GateRequest,
    decision: PolicyDecision,
    outcome: PolicyAuditDoc['outcome'],
    reason: string,
  ): Promise<void> {
    const at = this.deps.clock.now();
    const doc: PolicyAuditDoc = {
      _id: `${at.toISOString()}_${randomUUID()}`,
      at,
      action: request.action,
      actor: request.actor.handle,
      sender: request.sender.handle,
      recipient: request.recipient.handle,
      via: request.via,
      thread_id: request.thread_id ?? null,
      session_id: request.session_id ?? null,
      rule_id: decision.rule_id,
      effect: decision.effect,
      policy_version: decision.policy_version,
      outcome,
      reason,
    };
    try {
      // The refusal in the admin's audit, and in the history of each teammate it is about (GET /agents/me/audit).
      await Promise.all([
        this.deps.store.policyAudit.insertOne(doc),
        this.deps.store.accountLog.record(policyAuditEvents(doc)),
      ]);
    } catch (error) {
      // The refusal stands either way; a lost audit line is logged, never turned into an allow.
      this.deps.log.warn(
        { err: (error as Error).message, action: request.action, rule_id: decision.rule_id },
        'policy audit not recorded',
      );
    }
  }
}

/** The stamp of the thread a call acts on, for the rule's facts. */
export function threadFacts(doc: ThreadDoc): {
  intent: Intent;
  artifacts: readonly Artifact[];
  target_files: readonly string[];
} {
  return { intent: doc.intent, artifacts: doc.artifacts, target_files: doc.proposed_action?.target_files ?? [] };
}

function party(doc: AgentDoc): PartyFacts {
  return { handle: doc.handle, team: doc.team, role: doc.role, skills: doc.skills };
}

function describeWindow(ms: number): string {
  if (ms % 86_400_000 === 0) return `${ms / 86_400_000} d`;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${ms / 1_000} s`;
}
