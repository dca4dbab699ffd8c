// Accept: ack, check the click, show "Verifying acceptance…" on the DM, and hand the accept to the `verify` queue.
import type { JobQueue } from '../../../relay-core/queues/bullmq-queues';
import type { Relay } from '../../../relay-core/service/relay-service';
import type { WebClient } from '@slack/web-api';
import type { ThreadWriter } from '../../../relay-core/domain/thread-writer';
import type { Logger } from 'pino';
import { redrawDm, VERIFYING_NOTICE } from '../../delivery/dm-redraw';
import { SLACK_ACCEPT_JOB, slackAcceptJobId, type SlackAcceptJob } from '../../delivery/slack-accept-job';
import { checkClick, explain, type ButtonArgs, type CheckedClick } from './button-click';

// The acceptance verdict runs in that job (bot/verify-accept.ts), not within Slack's 3 seconds.

export interface AcceptButtonDeps {
  reads: Relay['reads'];
  teammates: Relay['teammates'];
  links: Relay['links'];
  verifyJobs: JobQueue;
  log: Logger;
  /** Where a redrawn DM's record notes what it shows (bot/delivery/dm-redraw.ts). */
  threads: ThreadWriter;
}

export function acceptButton(deps: AcceptButtonDeps) {
  return async (args: ButtonArgs): Promise<void> => {
    await args.ack();
    const click = await checkClick(deps, args, { who: 'recipient', verb: 'accept', from: ['pending'] });
    if (!click) return;
    await enqueueSlackAccept(deps, args, click, { button: 'Accept' });
  };
}

/** Shows "Verifying acceptance…" and enqueues the accept job (`run`: Hand to my agent queues a run after it). */
export async function enqueueSlackAccept(
  { teammates, links, verifyJobs, log, threads }: AcceptButtonDeps,
  args: ButtonArgs,
  click: CheckedClick,
  opts: { button: string; run?: boolean },
): Promise<void> {
  const dm = { teammates, links, client: args.client as WebClient, threads };
  await redrawDm(dm, click.thread, VERIFYING_NOTICE).catch((error: Error) =>
    log.warn({ thread_id: click.thread._id, err: error.message }, 'could not show the verifying notice'),
  );
  const job: SlackAcceptJob = {
    thread_id: click.thread._id,
    slack_user: args.body.user.id,
    shown_status: click.shownStatus,
    ...(opts.run ? { run: true } : {}),
    ...(args.body.response_url ? { response_url: args.body.response_url } : {}),
  };
  try {
    await verifyJobs.add(SLACK_ACCEPT_JOB, job, slackAcceptJobId(click.thread._id, args.action.action_ts));
  } catch (error) {
    log.warn({ thread_id: click.thread._id, err: (error as Error).message }, 'could not enqueue the slack accept');
    await redrawDm(dm, click.thread).catch(() => undefined);
    await explain(
      args,
      `handoff-relay could not start verifying your acceptance right now; press ${opts.button} again in a moment. Nothing was changed.`,
    );
  }
}
