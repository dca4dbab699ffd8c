// Posts one Slack post of a thread (a DM, or one reply under it) exactly once, through the post ledger.
import { randomInt } from 'node:crypto';
import type { WebClient } from '@slack/web-api';
import { UnrecoverableError } from 'bullmq';
import type { Logger } from 'pino';
import type { Clock } from '../../relay-core/domain/clock';
import type { SlackPendingPost, ThreadDoc } from '../../relay-core/domain/documents';
import type { ThreadWriter } from '../../relay-core/domain/thread-writer';
import type { SlackMessage } from '../blocks/handoff-dm';
import { definitelyNotPosted } from './slack-errors';
import { SlackPostLedger, type Claimed } from './slack-post-ledger';
import { messageDigest, recordedTs, type SlackPostKey } from './slack-posts';
import { WaitAndRetry } from './wait-and-retry';

// Slack has no idempotency key, and a worker can die (or lose Slack's answer) after chat.postMessage and before
// the ts is recorded. So every post is claimed first, on the thread, in one versioned write (SlackPostLedger.claim):
// the claim holds a random marker that the message carries in its metadata (event_type "handoff_relay"). The ts is
// recorded afterwards, clearing the claim. A job that finds a claim without a ts — its own from an earlier attempt,
// or another job's older than CLAIM_LEASE_MS — first reads the DM channel back (conversations.history, or
// conversations.replies for a reply, with include_all_metadata) and records the message carrying the marker; only
// when Slack has no such message does it take the claim over (a compare-and-set on the claim's lease) and post. A
// claim younger than the lease held by another job means that job may be posting right now: this job waits instead.
// The remaining window is a post that Slack applies more than CLAIM_LEASE_MS after it was sent (the client times
// out after 10 s), which is why the lease is far longer than the request timeout.

/** How long another job's claim is trusted to be in flight before this job may look it up and take it over. */
export const CLAIM_LEASE_MS = 60_000;
/** How far before a claim the lookup reads back, for clock skew between the relay and Slack. */
const LOOKUP_MARGIN_MS = 10 * 60_000;
/** The message metadata type every post carries. */
export const SLACK_METADATA_EVENT_TYPE = 'handoff_relay';

export interface ExactlyOncePostDeps {
  threads: ThreadWriter;
  client: WebClient;
  log: Logger;
  clock: Clock;
  leaseMs: number;
}

/** Where a post goes: `channel` opens the target channel (asked for a new claim only), `thread_ts` for a reply. */
export interface PostTarget {
  channel: () => Promise<string>;
  thread_ts: string | null;
}

export interface PostOutcome {
  ts: string;
  /** This call posted it (false: it was recorded, or found in Slack by its marker). */
  posted: boolean;
  /** The thread as read for the post (what `render` drew). */
  thread: ThreadDoc;
  /** The thread as this call left it (its record), or as read when it wrote nothing: a `known` for the next call. */
  current: ThreadDoc;
}

/**
 * How a post reaches Slack when it is not a chat.postMessage (a streamed agent run's start, append or stop): given
 * where the claim says and what `render` drew, returns the ts to record. A Slack refusal is thrown as by the client.
 */
export type PostSender = (
  where: { channel: string; thread_ts: string | null },
  message: SlackMessage,
  metadata: { event_type: string; event_payload: Record<string, unknown> },
) => Promise<{ ts?: string | undefined }>;

/**
 * Makes sure post `key` exists in Slack exactly once and is recorded; returns its ts. `render` builds the message
 * from the thread as read; `known` is the thread as the job last had it from the port (a read, or an outcome's
 * `current`): the claim starts from it instead of reading the thread again.
 */
export type EnsurePosted = (
  threadId: string,
  key: SlackPostKey,
  owner: string,
  target: PostTarget,
  render: (thread: ThreadDoc) => Promise<SlackMessage>,
  known?: ThreadDoc,
  /** Instead of chat.postMessage (a stream's start, append or stop); not found by a marker, so a lost answer sends again. */
  send?: PostSender,
  /**
   * With `send`: how to know the post in Slack without its marker (a stream's start carries no metadata), so that a
   * lost answer is found by this instead of sent again. Given each message read back after the claim's time.
   */
  sentLike?: (message: ReadBack, thread: ThreadDoc) => boolean,
  /**
   * Reply keys that are this same message, recorded with it in one write: a stream's start is also its first
   * batch's reply, so no job reads the stream recorded and that batch not (and appends it a second time).
   */
  alsoAs?: readonly SlackPostKey[],
) => Promise<PostOutcome>;

/** A message as conversations.history / replies return it (what sentLike may look at). */
export interface ReadBack {
  ts?: string | undefined;
  text?: string | undefined;
  bot_id?: string | undefined;
  metadata?: { event_type?: string | undefined } | undefined;
}

export function exactlyOncePost(deps: ExactlyOncePostDeps): EnsurePosted {
  const { threads, client, log, clock, leaseMs } = deps;
  const ledger = new SlackPostLedger({ threads, clock });

  function metadata(threadId: string, key: SlackPostKey, marker: string) {
    return { event_type: SLACK_METADATA_EVENT_TYPE, event_payload: { thread_id: threadId, kind: key, marker } };
  }

  /** The ts of the message carrying `claim.marker` (or, without one, that `like` knows), if Slack has it. */
  async function findPosted(claim: SlackPendingPost, like?: (m: ReadBack) => boolean): Promise<string | null> {
    const oldest = ((claim.claimed_at.getTime() - LOOKUP_MARGIN_MS) / 1000).toFixed(6);
    let cursor: string | undefined;
    for (let page = 0; page < 20; page += 1) {
      const query = { channel: claim.channel, oldest, inclusive: true, include_all_metadata: true, limit: 200, cursor };
      const res = claim.thread_ts
        ? await client.conversations.replies({ ...query, ts: claim.thread_ts })
        : await client.conversations.history(query);
      const hit = res.messages?.find(
        (m) =>
          (m.metadata?.event_type === SLACK_METADATA_EVENT_TYPE &&
            (m.metadata.event_payload as { marker?: unknown } | undefined)?.marker === claim.marker) ||
          (like !== undefined &&
            m.ts !== undefined &&
            Number(m.ts) * 1000 >= claim.claimed_at.getTime() - LOOKUP_MARGIN_MS &&
            like(m)),
      );
      if (hit?.ts) return hit.ts;
      cursor = res.response_metadata?.next_cursor || undefined;
      if (!cursor) return null;
    }
    return null;
  }

  return async function ensurePosted(threadId, key, owner, target, render, known, send, sentLike, alsoAs = []) {
    for (let round = 0; round < 5; round += 1) {
      // A thread read earlier in this job saves a read; any claim on it is re-read, and the claim write checks anyway.
      const thread = round === 0 && known && !known.slack_pending?.[key] ? known : await threads.readThread(threadId);
      if (!thread) throw new UnrecoverableError(`thread ${threadId} is gone`);
      const ts = recordedTs(thread, key);
      if (ts) return { ts, posted: false, thread, current: thread };

      const pending = thread.slack_pending?.[key];
      let claimed: Claimed | null;
      if (pending) {
        const age = clock.now().getTime() - pending.at.getTime();
        if (pending.owner !== owner && age < leaseMs) {
          throw new WaitAndRetry(
            Math.min(leaseMs - age, 1_000) + randomInt(250),
            `${key} is being posted by job ${pending.owner}`,
          );
        }
        // Ours from an earlier attempt, or abandoned: did Slack get it before the poster stopped?
        const found = await findPosted(pending, sentLike && ((m) => sentLike(m, thread)));
        if (found) {
          await ledger.record(
            threadId,
            key,
            { channel: pending.channel, ts: found, marker: pending.marker },
            thread,
            alsoAs,
          );
          log.info({ thread_id: threadId, post: key, ts: found }, 'slack post found by its marker and recorded');
          continue;
        }
        claimed = await ledger.claim(
          threadId,
          key,
          { channel: pending.channel, thread_ts: pending.thread_ts, owner },
          pending,
          thread,
        );
      } else {
        claimed = await ledger.claim(
          threadId,
          key,
          { channel: await target.channel(), thread_ts: target.thread_ts, owner },
          null,
          thread,
        );
      }
      if (!claimed) continue; // Someone recorded, claimed or took it over meanwhile: look again.
      const claim = claimed.post;

      const message = await render(thread);
      let posted;
      try {
        posted = send
          ? await send(
              { channel: claim.channel, thread_ts: claim.thread_ts },
              message,
              metadata(threadId, key, claim.marker),
            )
          : await client.chat.postMessage({
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
      const recorded = await ledger.record(
        threadId,
        key,
        { channel: claim.channel, ts: posted.ts, marker: claim.marker, shown: messageDigest(message) },
        claimed.thread,
        alsoAs,
      );
      log.info({ thread_id: threadId, post: key, channel: claim.channel, ts: posted.ts }, 'slack message posted');
      return {
        ts: posted.ts,
        posted: true,
        thread,
        current: recorded ?? (await threads.readThread(threadId)) ?? thread,
      };
    }
    throw new WaitAndRetry(500 + randomInt(500), `${key}: the thread kept changing while claiming`);
  };
}
