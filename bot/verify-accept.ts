// Slack Accept as a `verify` job: runs the accept (and so the acceptance verdict) and redraws the DM on a refusal.
import { UnrecoverableError, type Job } from 'bullmq';
import type { WebClient } from '@slack/web-api';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { ThreadDoc } from '../relay-core/domain/documents';
import type { ThreadWriter } from '../relay-core/domain/thread-writer';
import { RelayError } from '../relay-core/domain/errors';
import { parseJob } from '../relay-core/queues/parse-job';
import type { RelayService } from '../relay-core/service/relay-service';
import { threadStatusSchema } from '../relay-core/domain/schemas';
import { handoffDm } from './blocks/handoff-dm';
import { messageDigest, withShown } from './delivery/slack-posts';

// The button only acks, shows "Verifying acceptance…" and enqueues `slack-accept`. The verdict is the same pure
// function MCP accept_handoff runs. On success the `slack` queue redraws the DM as accepted; on a refusal this
// processor redraws it with the result code and reasons as the notice.

export const SLACK_ACCEPT_JOB = 'slack-accept';
export const VERIFYING_NOTICE = 'Verifying acceptance…';

export const slackAcceptJobSchema = z
  .object({
    thread_id: z.uuid(),
    slack_user: z.string().regex(/^[UW][A-Z0-9]{2,}$/, 'must be a Slack user id'),
    shown_status: threadStatusSchema,
    /** Where to explain a doubled click to the person who made it (absent for Home-tab clicks). */
    response_url: z.url({ protocol: /^https?$/ }).optional(),
    /** Hand to my agent: once accepted, also queue a run for the recipient's runner. */
    run: z.boolean().optional(),
  })
  .strict();
export type SlackAcceptJob = z.infer<typeof slackAcceptJobSchema>;

/** One job per click: a Slack retry of the same click (same action_ts) is the same job, never a second. */
export function slackAcceptJobId(threadId: string, actionTs: string): string {
  return `${SLACK_ACCEPT_JOB}-${threadId}-${actionTs.replace(/[^0-9.]/g, '')}`;
}

export interface DmDeps {
  relay: RelayService;
  client: WebClient;
  /** Where the DM's record notes what it shows now (`shown`), so the next sync redraws it (without the notice). */
  threads: ThreadWriter;
}

/**
 * Redraws the thread's recorded DM from its current state, with an optional notice under the header. The record
 * notes what the DM shows, so the next sync draws it again without the notice. Except VERIFYING_NOTICE, recorded as
 * the DM without it: the accept job behind it always ends it (its verdict redraws the DM or changes the thread), and
 * a sync of the unchanged thread meanwhile (a message, the sender's DM still being posted) leaves it standing
 * rather than flashing the Accept button back up before the verdict.
 */
export async function redrawDm({ relay, client, threads }: DmDeps, thread: ThreadDoc, notice?: string): Promise<boolean> {
  const dm = thread.slack;
  if (!dm) return false;
  const [sender, recipient] = await Promise.all([relay.teammates.get(thread.from), relay.teammates.get(thread.to)]);
  const render = (notice?: string) => handoffDm({ thread, sender, recipient, inboxUrl: relay.inboxUrl(thread._id, thread.to), ...(notice ? { notice } : {}) });
  const message = render(notice);
  await client.chat.update({ channel: dm.channel, ts: dm.ts, ...message });
  const shown = messageDigest(notice === VERIFYING_NOTICE ? render() : message);
  await threads.writeThread(thread._id, (doc) => withShown(doc, [{ key: 'recipient', ts: dm.ts, shown }]));
  return true;
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

export function createVerifyAcceptProcessor(deps: DmDeps & { log: Logger }) {
  const { relay, log } = deps;

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
  async function refuse<O extends 'refused' | 'held'>(job: SlackAcceptJob, notice: string, outcome: O = 'refused' as O): Promise<O> {
    const thread = await relay.threadById(job.thread_id);
    const shown = thread ? await redrawDm(deps, thread, notice) : false;
    if (!shown) await tellClicker(job.response_url, `${notice} Nothing was changed.`);
    return outcome;
  }

  /** The run after the accept; a refusal (policy) leaves the handoff accepted and says why on the DM. */
  async function handToAgent(actor: Parameters<RelayService['runs']['request']>[0], data: SlackAcceptJob): Promise<void> {
    try {
      await relay.runs.request(actor, data.thread_id, 'slack');
    } catch (error) {
      if (!(error instanceof RelayError)) throw error;
      const thread = await relay.threadById(data.thread_id);
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
      const actor = await relay.teammates.bySlackUser(data.slack_user);
      if (!actor) return await refuse(data, 'Not accepted: this Slack account is no longer linked to a handoff-relay teammate.');
      let answer;
      try {
        answer = await relay.transition(actor, { thread_id: data.thread_id, transition: 'accept', expected_status: data.shown_status }, 'slack');
      } catch (error) {
        if (!(error instanceof RelayError)) throw error;
        const thread = await relay.threadById(data.thread_id);
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
        log.info({ thread_id: data.thread_id, result: answer.result }, 'slack accept refused by the acceptance verdict');
        return await refuse(data, `Not accepted (${answer.result}): ${answer.reasons.join('; ')}.`);
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
