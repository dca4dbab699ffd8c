// Test-side view of a test relay's Slack queues (both lanes): wait until every delivery job has finished, read their attempts.
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { SLACK_LANES } from '../../relay-core/queues/slack-lanes';
import type { TestRelay } from './relay-harness';
import { WAIT_MS, waitUntil } from './wait-until';

export interface SlackQueueProbe {
  /** Resolves once no slack job is waiting, active or delayed (a delayed job is one waiting out a 429 or a busy claim). */
  settled(timeoutMs?: number): Promise<void>;
  /** Every finished slack job: its event type, thread, attempts made and outcome. */
  finished(): Promise<
    Array<{
      id: string;
      type: string;
      threadId?: string;
      attemptsMade: number;
      returnvalue: unknown;
      failedReason?: string;
    }>
  >;
  close(): Promise<void>;
}

export function slackQueueProbe(relay: TestRelay): SlackQueueProbe {
  const connection = new Redis(relay.config.redisUrl, { maxRetriesPerRequest: null });
  const queues = SLACK_LANES.map((lane) => new Queue(lane, { connection, prefix: relay.config.queuePrefix }));
  return {
    async settled(timeoutMs = WAIT_MS) {
      await waitUntil(
        async () => {
          const counts = await Promise.all(
            queues.map((queue) => queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized')),
          );
          return counts.every((count) => Object.values(count).every((n) => n === 0)) || undefined;
        },
        'the slack queues to settle',
        timeoutMs,
      );
    },
    async finished() {
      const jobs = (await Promise.all(queues.map((queue) => queue.getJobs(['completed', 'failed'])))).flat();
      return jobs.map((j) => ({
        id: String(j.id),
        type: j.name,
        threadId: (j.data as { thread_id?: string } | undefined)?.thread_id,
        attemptsMade: j.attemptsMade,
        returnvalue: j.returnvalue,
        failedReason: j.failedReason,
      }));
    },
    async close() {
      await Promise.all(queues.map((queue) => queue.close()));
      connection.disconnect();
    },
  };
}
