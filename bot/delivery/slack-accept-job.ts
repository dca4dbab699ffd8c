// The `slack-accept` job on the `verify` queue: the Accept button (listeners/actions/accept-button.ts) enqueues it,
// its processor (bot/verify-accept.ts) runs the accept and so the acceptance verdict.
import { z } from 'zod';
import { threadStatusSchema } from '../../relay-core/domain/schemas';

export const SLACK_ACCEPT_JOB = 'slack-accept';
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
