// Slack delivery's two lanes, a BullMQ queue each: first deliveries (`slack`) and DM syncs and redraws (`slack-sync`).
import type { EventType } from '../domain/schemas';

// Each lane is its own queue with its own worker, so neither waits behind the other's backlog by construction: a new
// handoff's DM is taken as soon as a first-lane slot is free however many redraws are queued, and a steady stream of
// new handoffs cannot hold the redraws back. Within a lane, jobs run in the order they were queued. Job ids (the
// event's), attempts, backoff, stall recovery and the post ledger are the same in both. The first lane keeps the name
// of the single queue it was split from, so whatever an older relay left on `slack` (syncs at BullMQ priority 1,
// retries, delayed jobs) is taken by the first lane's worker after an upgrade: nothing to move, nothing twice.

/** The first lane: the queue of the events whose job posts a first DM of a handoff (or an approval request). */
export const SLACK_FIRST_LANE = 'slack';
/** The sync lane: every other Slack job (messages, accept/decline/complete, reminders, runs, votes …). */
export const SLACK_SYNC_LANE = 'slack-sync';
export const SLACK_LANES = [SLACK_FIRST_LANE, SLACK_SYNC_LANE] as const;
export type SlackLane = (typeof SLACK_LANES)[number];

/** Events whose Slack job posts someone's first DM of a handoff (or an approver's request): the first lane. */
export const FIRST_DELIVERY_EVENTS: ReadonlySet<string> = new Set<EventType>([
  'thread.created',
  'thread.awaiting_approval',
  'approval.requested',
  'thread.claimed',
  'thread.reassigned',
]);

/** The lane (queue name) a Slack job of this event goes to. */
export function slackLaneOf(type: EventType): SlackLane {
  return FIRST_DELIVERY_EVENTS.has(type) ? SLACK_FIRST_LANE : SLACK_SYNC_LANE;
}

/**
 * The limiter every lane worker runs with. BullMQ's moveToActive honours a queue's rate limit (Queue.rateLimit, set
 * when Slack answers 429: bot/slack-delivery.ts) only for a worker with a limiter, so every worker of the lane, in
 * every process, holds off; this one never binds by itself (a million jobs a second).
 */
export const SLACK_LANE_LIMITER = { max: 1_000_000, duration: 1_000 };

/**
 * How long a held lane's worker sleeps before it asks Redis again (BullMQ's maximumRateLimitDelay, 30 s by default):
 * a lane whose limit went early (Redis restarted empty, an operator removed it) resumes within this.
 */
export const SLACK_LANE_RECHECK_MS = 5_000;
