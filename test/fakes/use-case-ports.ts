// What the fast use-case tests build their use cases from: teammates, a recording outbox, a ledger that runs each
// call once, threads as the create stores them (on the in-memory thread port), and approval requests over them.
import pino from 'pino';
import { approvalId, type ApprovalRecord } from '../../relay-core/domain/approval';
import { assertNoBlockBetween } from '../../relay-core/domain/blocks';
import { RelayError } from '../../relay-core/domain/errors';
import { targetCandidates } from '../../relay-core/domain/recipient-target';
import type { AgentDoc, OutboxEvent, ThreadDoc } from '../../relay-core/domain/documents';
import { newHandoffSchema, type RecipientTarget } from '../../relay-core/domain/schemas';
import { unclaimedThread } from '../../relay-core/domain/claim';
import { newPendingThread } from '../../relay-core/domain/thread-lifecycle';
import { ApprovalRequests } from '../../relay-core/service/approval-requests';
import type { ApprovalRule } from '../../relay-core/service/approvals';
import type { RouteTeammates } from '../../relay-core/service/handoff-routing';
import type { HandoffTokens } from '../../relay-core/service/handoff-tokens';
import type { IdempotencyLedger } from '../../relay-core/service/idempotency';
import type { Outbox } from '../../relay-core/service/outbox';
import type { InMemoryThreads } from './in-memory-threads';

export const NOW = new Date('2026-03-02T10:00:00Z');

export function agent(handle: string, tools: string[] = []): AgentDoc {
  return {
    _id: handle,
    handle,
    team: 'acme',
    name: handle,
    role: '',
    skills: [],
    repos_owned: [],
    tools,
    slack_user_id: null,
    status: 'active',
    blocked: [],
    notification: null,
    created_at: NOW,
    updated_at: NOW,
  };
}

/** The outbox's recording, keeping the events of the writes that stored something (in `published`). */
export function recordingOutbox(): Pick<Outbox, 'recording'> & { published: OutboxEvent[] } {
  const published: OutboxEvent[] = [];
  return {
    published,
    recording: async (event, write) => {
      const written = await write();
      if (written !== null) published.push(event);
      return written;
    },
  };
}

/** A pending approval on `doc` (by default of its create, asked by its sender) that `lead@acme` (Slack U0LEAD) may decide. */
export function pendingApproval(doc: ThreadDoc, over: Partial<ApprovalRecord> = {}): ApprovalRecord {
  return {
    id: approvalId(doc._id, 0),
    action: 'handoff.create',
    actor: doc.from,
    via: 'mcp',
    args: {},
    state_version: 1,
    rule_id: 'r1',
    policy_version: 'v1',
    binding: 'a'.repeat(64),
    approvers: [{ label: 'lead@acme', handle: 'lead@acme', slack_user_id: 'U0LEAD', source: 'lead@acme', step: 0 }],
    quorum: 1,
    approvals: [],
    status: 'pending',
    reason: null,
    decided_by: null,
    decided_at: null,
    outcome: null,
    created_at: NOW,
    remind_after_ms: null,
    remind_at: null,
    timeout_ms: 3_600_000,
    deadline: NOW,
    on_timeout: 'deny',
    escalate_to: [],
    step: 0,
    history: [],
    ...over,
  };
}

/** A ledger for calls without an idempotency key: each runs once. */
export const unkeyedLedger: Pick<IdempotencyLedger, 'run'> = {
  run: (_caller, _key, _body, operation) => operation(null),
};

/** A pending handoff from `sender` to `recipient`, with its handoff token, stored as the create stores it. */
export async function storedPending(
  threads: InMemoryThreads,
  tokens: HandoffTokens,
  sender: AgentDoc,
  recipient: AgentDoc,
): Promise<ThreadDoc> {
  const doc = pendingDoc(tokens, sender, recipient);
  await threads.insert(doc);
  return doc;
}

/** An unclaimed handoff to `target`, open to `candidates` (no recipient, no token until the claim). */
export async function storedUnclaimed(
  threads: InMemoryThreads,
  tokens: HandoffTokens,
  sender: AgentDoc,
  target: RecipientTarget,
  candidates: string[],
): Promise<ThreadDoc> {
  const doc = unclaimedThread(pendingDoc(tokens, sender, agent(target.label)), target, candidates);
  await threads.insert(doc);
  return doc;
}

function pendingDoc(tokens: HandoffTokens, sender: AgentDoc, recipient: AgentDoc): ThreadDoc {
  const id = crypto.randomUUID();
  const input = newHandoffSchema.parse({ to: recipient.handle, intent: 'inform', summary: 'Read the release notes' });
  return newPendingThread(
    { id, sender, recipient, input, via: 'api', now: NOW, eventId: crypto.randomUUID() },
    (bodyHash) => tokens.mint({ id, team: recipient.team, bodyHash, metadata: {} }, NOW),
  );
}

/** The teammates routing and approvals read, over a fixed team: by handle, by target, and the vocabulary. */
export function teammatesOf(team: readonly AgentDoc[]): RouteTeammates {
  const active = () => team.filter((a) => a.status === 'active');
  return {
    get: async (handle) => team.find((a) => a.handle === handle) ?? null,
    assertNotBlocked: assertNoBlockBetween,
    candidates: async (target) => targetCandidates(active(), target).sort((a, b) => a.handle.localeCompare(b.handle)),
    vocabulary: async () => ({
      roles: active()
        .map((a) => a.role)
        .filter(Boolean),
      skills: active().flatMap((a) => a.skills),
      repos_owned: active().flatMap((a) => a.repos_owned),
    }),
  };
}

/**
 * ApprovalRequests on the in-memory threads: approvers are teammates' handles (`ghost@acme`, not one of `team`, does
 * not resolve); what it opens (the listing entry and the timers) is recorded in `opened`.
 */
export function approvalRequestsOn(
  threads: InMemoryThreads,
  outbox: Pick<Outbox, 'recording'>,
  team: readonly AgentDoc[],
  now: () => Date = () => NOW,
): { requests: ApprovalRequests; opened: ApprovalRecord[]; armed: ApprovalRecord[] } {
  const opened: ApprovalRecord[] = [];
  const armed: ApprovalRecord[] = [];
  const requests = new ApprovalRequests({
    store: threads,
    outbox,
    approvers: {
      resolve: async (names, _parties, ruleId, step) =>
        names.map((name) => {
          const found = team.find((a) => a.handle === name);
          if (!found)
            throw new RelayError(
              'policy_denied',
              `Policy rule ${ruleId} needs approval, but ${name} is not a teammate`,
            );
          return { label: name, handle: name, slack_user_id: found.slack_user_id, source: name, step };
        }),
    },
    records: { write: async (_threadId, record) => void opened.push(record) },
    timers: { arm: async (record) => void armed.push(record) },
    clock: { now },
    log: pino({ level: 'silent' }),
  });
  return { requests, opened, armed };
}

/** A require_approval rule of the policy, approved by `approvers`. */
export function approvalRule(approvers: string[], over: Partial<ApprovalRule> = {}): ApprovalRule {
  return {
    id: 'needs-lead',
    effect: 'require_approval',
    approvers,
    quorum: 1,
    timeout: 3_600_000,
    on_timeout: 'deny',
    ...over,
  } as ApprovalRule;
}
