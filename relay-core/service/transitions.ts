// Accept, complete, decline and cancel: the policy asked, the acceptance verdict judged on the version the accept
// writes, one versioned thread write with the transition's event. A new transition starts in TRANSITIONS
// (domain/thread-lifecycle.ts: who, from which states, to which, its event) and, for fields of its own, transitioned().
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { acceptanceVerdict, type Verdict } from '../domain/acceptance-verdict';
import type { Clock } from '../domain/clock';
import type { AgentDoc, OutboxEvent, PolicyStamp, ThreadDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';
import { explainFailedClaim, isCandidate } from '../domain/claim';
import type { Artifact, Surface, ThreadStatus, TransitionName } from '../domain/schemas';
import { explainFailedTransition, isRepeatedTransition, TRANSITIONS } from '../domain/thread-lifecycle';
import type { VerdictInput } from '../domain/verdict-input';
import type { ThreadWriter } from '../domain/thread-writer';
import type { ApplyApproved } from './approvals';
import type { Claims } from './claims';
import type { HandoffTokens } from './handoff-tokens';
import type { IdempotencyLedger } from './idempotency';
import type { Outbox } from './outbox';
import type { ThreadPolicy } from './thread-policy';
import { transitionView, type TransitionAnswer } from './wire-views';

export interface TransitionRequest {
  thread_id: string;
  transition: TransitionName;
  result_summary?: string;
  artifacts?: Artifact[];
  reason?: string;
  /** The status the caller saw (a Slack button carries it); a different current status is state_changed. */
  expected_status?: ThreadStatus;
  /** For accept: the acceptance-verdict inputs (all optional); see acceptance-verdict.ts. */
  verdict?: VerdictInput;
}

/** The delivery_source a Slack Accept reports in its verdict. */
export const SLACK_DELIVERY_SOURCE = 'slack_dm';

type TransitionRule = (typeof TRANSITIONS)[TransitionName];

/**
 * What a transition does to one version of its thread: the next version, or none (then `verdict` says when the
 * acceptance checks refused it, `repeated` when the caller already made this very transition). A pure function of
 * the thread: the write runs it on each version it tries, and the answer runs it again on the version it saw last.
 */
interface Outcome {
  next?: ThreadDoc;
  verdict?: Verdict;
  repeated?: boolean;
}

export interface TransitionsDeps {
  store: Pick<ThreadWriter, 'readThread' | 'writeThread'>;
  outbox: Pick<Outbox, 'recording'>;
  ledger: Pick<IdempotencyLedger, 'run'>;
  tokens: Pick<HandoffTokens, 'derive'>;
  policy: Pick<ThreadPolicy, 'forChange'>;
  /** An agent accepting an unclaimed handoff it is a candidate for claims it first. */
  claims: Pick<Claims, 'claim'>;
  clock: Clock;
  log: Logger;
}

export class Transitions {
  constructor(private readonly deps: TransitionsDeps) {}

  /** Accept, complete, decline (recipient) or cancel (sender); idempotent under the caller's key. */
  async transition(
    caller: AgentDoc,
    request: TransitionRequest,
    via: Surface,
    idempotencyKey?: string,
    sessionId?: string,
  ): Promise<TransitionAnswer> {
    const { expected_status: _shown, ...body } = request;
    return this.deps.ledger.run(caller.handle, idempotencyKey, { method: 'transition', ...body }, async () => {
      try {
        return await this.transitionOnce(caller, request, via, sessionId);
      } catch (error) {
        // Only a refusal as no participant costs a second read: it may be a candidate of an unclaimed handoff.
        if (!(error instanceof RelayError) || error.code !== 'not_a_participant') throw error;
        const current = await this.deps.store.readThread(request.thread_id);
        if (current && isCandidate(caller.handle, current)) {
          // An agent accepting an unclaimed handoff it is a candidate for claims it first (accept_handoff, tasks/update).
          if (request.transition !== 'accept' || request.expected_status !== undefined) {
            throw new RelayError(
              'invalid_transition',
              `This handoff to ${current.to_target} is unclaimed: claim it first (tasks/update "claim", or accept_handoff, which claims and accepts)`,
              { status: current.status },
            );
          }
          await this.deps.claims.claim(caller, request.thread_id, via, sessionId);
          return this.transitionOnce(caller, request, via, sessionId);
        }
        // A candidate who lost the claim hears who has it, not that they are no participant.
        if (current?.claimed_by && current.claimed_by !== caller.handle && current.candidates?.includes(caller.handle))
          throw explainFailedClaim(caller, request.thread_id, current);
        throw error;
      }
    });
  }

  /**
   * An approved transition, applied to `doc` as the actor who asked for it: the same checks and the same change as
   * when it is asked for directly (the acceptance verdict included), or why it no longer applies.
   */
  readonly applyApproved: ApplyApproved = (doc, record, actor, emit, now) => {
    const request = record.args as unknown as TransitionRequest;
    const rule = TRANSITIONS[request.transition];
    if (!rule) return { refusal: `${record.action} is not a transition` };
    if (doc[rule.actor] !== actor.handle)
      return { refusal: `${actor.handle} can no longer ${request.transition} this handoff` };
    if (!rule.from.includes(doc.status)) return { refusal: `the handoff is ${doc.status} now` };
    if (request.transition === 'accept') {
      const verdict = this.verdict(doc, request, actor, record.via, now);
      if (!verdict.accepted)
        return { refusal: `the acceptance checks refused it (${verdict.result}: ${verdict.reasons.join('; ')})` };
    }
    const event = emit(rule.event);
    const policy: PolicyStamp = {
      rule_id: record.rule_id,
      effect: 'require_approval',
      policy_version: record.policy_version,
    };
    return { next: transitioned(doc, request, rule, actor, record.via, policy, event, now), type: rule.event };
  };

  private async transitionOnce(
    caller: AgentDoc,
    request: TransitionRequest,
    via: Surface,
    sessionId?: string,
  ): Promise<TransitionAnswer> {
    const { store, outbox, clock, log } = this.deps;
    const { expected_status: _shown, ...body } = request;
    const { stamp: policy, read } = await this.deps.policy.forChange(
      caller,
      request.thread_id,
      `handoff.${request.transition}`,
      via,
      sessionId,
      { ...body },
    );
    const rule = TRANSITIONS[request.transition];
    const now = clock.now();
    const event: OutboxEvent = { id: randomUUID(), type: rule.event, at: now, by: caller.handle, via };
    const outcomeOf = (doc: ThreadDoc): Outcome =>
      this.outcome(doc, { caller, request, rule, via, policy, event, now });
    let before: ThreadDoc | null = null;
    const after = await outbox.recording(event, async () => {
      const written = await store.writeThread(request.thread_id, (doc) => outcomeOf(doc).next, read);
      before = written.before;
      return written.after;
    });
    const seen = before as ThreadDoc | null;
    const outcome: Outcome = seen ? outcomeOf(seen) : {};
    const verdict = outcome.verdict;
    if (verdict && !verdict.accepted) {
      return {
        thread_id: request.thread_id,
        status: seen?.status ?? 'pending',
        accepted_at: null,
        ...verdict,
        accepted: false,
      };
    }
    if (outcome.repeated)
      log.debug(
        { thread_id: request.thread_id, transition: request.transition, by: caller.handle, via },
        'repeated transition answered with the current state',
      );
    else if (!after) throw explainFailedTransition(caller, request, rule, seen);
    else
      log.info({ thread_id: after._id, transition: request.transition, by: caller.handle, via }, 'thread transition');
    const view = transitionView((after ?? seen)!);
    // Old callers (no verdict inputs) keep the plain answer; callers who asked for checks get the verdict alongside.
    return verdict && request.verdict ? { ...view, ...verdict, accepted: true } : view;
  }

  /** The transition on one version of the thread (see Outcome). */
  private outcome(
    doc: ThreadDoc,
    asked: {
      caller: AgentDoc;
      request: TransitionRequest;
      rule: TransitionRule;
      via: Surface;
      policy: PolicyStamp | undefined;
      event: OutboxEvent;
      now: Date;
    },
  ): Outcome {
    const { caller, request, rule, via, now } = asked;
    if (doc[rule.actor] !== caller.handle) return {};
    // The verdict runs on the very version the accept writes, so a check and its write cannot drift apart. A
    // presented token is judged even on a thread that is no longer pending (already_consumed).
    const judged =
      request.transition === 'accept' && (rule.from.includes(doc.status) || request.verdict?.goal_token !== undefined);
    const verdict = judged ? this.verdict(doc, request, caller, via, now) : undefined;
    if (verdict && !verdict.accepted) return { verdict };
    if (isRepeatedTransition(caller, request, rule, doc)) return { verdict, repeated: true };
    if (!rule.from.includes(doc.status)) return { verdict };
    if (request.expected_status && doc.status !== request.expected_status) return { verdict };
    if (doc.hidden_from_recipient && rule.actor === 'to') return { verdict };
    return { verdict, next: transitioned(doc, request, rule, caller, via, asked.policy, asked.event, now) };
  }

  /** The acceptance verdict of `actor` accepting `doc` (acceptance-verdict.ts): the one place it is computed. */
  private verdict(doc: ThreadDoc, request: TransitionRequest, actor: AgentDoc, via: Surface, now: Date): Verdict {
    return acceptanceVerdict(
      this.verdictInput(doc, request, via),
      { thread: doc, token: doc.handoff_token ?? null, recipient_tools: actor.tools ?? [], now },
      actor.team,
    );
  }

  /**
   * What the verdict judges. A Slack click carries no inputs, but Slack has already proved the clicker is the
   * recipient, so the Slack path presents the recipient's own handoff token: an expired handoff is refused there
   * too, and an agent presenting the same token and delivery_source gets the very same verdict.
   */
  private verdictInput(doc: ThreadDoc, request: TransitionRequest, via: Surface): VerdictInput {
    const input = request.verdict ?? {};
    if (via !== 'slack' || input.goal_token !== undefined || !doc.handoff_token) return input;
    return {
      goal_token: this.deps.tokens.derive(doc._id, doc.handoff_token.nonce),
      delivery_source: SLACK_DELIVERY_SOURCE,
      ...input,
    };
  }
}

/** The thread after `request`'s transition by `caller` (its preconditions already checked). */
function transitioned(
  doc: ThreadDoc,
  request: TransitionRequest,
  rule: TransitionRule,
  caller: AgentDoc,
  via: Surface,
  policy: PolicyStamp | undefined,
  event: OutboxEvent,
  now: Date,
): ThreadDoc {
  return {
    ...doc,
    ...(request.transition === 'accept' && doc.handoff_token
      ? { handoff_token: { ...doc.handoff_token, consumed_at: now } }
      : {}),
    status: rule.to,
    updated_at: now,
    [rule.stamp]: now,
    ...(request.transition === 'complete'
      ? { completed_summary: request.result_summary ?? null, completion_artifacts: request.artifacts ?? [] }
      : {}),
    ...(request.transition === 'decline' ? { decline_reason: request.reason ?? null } : {}),
    ...(request.transition === 'cancel' ? { cancel_reason: request.reason ?? null } : {}),
    status_history: [
      ...doc.status_history,
      { status: rule.to, by: caller.handle, at: now, via, ...(policy ? { policy } : {}) },
    ],
    outbox: [...doc.outbox, event],
  };
}
