// The Slack lanes' processor (queues/slack-lanes.ts): takes a job's thread, syncs Slack with it, and decides what a failure means.
import { DelayedError, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { WebClient } from '@slack/web-api';
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../relay-core/domain/clock';
import type { ThreadWriter } from '../relay-core/domain/thread-writer';
import { eventJobSchema } from '../relay-core/queues/bullmq-queues';
import { parseJob } from '../relay-core/queues/parse-job';
import type { Relay } from '../relay-core/service/relay-service';
import { CLAIM_LEASE_MS, exactlyOncePost } from './delivery/exactly-once-post';
import { isPermanentSlackError, isWorkspaceGoneError, rateLimitedMs, slackErrorCode } from './delivery/slack-errors';
import { SlackNotInstalledError } from './oauth/mongo-installation-store';
import { threadSync, type SlackDeliveryOutcome } from './delivery/thread-sync';
import { WaitAndRetry } from './delivery/wait-and-retry';

// The sync is delivery/thread-sync.ts, each post exactly once through delivery/exactly-once-post.ts.
// Waiting costs no attempt. A 429 with one workspace holds the job's whole lane for `Retry-After` (BullMQ's rate
// limiter: Queue.rateLimit + Worker.RateLimitError puts the job back at the head of its queue). A 429 with several
// workspaces, a busy claim, or a reply whose DM is being posted by another job moves only this job to BullMQ's delayed
// set (job.moveToDelayed + DelayedError) and it runs again later.
// A message Slack refuses for what it is fails the job at once (UnrecoverableError).

/** The thread a Slack job synced: its id, and its participants as the event's job carries them (an older job: none). */
export interface SyncedThread {
  id: string;
  from?: string | undefined;
  to?: string | undefined;
}

export interface SlackDeliveryDeps {
  channels: Relay['channels'];
  links: Relay['links'];
  teammates: Relay['teammates'];
  /** Where the post ledger writes its claims and records. */
  threads: ThreadWriter;
  /** Single-token mode: the one workspace's client; OAuth mode: a TeamRoutingClient (each call with its workspace's token). */
  client: WebClient;
  /** OAuth mode: whether a Slack user's workspace has the app installed (a side that is gone is left out of a sync). */
  reachable?: (slackUser: string) => Promise<boolean>;
  log: Logger;
  clock?: Clock;
  /**
   * Single-token mode: holds a lane (the queue a job is on) for `ms`, every worker of it in every process (BullMQ's
   * Queue.rateLimit), after Slack answered 429: every job on it calls Slack with that one token. Unset in OAuth mode.
   */
  holdLane?: (queueName: string, ms: number) => Promise<void>;
  /** Override of CLAIM_LEASE_MS (tests). */
  claimLeaseMs?: number;
  /**
   * Runs after a thread's DMs are in step with it (the live App Home arms its refresh here), with the participants the
   * event's job carries; a failure is only logged.
   */
  afterSync?: (thread: SyncedThread) => Promise<void>;
}

export function createSlackDeliveryProcessor(deps: SlackDeliveryDeps) {
  const { channels, links, teammates, threads, client, log } = deps;
  const ensurePosted = exactlyOncePost({
    threads,
    client,
    log,
    clock: deps.clock ?? systemClock,
    leaseMs: deps.claimLeaseMs ?? CLAIM_LEASE_MS,
  });
  const sync = threadSync({ channels, links, teammates, threads, client, ensurePosted, reachable: deps.reachable });

  return async function deliverToSlack(job: Job, token?: string): Promise<SlackDeliveryOutcome> {
    const { thread_id: threadId, event_id: eventId, type, from, to, version, by, at } = parseJob(eventJobSchema, job);
    // The event's notice to the other party (a job queued before jobs carried `by` and `at` posts none).
    const event = by && at ? { id: eventId, type, by, at: new Date(at) } : undefined;
    try {
      // A job that ran before (a failed attempt, a stall) may have died between a redraw and its re-check.
      const outcome = await sync(
        threadId,
        String(job.id),
        job.attemptsMade > 0 || job.stalledCounter > 0,
        version,
        event,
      );
      log.info({ thread_id: threadId, event: type, outcome }, 'slack delivery done');
      await deps
        .afterSync?.({ id: threadId, from, to })
        .catch((error: Error) => log.warn({ thread_id: threadId, err: error.message }, 'after-sync step failed'));
      return outcome;
    } catch (error) {
      const rateLimited = rateLimitedMs(error);
      if (rateLimited !== null && deps.holdLane) {
        log.info({ thread_id: threadId, event: type, wait_ms: rateLimited, lane: job.queueName }, 'slack lane waits');
        await deps.holdLane(job.queueName, rateLimited);
        throw Worker.RateLimitError();
      }
      // Several workspaces: BullMQ's limiter holds a whole queue, and a 429 is one workspace's token's, so only this job waits.
      const waitMs = error instanceof WaitAndRetry ? error.ms : rateLimited;
      if (waitMs !== null && token) {
        log.info(
          { thread_id: threadId, event: type, wait_ms: waitMs, reason: (error as Error).message },
          'slack delivery waits',
        );
        await job.moveToDelayed(Date.now() + waitMs, token);
        throw new DelayedError();
      }
      // An uninstalled workspace (or revoked tokens): this job fails for good, and so does every later one of it.
      if (error instanceof SlackNotInstalledError || isWorkspaceGoneError(error)) {
        const why =
          error instanceof SlackNotInstalledError
            ? error.message
            : `Slack refused the token (${slackErrorCode(error)})`;
        log.warn(
          { thread_id: threadId, event: type, reason: why },
          'slack delivery stopped: the workspace is not installed',
        );
        throw new UnrecoverableError(`slack job ${job.id}: ${why}`);
      }
      if (isPermanentSlackError(error)) {
        throw new UnrecoverableError(`slack job ${job.id}: Slack refused the message (${slackErrorCode(error)})`);
      }
      throw error;
    }
  };
}
