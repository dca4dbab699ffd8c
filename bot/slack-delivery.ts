// The `slack` queue's processor: brings Slack in step with one thread. Every job, whatever its event, does
// the same three things for each linked participant (the recipient, and the sender when linked):
//   1. the audience's DM exists (posted once, exactly once);
//   2. every recorded thread message is a reply under that DM, in sequence_no order, each exactly once;
//   3. the DM shows the thread as it is now (re-rendered from the current thread, so a late job cannot roll it back).
//
// Exactly-once posting. Slack has no idempotency key, and a worker can die (or lose Slack's answer) after
// chat.postMessage and before the ts is recorded. So every post is claimed first, on the thread, in one
// versioned write (SlackPostLedger.claim, bot/delivery/): the claim holds a random marker that the message carries in
// its metadata (event_type "handoff_relay"). The ts is recorded afterwards, clearing the claim. A job that
// finds a claim without a ts — its own from an earlier attempt, or another job's older than CLAIM_LEASE_MS —
// first reads the DM channel back (conversations.history, or conversations.replies for a reply, with
// include_all_metadata) and records the message carrying the marker; only when Slack has no such message does
// it take the claim over (a compare-and-set on the claim's lease) and post. A claim younger than the lease
// held by another job means that job may be posting right now: this job waits instead.
// The remaining window is a post that Slack applies more than CLAIM_LEASE_MS after it was sent (the client
// times out after 10 s), which is why the lease is far longer than the request timeout.
//
// Waiting costs no attempt: a 429 (`Retry-After`), a busy claim, or a reply whose DM is being posted by
// another job moves the job to BullMQ's delayed set (job.moveToDelayed + DelayedError) and it runs again later.
import { randomInt } from 'node:crypto';
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import { ErrorCode, type WebClient } from '@slack/web-api';
import type { Logger } from 'pino';
import { eventJobSchema } from '../relay-core/queues/bullmq-queues';
import type { AgentDoc, SlackDelivery, SlackPendingPost, ThreadDoc } from '../relay-core/domain/documents';
import type { RelayService } from '../relay-core/service/relay-service';
import type { ThreadWriter } from '../relay-core/domain/thread-writer';
import { systemClock, type Clock } from '../relay-core/domain/clock';
import { SlackPostLedger } from './delivery/slack-post-ledger';
import { recordedTs, replyKey, slackDm, type SlackAudience, type SlackPostKey } from './delivery/slack-posts';
import { handoffDm, type SlackMessage } from './blocks/handoff-dm';
import { threadReplyMessage } from './blocks/thread-reply';

/** How long another job's claim is trusted to be in flight before this job may look it up and take it over. */
export const CLAIM_LEASE_MS = 60_000;
/** How far before a claim the lookup reads back, for clock skew between the relay and Slack. */
const LOOKUP_MARGIN_MS = 10 * 60_000;
/** The message metadata type every post carries. */
export const SLACK_METADATA_EVENT_TYPE = 'handoff_relay';
/** Errors about what we sent: retrying the same content cannot help. */
const PERMANENT_SLACK_ERRORS = new Set([
  'invalid_blocks',
  'msg_blocks_too_long',
  'msg_too_long',
  'no_text',
  'invalid_metadata_format',
  'invalid_metadata_schema',
  'invalid_arguments',
  'cannot_dm_bot',
  'user_not_found',
  'message_not_found',
]);

export interface SlackDeliveryDeps {
  relay: RelayService;
  /** Where the post ledger writes its claims and records. */
  threads: ThreadWriter;
  client: WebClient;
  log: Logger;
  clock?: Clock;
  /** Override of CLAIM_LEASE_MS (tests). */
  claimLeaseMs?: number;
}

export type SlackDeliveryOutcome = 'posted' | 'updated' | 'skipped';

/** This job must run again later without spending an attempt (a busy claim, a DM not posted yet, a 429). */
class WaitAndRetry extends Error {
  constructor(
    readonly ms: number,
    reason: string,
  ) {
    super(reason);
    this.name = 'WaitAndRetry';
  }
}

interface Audience {
  name: SlackAudience;
  slackUser: string;
}

interface Participants {
  sender: AgentDoc | null;
  recipient: AgentDoc | null;
}

export function createSlackDeliveryProcessor(deps: SlackDeliveryDeps) {
  const { relay, threads, client, log } = deps;
  const clock = deps.clock ?? systemClock;
  const ledger = new SlackPostLedger({ threads, clock });
  const leaseMs = deps.claimLeaseMs ?? CLAIM_LEASE_MS;

  async function participants(thread: ThreadDoc): Promise<Participants> {
    const [sender, recipient] = await Promise.all([relay.teammates.get(thread.from), relay.teammates.get(thread.to)]);
    return { sender, recipient };
  }

  function audiencesOf({ sender, recipient }: Participants): Audience[] {
    const audiences: Audience[] = [];
    if (recipient?.slack_user_id) audiences.push({ name: 'recipient', slackUser: recipient.slack_user_id });
    if (sender?.slack_user_id && sender.slack_user_id !== recipient?.slack_user_id) {
      audiences.push({ name: 'sender', slackUser: sender.slack_user_id });
    }
    return audiences;
  }

  /** The inbox link in an audience's DM and replies is signed for that participant (it is as private as the DM). */
  function inboxUrlFor(thread: ThreadDoc, audience: SlackAudience): string {
    return relay.inboxUrl(thread._id, audience === 'recipient' ? thread.to : thread.from);
  }

  function renderDm(thread: ThreadDoc, people: Participants, audience: SlackAudience): SlackMessage {
    return handoffDm({ thread, ...people, inboxUrl: inboxUrlFor(thread, audience), audience });
  }

  function metadata(threadId: string, key: SlackPostKey, marker: string) {
    return { event_type: SLACK_METADATA_EVENT_TYPE, event_payload: { thread_id: threadId, kind: key, marker } };
  }

  /** The ts of the message carrying `claim.marker`, if Slack has it. */
  async function findPosted(claim: SlackPendingPost): Promise<string | null> {
    const oldest = ((claim.claimed_at.getTime() - LOOKUP_MARGIN_MS) / 1000).toFixed(6);
    let cursor: string | undefined;
    for (let page = 0; page < 20; page += 1) {
      const query = { channel: claim.channel, oldest, inclusive: true, include_all_metadata: true, limit: 200, cursor };
      const res = claim.thread_ts ? await client.conversations.replies({ ...query, ts: claim.thread_ts }) : await client.conversations.history(query);
      const hit = res.messages?.find(
        (m) => m.metadata?.event_type === SLACK_METADATA_EVENT_TYPE && (m.metadata.event_payload as { marker?: unknown } | undefined)?.marker === claim.marker,
      );
      if (hit?.ts) return hit.ts;
      cursor = res.response_metadata?.next_cursor || undefined;
      if (!cursor) return null;
    }
    return null;
  }

  /**
   * Makes sure post `key` exists in Slack exactly once and is recorded; returns its ts. `channel` opens the
   * target channel (a new claim only), `render` builds the message from the thread as read.
   */
  async function ensurePosted(
    threadId: string,
    key: SlackPostKey,
    owner: string,
    target: { channel: () => Promise<string>; thread_ts: string | null },
    render: (thread: ThreadDoc) => Promise<SlackMessage>,
    known?: ThreadDoc,
  ): Promise<{ ts: string; posted: boolean; wrote: boolean; thread: ThreadDoc }> {
    let wrote = false;
    for (let round = 0; round < 5; round += 1) {
      // A thread read earlier in this job saves a read; any claim on it is re-read, and the claim write checks anyway.
      const thread = round === 0 && known && !known.slack_pending?.[key] ? known : await threads.readThread(threadId);
      if (!thread) throw new UnrecoverableError(`thread ${threadId} is gone`);
      const ts = recordedTs(thread, key);
      if (ts) return { ts, posted: false, wrote, thread };

      const pending = thread.slack_pending?.[key];
      let claim: SlackPendingPost | null;
      if (pending) {
        const age = clock.now().getTime() - pending.at.getTime();
        if (pending.owner !== owner && age < leaseMs) {
          throw new WaitAndRetry(Math.min(leaseMs - age, 1_000) + randomInt(250), `${key} is being posted by job ${pending.owner}`);
        }
        // Ours from an earlier attempt, or abandoned: did Slack get it before the poster stopped?
        const found = await findPosted(pending);
        if (found) {
          await ledger.record(threadId, key, { channel: pending.channel, ts: found, marker: pending.marker });
          wrote = true;
          log.info({ thread_id: threadId, post: key, ts: found }, 'slack post found by its marker and recorded');
          continue;
        }
        claim = await ledger.claim(threadId, key, { channel: pending.channel, thread_ts: pending.thread_ts, owner }, pending);
      } else {
        claim = await ledger.claim(threadId, key, { channel: await target.channel(), thread_ts: target.thread_ts, owner }, null);
      }
      if (!claim) continue; // Someone recorded, claimed or took it over meanwhile: look again.

      const message = await render(thread);
      let posted;
      try {
        posted = await client.chat.postMessage({
          channel: claim.channel,
          ...(claim.thread_ts ? { thread_ts: claim.thread_ts } : {}),
          ...message,
          metadata: metadata(threadId, key, claim.marker),
        });
      } catch (error) {
        // Slack said no (a 429 or an API error): nothing was posted, so the claim goes. On a lost answer
        // (network, 5xx) the claim stays and the next attempt looks the message up first.
        if (definitelyNotPosted(error)) await ledger.release(threadId, key, claim.lease);
        throw error;
      }
      if (!posted.ts) throw new Error('chat.postMessage returned no ts');
      await ledger.record(threadId, key, { channel: claim.channel, ts: posted.ts, marker: claim.marker });
      log.info({ thread_id: threadId, post: key, channel: claim.channel, ts: posted.ts }, 'slack message posted');
      return { ts: posted.ts, posted: true, wrote: true, thread };
    }
    throw new WaitAndRetry(500 + randomInt(500), `${key}: the thread kept changing while claiming`);
  }

  async function openIm(slackUser: string): Promise<string> {
    const opened = await client.conversations.open({ users: slackUser });
    const channel = opened.channel?.id;
    if (!channel) throw new Error('conversations.open returned no channel');
    return channel;
  }

  /** Posts every recorded message not yet under this DM, oldest first; each reply waits for the one before. */
  async function postReplies(thread: ThreadDoc, audience: SlackAudience, dm: SlackDelivery, owner: string): Promise<{ posted: number; wrote: boolean }> {
    const missing: number[] = [];
    for (let n = 1; n <= thread.message_seq; n += 1) if (!thread.slack_replies?.[replyKey(audience, n)]) missing.push(n);
    if (missing.length === 0) return { posted: 0, wrote: false };
    const messages = await threads.messagesBySequence(thread._id, missing);
    const authors = new Map<string, AgentDoc | null>();
    let posted = 0;
    let wrote = false;
    for (const message of messages) {
      if (!authors.has(message.from)) authors.set(message.from, await relay.teammates.get(message.from));
      const render = async () => threadReplyMessage({ message, author: authors.get(message.from) ?? null, inboxUrl: inboxUrlFor(thread, audience) });
      const target = { channel: async () => dm.channel, thread_ts: dm.ts };
      const result = await ensurePosted(thread._id, replyKey(audience, message.sequence_no), owner, target, render, thread);
      if (result.posted) posted += 1;
      if (result.wrote) wrote = true;
    }
    return { posted, wrote };
  }

  async function sync(threadId: string, owner: string): Promise<SlackDeliveryOutcome> {
    let latest = await threads.readThread(threadId);
    if (!latest) return 'skipped';
    const people = await participants(latest);
    const audiences = audiencesOf(people);
    if (audiences.length === 0) return 'skipped';
    // Re-read only after this job wrote something (or drew a DM); otherwise the first read is current enough.
    let wrote = false;
    const reread = async () => (wrote ? threads.readThread(threadId) : latest);

    // 1. The DMs. `fresh` remembers which state (outbox length) each DM shows, so it is not redrawn for nothing.
    const fresh = new Map<SlackAudience, number>();
    let anyPosted = false;
    for (const audience of audiences) {
      const target = { channel: () => openIm(audience.slackUser), thread_ts: null };
      const result = await ensurePosted(threadId, audience.name, owner, target, async (t) => renderDm(t, people, audience.name), latest);
      if (result.posted) {
        fresh.set(audience.name, result.thread.outbox.length);
        anyPosted = true;
      }
      if (result.wrote) wrote = true;
    }

    // 2. The replies, per DM in sequence order.
    latest = await reread();
    if (!latest) return 'skipped';
    for (const audience of audiences) {
      const dm = slackDm(latest, audience.name);
      if (!dm) throw new WaitAndRetry(1_000, `${audience.name} DM not recorded yet`);
      const replies = await postReplies(latest, audience.name, dm, owner);
      if (replies.posted > 0) anyPosted = true;
      if (replies.wrote) wrote = true;
    }

    // 3. Redraw each DM from the current thread, and again while the thread changes under us: after an
    // update this job re-reads, so a slower job that drew an older state is always followed by a newer one.
    let updated = false;
    for (let round = 0; round < 5; round += 1) {
      latest = await reread();
      if (!latest) break;
      const seen = latest.outbox.length;
      const stale = audiences.filter((a) => slackDm(latest!, a.name) && fresh.get(a.name) !== seen);
      if (stale.length === 0) break;
      const peopleNow = await participants(latest);
      for (const audience of stale) {
        const dm = slackDm(latest, audience.name)!;
        await client.chat.update({ channel: dm.channel, ts: dm.ts, ...renderDm(latest, peopleNow, audience.name) });
        fresh.set(audience.name, seen);
      }
      updated = wrote = true;
    }
    return anyPosted ? 'posted' : updated ? 'updated' : 'skipped';
  }

  return async function deliverToSlack(job: Job, token?: string): Promise<SlackDeliveryOutcome> {
    const parsed = eventJobSchema.safeParse(job.data);
    if (!parsed.success) throw new UnrecoverableError(`slack job ${job.id}: malformed data (${parsed.error.issues[0]?.message})`);
    const { thread_id: threadId, type } = parsed.data;
    try {
      const outcome = await sync(threadId, String(job.id));
      log.info({ thread_id: threadId, event: type, outcome }, 'slack delivery done');
      return outcome;
    } catch (error) {
      const waitMs = error instanceof WaitAndRetry ? error.ms : rateLimitedMs(error);
      if (waitMs !== null && token) {
        log.info({ thread_id: threadId, event: type, wait_ms: waitMs, reason: (error as Error).message }, 'slack delivery waits');
        await job.moveToDelayed(Date.now() + waitMs, token);
        throw new DelayedError();
      }
      const slackError = platformError(error);
      if (slackError && PERMANENT_SLACK_ERRORS.has(slackError)) {
        throw new UnrecoverableError(`slack job ${job.id}: Slack refused the message (${slackError})`);
      }
      throw error;
    }
  };
}

/** Retry-After of a 429 in ms (at least 1 s), or null for any other error. */
function rateLimitedMs(error: unknown): number | null {
  const e = error as { code?: unknown; retryAfter?: unknown };
  if (e?.code !== ErrorCode.RateLimitedError) return null;
  const seconds = typeof e.retryAfter === 'number' && Number.isFinite(e.retryAfter) ? e.retryAfter : 1;
  return Math.max(1, seconds) * 1_000;
}

function platformError(error: unknown): string | null {
  const e = error as { code?: unknown; data?: { error?: unknown } };
  return e?.code === ErrorCode.PlatformError && typeof e.data?.error === 'string' ? e.data.error : null;
}

/** Slack answered, and the answer was not ok: the message does not exist. (A network error or 5xx proves nothing.) */
function definitelyNotPosted(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return code === ErrorCode.RateLimitedError || code === ErrorCode.PlatformError;
}
