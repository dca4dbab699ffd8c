// The processor of Slack Accept's `verify` job (delivery/slack-accept-job.ts): runs the accept (and so the
// acceptance verdict) and redraws the DM on a refusal.
import { UnrecoverableError, type Job } from 'bullmq';
import type { Logger } from 'pino';
import type { AgentDoc } from '../relay-core/domain/documents';
import { RelayError } from '../relay-core/domain/errors';
import { parseJob } from '../relay-core/queues/parse-job';
import type { Relay } from '../relay-core/service/relay-service';
import { redrawDm, type DmDeps } from './delivery/dm-redraw';
import { slackAcceptJobSchema, type SlackAcceptJob } from './delivery/slack-accept-job';

// The button only acks, shows "Verifying acceptance…" and enqueues `slack-accept`. The verdict is the same pure
// function MCP accept_handoff runs. On success the `slack` queue redraws the DM as accepted; on a refusal this
// processor redraws it with the result code and reasons as the notice.

export interface VerifyAcceptDeps extends DmDeps {
  reads: Relay['reads'];
  transitions: Relay['transitions'];
  runs: Relay['runs'];
  log: Logger;
}

/** `held`: a policy holds the accept for a person's approval; it is applied once approved. */
export type VerifyAcceptOutcome = 'accepted' | 'refused' | 'held' | 'unchanged';

/** What the person who pressed Accept reads when a policy holds it: who must approve, and that nothing is owed. */
function heldNotice(details: unknown, what = 'your Accept', then = 'It is applied as yours then'): string {
  const held = details as { approvers?: string[]; quorum?: number; rule_id?: string } | undefined;
  const who = held?.approvers?.join(', ') || 'an approver';
  const quorum = held?.quorum && held.quorum > 1 ? ` (${held.quorum} of them)` : '';
  return `Waiting for approval: policy rule ${held?.rule_id ?? ''} holds ${what} until ${who} approve${quorum}. ${then}; nothing to do meanwhile.`;
}

/** A failed acceptance check, in words (the code stays for whoever reports it). */
const VERDICT_WORDS: Record<string, string> = {
  STALE_HANDOFF: 'the handoff is out of date (its handoff token was used, expired or does not match)',
  FOREIGN_PROJECT_CONFIG: 'it was made for another project than yours',
  BOARD_DIVERGENCE: 'the board changed since it was sent',
  TOOL_MANIFEST_DRIFT: 'your agent lacks tools it needs',
  BODY_HASH_MISMATCH: 'its content changed since it was sent',
  CAPABILITY_UNAVAILABLE: 'a capability it needs is not available to you',
};

export function verdictWords(result: string, reasons: readonly string[]): string {
  const why = VERDICT_WORDS[result] ?? 'an acceptance check failed';
  return `Not accepted: ${why}.${reasons.length ? ` ${reasons.join('; ')}.` : ''} (check ${result})`;
}

export function createVerifyAcceptProcessor(deps: VerifyAcceptDeps) {
  const { reads, runs, teammates, transitions, log } = deps;

  async function tellClicker(responseUrl: string | undefined, text: string): Promise<void> {
    if (!responseUrl) return;
    try {
      const answer = await fetch(responseUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ response_type: 'ephemeral', replace_original: false, text }),
        signal: AbortSignal.timeout(10_000),
      });
      if (!answer.ok) log.warn({ status: answer.status }, 'slack response_url refused an explanation');
    } catch (error) {
      // A response_url lives 30 minutes; a lost explanation must not fail the job.
      log.warn({ err: (error as Error).message }, 'slack response_url unreachable');
    }
  }

  /** A refusal goes on the DM where the Accept was pressed; without a recorded DM, to the clicker alone. */
  async function refuse<O extends 'refused' | 'held'>(
    job: SlackAcceptJob,
    notice: string,
    outcome: O = 'refused' as O,
  ): Promise<O> {
    const thread = await reads.threadById(job.thread_id);
    const shown = thread ? await redrawDm(deps, thread, notice) : false;
    if (!shown) await tellClicker(job.response_url, `${notice} Nothing was changed.`);
    return outcome;
  }

  /** The run after the accept; a refusal (policy) leaves the handoff accepted and says why on the DM. */
  async function handToAgent(actor: AgentDoc, data: SlackAcceptJob): Promise<void> {
    try {
      await runs.request(actor, data.thread_id, 'slack');
    } catch (error) {
      if (!(error instanceof RelayError)) throw error;
      const thread = await reads.threadById(data.thread_id);
      const notice =
        error.code === 'approval_pending'
          ? `Accepted. ${heldNotice(error.details, 'your Hand to my agent', 'The run is queued for your agent then')}`
          : `Accepted, but not handed to your agent: ${error.message}.`;
      const shown = thread ? await redrawDm(deps, thread, notice) : false;
      if (!shown) await tellClicker(data.response_url, notice);
    }
  }

  return async function verifySlackAccept(job: Job): Promise<VerifyAcceptOutcome> {
    const data = parseJob(slackAcceptJobSchema, job);
    try {
      const actor = await teammates.bySlackUser(data.slack_user);
      if (!actor)
        return await refuse(data, 'Not accepted: this Slack account is no longer linked to a handoff-relay teammate.');
      let answer;
      try {
        answer = await transitions.transition(
          actor,
          { thread_id: data.thread_id, transition: 'accept', expected_status: data.shown_status },
          'slack',
        );
      } catch (error) {
        if (!(error instanceof RelayError)) throw error;
        const thread = await reads.threadById(data.thread_id);
        const last = thread?.status_history[thread.status_history.length - 1];
        if (thread && thread.status === 'accepted' && last?.by === actor.handle) {
          // A second click (or a re-run) after the first accept: show the accepted DM, tell the clicker.
          if (data.run) {
            await handToAgent(actor, data);
            return 'unchanged';
          }
          await redrawDm(deps, thread);
          await tellClicker(data.response_url, 'You already accepted this handoff; nothing was changed.');
          return 'unchanged';
        }
        if (error.code === 'approval_pending') return await refuse(data, heldNotice(error.details), 'held');
        return await refuse(data, `Not accepted: ${error.message}.`);
      }
      if (answer.accepted === false) {
        log.info(
          { thread_id: data.thread_id, result: answer.result },
          'slack accept refused by the acceptance verdict',
        );
        return await refuse(data, verdictWords(answer.result, answer.reasons));
      }
      if (data.run) await handToAgent(actor, data);
      return 'accepted';
    } catch (error) {
      if (error instanceof UnrecoverableError || job.attemptsMade + 1 < (job.opts.attempts ?? 1)) throw error;
      // Last attempt: never leave "Verifying acceptance…" standing.
      await refuse(data, 'Acceptance could not be verified right now; press Accept again.').catch(() => undefined);
      throw error;
    }
  };
}
