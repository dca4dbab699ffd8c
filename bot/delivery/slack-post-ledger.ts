// The Slack post ledger: claims, releases and records each Slack post on its thread through the ThreadWriter port.
import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../../relay-core/domain/clock';
import type { SlackPendingPost, ThreadDoc } from '../../relay-core/domain/documents';
import type { ThreadWriter } from '../../relay-core/domain/thread-writer';
import {
  earlierRepliesRecorded,
  recordedTs,
  withClaim,
  withoutClaim,
  withRecord,
  type SlackPostKey,
} from './slack-posts';

// Every step is one versioned write; the pure rules it applies are in slack-posts.ts. Each takes the thread as the
// caller last had it from the port (`from`), so the write need not read it first, and returns the thread it wrote.

/** A claim made: the pending post, and the thread that holds it. */
export interface Claimed {
  post: SlackPendingPost;
  thread: ThreadDoc;
}

export interface SlackPostLedgerDeps {
  threads: ThreadWriter;
  clock?: Clock;
}

export class SlackPostLedger {
  private readonly threads: ThreadWriter;
  private readonly clock: Clock;

  constructor(deps: SlackPostLedgerDeps) {
    this.threads = deps.threads;
    this.clock = deps.clock ?? systemClock;
  }

  /**
   * Claims Slack post `key` for `owner` before it is sent: a new claim when `takeOver` is null, else the
   * replacement of exactly that claim (same marker, new lease). Null when the post is recorded, someone else
   * holds or changed the claim, or (for a reply) an earlier reply under the same DM is not recorded yet.
   */
  async claim(
    threadId: string,
    key: SlackPostKey,
    target: { channel: string; thread_ts: string | null; owner: string },
    takeOver: SlackPendingPost | null,
    from?: ThreadDoc,
  ): Promise<Claimed | null> {
    const now = this.clock.now();
    let claim: SlackPendingPost | null = null;
    const { after } = await this.threads.writeThread(
      threadId,
      (doc) => {
        claim = null;
        const pending = doc.slack_pending?.[key];
        if (recordedTs(doc, key) !== null || !earlierRepliesRecorded(doc, key)) return undefined;
        if (takeOver ? pending?.lease !== takeOver.lease : pending) return undefined;
        claim = {
          marker: takeOver?.marker ?? randomUUID(),
          lease: randomUUID(),
          ...target,
          claimed_at: takeOver?.claimed_at ?? now,
          at: now,
        };
        return withClaim(doc, key, claim);
      },
      from,
    );
    const made = claim as SlackPendingPost | null; // assigned by the change above
    return made && after ? { post: made, thread: after } : null;
  }

  /** Gives a claim up after Slack refused the post (nothing was posted); false when the claim had changed. */
  async release(threadId: string, key: SlackPostKey, lease: string): Promise<boolean> {
    const { after } = await this.threads.writeThread(threadId, (doc) => withoutClaim(doc, key, lease));
    return after !== null;
  }

  /**
   * Records a posted message (the first record wins; `shown`: its messageDigest) and clears the claim with the same
   * marker; the thread as recorded, or null when it was recorded already.
   */
  async record(
    threadId: string,
    key: SlackPostKey,
    post: { channel: string; ts: string; marker?: string; shown?: string },
    from?: ThreadDoc,
    /** Reply keys that are the same message, recorded in the same write (a stream's start is its first batch). */
    alsoAs: readonly SlackPostKey[] = [],
  ): Promise<ThreadDoc | null> {
    const at = this.clock.now();
    const { after } = await this.threads.writeThread(threadId, (doc) => withRecord(doc, key, post, at, alsoAs), from);
    return after;
  }
}
