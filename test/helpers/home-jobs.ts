// Test-side view of the live App Home's refresh jobs (bot/home/home-refresh.ts) on a test relay's `verify` queue.
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { HOME_REFRESH_JOB } from '../../bot/home/home-refresh';
import type { TestRelay } from './relay-harness';
import { slackQueueProbe } from './slack-queue';
import { waitUntil } from './wait-until';

export interface HomeJobsProbe {
  /** Resolves once every DM job has finished and no Home refresh is waiting, delayed or running. */
  settled(): Promise<void>;
  /** Stops the `verify` workers taking jobs (Home refreshes wait, however long a burst takes) until `resume`. */
  pause(): Promise<void>;
  /** Once every DM job has finished (so every refresh owed is armed), lets the `verify` workers go on. */
  resume(): Promise<void>;
  close(): Promise<void>;
}

export function homeJobsProbe(relay: TestRelay): HomeJobsProbe {
  const connection = new Redis(relay.config.redisUrl, { maxRetriesPerRequest: null });
  const verify = new Queue('verify', { connection, prefix: relay.config.queuePrefix });
  const slack = slackQueueProbe(relay);
  return {
    async settled() {
      // The DM jobs arm the refreshes before they finish, so once they are done every refresh owed is on the queue.
      await slack.settled();
      await waitUntil(async () => {
        const open = await verify.getJobs(['waiting', 'delayed', 'active', 'prioritized']);
        return open.every((j) => j.name !== HOME_REFRESH_JOB) || undefined;
      }, 'the Home refreshes to finish');
    },
    async pause() {
      await verify.pause();
    },
    async resume() {
      await slack.settled();
      await verify.resume();
    },
    async close() {
      await slack.close();
      await verify.close();
      connection.disconnect();
    },
  };
}
