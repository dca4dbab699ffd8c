// The daily digest's ticks run by a test, not by the relay's schedule: the schedule is removed once the relay has set
// it up and its first tick (at start) has finished, so no tick of the relay's own can come between the test's.
import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { DIGEST_SCHEDULER_ID, DIGEST_TICK_JOB } from '../../bot/digest/daily-digest';
import type { TestRelay } from './relay-harness';
import { waitUntil } from './wait-until';

const DAY = 24 * 3600_000;

export interface DigestTicks {
  /** Runs one tick on the relay's worker; resolves with its result. */
  tick(): Promise<{ due: number; outcomes: Record<string, string> }>;
  close(): Promise<void>;
}

export async function digestTicks(relay: Pick<TestRelay, 'config'>): Promise<DigestTicks> {
  const connection = new Redis(relay.config.redisUrl, { maxRetriesPerRequest: null });
  const verify = new Queue('verify', { connection, prefix: relay.config.queuePrefix });
  const eventsConnection = connection.duplicate();
  const events = new QueueEvents('verify', { connection: eventsConnection, prefix: relay.config.queuePrefix });
  await events.waitUntilReady();
  await waitUntil(
    async () => (await verify.getJobSchedulers()).some((s) => s.key === DIGEST_SCHEDULER_ID),
    'the digest schedule',
  );
  await verify.removeJobScheduler(DIGEST_SCHEDULER_ID);
  await waitUntil(
    async () =>
      (await verify.getJobs(['waiting', 'active', 'delayed', 'prioritized'])).every((j) => j.name !== DIGEST_TICK_JOB),
    'the first tick to finish',
  );
  let seq = 0;
  return {
    async tick() {
      const job = await verify.add(
        DIGEST_TICK_JOB,
        {},
        { jobId: `test-tick-${Date.now()}-${++seq}`, removeOnComplete: false },
      );
      return job.waitUntilFinished(events, 60_000);
    },
    async close() {
      await events.close();
      eventsConnection.disconnect();
      await verify.close();
      connection.disconnect();
    },
  };
}

/** The first weekday 08:45 UTC (09:45 in Berlin, 03:45 in New York, same date) more than a minute after `after`. */
export function nextWeekdayMorning(after: number): number {
  const t = new Date(after);
  t.setUTCHours(8, 45, 0, 0);
  while (t.getTime() <= after + 60_000 || [0, 6].includes(t.getUTCDay())) t.setTime(t.getTime() + DAY);
  return t.getTime();
}
