// The live App Home: after the `slack` queue has synced a thread's DMs, each linked participant's Home tab is
// re-published by one debounced job per Slack user on the `verify` queue, so a burst of changes publishes once.
import { UnrecoverableError, type Job, type Queue } from 'bullmq';
import type { WebClient } from '@slack/web-api';
import type { Logger } from 'pino';
import { z } from 'zod';
import { parseJob } from '../../relay-core/queues/parse-job';
import type { Relay } from '../../relay-core/service/relay-service';
import { publishHome, type HomeDigest } from '../listeners/events/app-home';
import type { SyncedThread } from '../slack-delivery';
import { SlackNotInstalledError } from '../oauth/mongo-installation-store';

// Why a deduplication id and not a fixed job id: BullMQ ignores an add whose job id exists in any state, so a
// change arriving while the refresh runs (or within the day a completed job is kept) would never be drawn. The
// deduplication id `home.<user>` (deterministic per Slack user) coalesces adds while the job waits (`reschedule`
// moves it to `delay` after the latest change: a debounce), and one added while it runs is kept and runs after it
// (`keepLastIfActive`), so the last publish always starts after the last change.

export const HOME_REFRESH_JOB = 'slack-home-refresh';
/** Quiet time after the latest change before the tab is drawn. */
export const HOME_REFRESH_DELAY_MS = 1_500;

const homeRefreshJobSchema = z.object({ slack_user: z.string().regex(/^[UW][A-Z0-9]+$/) });

export interface HomeRefresher {
  /**
   * Arms one refresh for each linked participant of a thread (no-op for teammates without a Slack user): `from` and
   * `to` as its event's job carries them, so arming reads no thread (a job queued before jobs carried them: read).
   */
  armForThread(thread: SyncedThread): Promise<void>;
}

export function homeRefresher(
  deps: Pick<Relay, 'reads' | 'teammates'> & { queue: Queue; delayMs?: number },
): HomeRefresher {
  const { reads, teammates, queue } = deps;
  const delay = deps.delayMs ?? HOME_REFRESH_DELAY_MS;
  return {
    async armForThread({ id, from, to }) {
      const parties = from && to ? { from, to } : await reads.threadById(id);
      if (!parties) return;
      const people = await Promise.all([teammates.get(parties.from), teammates.get(parties.to)]);
      const users = new Set(people.map((p) => p?.slack_user_id).filter((u): u is string => Boolean(u)));
      await Promise.all(
        [...users].map((user) =>
          queue.add(
            HOME_REFRESH_JOB,
            { slack_user: user },
            {
              delay,
              deduplication: { id: `home.${user}`, keepLastIfActive: true, reschedule: true },
              attempts: 3,
              backoff: { type: 'exponential', delay: 1_000 },
              removeOnComplete: true,
              removeOnFail: { age: 24 * 3600 },
            },
          ),
        ),
      );
    },
  };
}

/** The job: publish the user's Home tab at its first page, as it is now. */
export function homeRefreshHandler(
  deps: Pick<Relay, 'reads' | 'teammates' | 'links'> & { client: WebClient; log: Logger; digest?: HomeDigest },
) {
  return async function refreshHome(job: Job): Promise<{ published: string }> {
    const { slack_user: user } = parseJob(homeRefreshJobSchema, job);
    // OAuth mode: a person whose workspace uninstalled the app has no Home tab to publish, now or later.
    await publishHome(deps, deps.client, user, {}, deps.digest).catch((error: Error) => {
      if (error instanceof SlackNotInstalledError)
        throw new UnrecoverableError(`home tab of ${user}: ${error.message}`);
      throw error;
    });
    deps.log.debug({ slack_user: user }, 'home tab re-published');
    return { published: user };
  };
}
