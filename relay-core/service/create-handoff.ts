// Creating a handoff: route the recipient, ask the policy, insert the thread (pending, unclaimed, or held for
// approval) with its thread.created event and its first timer step; a retry under the same key answers the same.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { describeApprovers, type ApprovalRecord } from '../domain/approval';
import type { Clock } from '../domain/clock';
import type { AgentDoc, ThreadDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';
import { unclaimedThread } from '../domain/claim';
import type { NewHandoff, RecipientTarget, Surface } from '../domain/schemas';
import { intentProblems, newPendingThread } from '../domain/thread-lifecycle';
import type { MongoStore } from '../store/mongo-store';
import { isDuplicateKey } from '../store/thread-writes';
import type { ApprovalRequests } from './approval-requests';
import type { HandoffTimers } from './handoff-timers';
import type { HandoffTokens } from './handoff-tokens';
import { routeHandoff, type RouteTeammates } from './handoff-routing';
import { idempotentId } from './idempotency';
import type { InboxLinks } from './inbox-links';
import type { Outbox } from './outbox';
import type { PolicyGate } from './policy-gate';
import { isHeld, targetParty } from './thread-policy';

export interface CreateResult {
  task_id: string;
  /**
   * unclaimed: sent to a role, skill or owner that named several teammates; the first to claim it becomes the recipient.
   * awaiting_approval: a policy holds the create until people approve it (nothing is delivered until then).
   */
  status: { state: 'pending' | 'unclaimed' | 'awaiting_approval' };
  created_at: string;
  inbox_url: string;
  /** The recipient's handle, or the target (`role:frontend`) while unclaimed. */
  recipient: string;
  /** For a held create: the approval and who must approve it. */
  approval?: { approval_id: string; approvers: string[]; quorum: number; rule_id: string };
  /** Unclaimed only: who may claim it. */
  candidates?: string[];
}

export type { ClaimResult } from './claims';

export interface CreateHandoffDeps {
  /** A create inserts its thread (a duplicate key when a retry's is already there) and reads a replay's. */
  store: Pick<MongoStore, 'readThread' | 'insertThread'>;
  teammates: RouteTeammates;
  outbox: Pick<Outbox, 'recording'>;
  tokens: HandoffTokens;
  links: Pick<InboxLinks, 'url'>;
  /** The policy enforcement point; without one every create is allowed (tests of other things). */
  gate?: Pick<PolicyGate, 'check'>;
  /** Where a create a rule holds is recorded for its approvers. */
  approvals: Pick<ApprovalRequests, 'holdCreate' | 'opened'>;
  /** Arms a new thread's first timer step at create (handoff-timers.ts); without it the thread.created job does. */
  timers?: Pick<HandoffTimers, 'withFirstStep'>;
  clock: Clock;
  log: Logger;
}

export class CreateHandoff {
  constructor(private readonly deps: CreateHandoffDeps) {}

  async create(sender: AgentDoc, input: NewHandoff, via: Surface, sessionId?: string): Promise<CreateResult> {
    const [problem] = intentProblems(input);
    if (problem) throw new RelayError('invalid_intent_payload', problem.message);
    const route = await routeHandoff(this.deps.teammates, sender, input.to);
    // Several candidates: the thread waits unclaimed; the policy sees the target as the recipient (its role or skill).
    const recipient = 'recipient' in route ? route.recipient : targetParty(route.target, sender);

    // With a key the id derives from sender + key, so a duplicate is a duplicate-key insert, never a second thread.
    const threadId = input.idempotency_key
      ? idempotentId(sender.handle, 'create', input.idempotency_key)
      : randomUUID();
    const now = this.deps.clock.now();
    const pending = newPendingThread(
      { id: threadId, sender, recipient, input, via, now, eventId: randomUUID() },
      (bodyHash) =>
        this.deps.tokens.mint({ id: threadId, team: recipient.team, bodyHash, metadata: input.metadata }, now),
    );
    // A retry under the same key must match what the sender said (the target), whoever the target names by then.
    const asSent = (target: RecipientTarget) =>
      newPendingThread(
        { id: threadId, sender, recipient: targetParty(target, sender), input, via, now, eventId: '' },
        () => null,
      ).request_hash;
    const doc =
      'candidates' in route
        ? unclaimedThread(
            pending,
            route.target,
            route.candidates.map((c) => c.handle),
          )
        : route.target
          ? {
              ...pending,
              to_target: route.target.label,
              candidates: [route.recipient.handle],
              request_hash: asSent(route.target),
            }
          : pending;
    const bodyHash = doc.request_hash;
    let earlier: ThreadDoc | null = null;
    const isReplay = async () =>
      Boolean(input.idempotency_key && (earlier = await this.deps.store.readThread(threadId)));
    const policy = await this.deps.gate?.check(
      {
        action: 'handoff.create',
        via,
        actor: sender,
        sender,
        recipient,
        intent: input.intent,
        artifacts: input.artifacts,
        target_files: input.proposed_action?.target_files ?? [],
        session_id: sessionId,
      },
      isReplay,
    );
    if (policy === 'replay') return this.replayCreate(earlier, bodyHash);
    let held: ApprovalRecord | undefined;
    if (policy && isHeld(policy)) {
      const { hold, ...stamp } = policy;
      // An approver that does not resolve refuses the create here, before anything is stored. Approved, a handoff
      // to a role, skill or owner with several candidates opens unclaimed (approvals.ts).
      held = await this.deps.approvals.holdCreate(doc, hold, stamp, sender, recipient, via);
    } else if (policy) {
      doc.status_history = doc.status_history.map((entry) => ({ ...entry, policy }));
    }
    // The first timer step is armed on the document the create inserts (its thread.created event then needs no arm
    // job); a held create has no steps until it is approved.
    const stored = held ? doc : await this.withFirstStep(doc);
    const created = await this.deps.outbox.recording(stored.outbox[0]!, async () => {
      try {
        return await this.deps.store.insertThread(stored);
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        return null;
      }
    });
    if (!created) return this.replayCreate(await this.deps.store.readThread(threadId), bodyHash);
    if (held) await this.deps.approvals.opened(threadId, held);
    this.deps.log.info(
      {
        thread_id: threadId,
        from: sender.handle,
        to: doc.to,
        candidates: doc.status === 'unclaimed' ? doc.candidates : undefined,
        via,
        ...(held ? { approval_id: held.id } : {}),
      },
      held ? 'handoff held for approval' : 'handoff created',
    );
    return this.createResult(stored);
  }

  /** The new thread with its first timer step armed; as it is when that fails (its thread.created arm job arms it). */
  private async withFirstStep(doc: ThreadDoc): Promise<ThreadDoc> {
    if (!this.deps.timers) return doc;
    return this.deps.timers.withFirstStep(doc).catch((error: Error) => {
      this.deps.log.warn(
        { thread_id: doc._id, err: error.message },
        'first timer not armed at create; its arm job will',
      );
      return doc;
    });
  }

  private replayCreate(original: ThreadDoc | null, bodyHash: string): CreateResult {
    if (!original || original.request_hash !== bodyHash) {
      throw new RelayError(
        'duplicate_idempotency_key',
        'This idempotency key was already used with a different request body',
      );
    }
    return this.createResult(original);
  }

  private createResult(doc: ThreadDoc): CreateResult {
    const held = doc.approvals?.find((a) => a.action === 'handoff.create');
    return {
      task_id: doc._id,
      // A replay answers what the create answered: held when it was held, whatever happened since.
      status: { state: held ? 'awaiting_approval' : doc.status === 'unclaimed' ? 'unclaimed' : 'pending' },
      created_at: doc.created_at.toISOString(),
      inbox_url: this.deps.links.url(doc._id, doc.from),
      recipient: doc.to,
      ...(doc.status === 'unclaimed' ? { candidates: doc.candidates ?? [] } : {}),
      ...(held
        ? {
            approval: {
              approval_id: held.id,
              approvers: describeApprovers(held.approvers.filter((a) => a.step === 0)).split(', '),
              quorum: held.quorum,
              rule_id: held.rule_id,
            },
          }
        : {}),
    };
  }
}
