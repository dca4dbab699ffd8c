// Posts one person's digest of one local day exactly once, through a ledger of `_id`-addressed inserts.
import { randomUUID } from 'node:crypto';
import type { WebClient } from '@slack/web-api';
import type { Collection } from 'mongodb';
import type { Logger } from 'pino';
import type { Clock } from '../../relay-core/domain/clock';
import { isDuplicateKey } from '../../relay-core/store/thread-writes';
import type { SlackMessage } from '../blocks/block-kit';
import { CLAIM_LEASE_MS, SLACK_METADATA_EVENT_TYPE } from './exactly-once-post';

// The same protocol as a thread's posts (exactly-once-post.ts), with inserts only, since FerretDB has no atomic
// update: the day's record `<key>` (posted or skipped) and claims `<key>#0`, `<key>#1`… Inserting an `_id` is atomic
// on every server, so one poster wins each claim and the first record wins. A claim younger than the lease may be
// posting right now: leave it. An older one (its poster stopped, or lost Slack's answer) is looked up first by its
// marker in the DM (conversations.history with include_all_metadata); only when Slack has no message carrying any
// claim's marker does the next claim go in and post.

export interface DigestPostDoc {
  _id: string;
  at: Date;
  /** A claim: the marker its message carries, and where it went. */
  marker?: string;
  /** Wall-clock time of the claim: Slack's ts are wall-clock, while `at` is the relay's (injectable) clock. */
  sent_at?: Date;
  channel?: string;
  /** The record: the posted message, or that there was nothing to post. */
  ts?: string;
  skipped?: boolean;
}

export type DigestPostOutcome = 'posted' | 'found' | 'already' | 'skipped' | 'busy';

const LOOKUP_MARGIN_MS = 10 * 60_000;
const MAX_CLAIMS = 20;

export interface DigestPostDeps {
  docs: Collection<DigestPostDoc>;
  client: WebClient;
  clock: Clock;
  log: Logger;
  leaseMs?: number;
}

export function digestPoster(deps: DigestPostDeps) {
  const { docs, client, clock, log } = deps;
  const leaseMs = deps.leaseMs ?? CLAIM_LEASE_MS;

  async function insert(doc: DigestPostDoc): Promise<boolean> {
    try {
      await docs.insertOne(doc);
      return true;
    } catch (error) {
      if (isDuplicateKey(error)) return false;
      throw error;
    }
  }

  async function findByMarkers(channel: string, since: Date, markers: Set<string>): Promise<string | null> {
    const oldest = ((since.getTime() - LOOKUP_MARGIN_MS) / 1000).toFixed(6);
    let cursor: string | undefined;
    for (let page = 0; page < 10; page += 1) {
      const res = await client.conversations.history({
        channel,
        oldest,
        inclusive: true,
        include_all_metadata: true,
        limit: 200,
        cursor,
      });
      const hit = res.messages?.find((m) => {
        const marker = (m.metadata?.event_payload as { marker?: unknown } | undefined)?.marker;
        return (
          m.metadata?.event_type === SLACK_METADATA_EVENT_TYPE && typeof marker === 'string' && markers.has(marker)
        );
      });
      if (hit?.ts) return hit.ts;
      cursor = res.response_metadata?.next_cursor || undefined;
      if (!cursor) return null;
    }
    return null;
  }

  /**
   * Makes sure digest `key` is posted once to the DM `channel()` opens (or recorded as skipped when `render` has
   * nothing to say). 'busy': another poster holds a fresh claim; the next tick looks again.
   */
  return async function ensureDigestPosted(
    key: string,
    channel: () => Promise<string>,
    render: () => Promise<SlackMessage | null>,
  ): Promise<DigestPostOutcome> {
    if (await docs.findOne({ _id: key })) return 'already';
    const claims: DigestPostDoc[] = [];
    for (let n = 0; n < MAX_CLAIMS; n += 1) {
      const claim = await docs.findOne({ _id: `${key}#${n}` });
      if (!claim) break;
      claims.push(claim);
    }
    const now = clock.now();
    const latest = claims.at(-1);
    if (latest && now.getTime() - latest.at.getTime() < leaseMs) return 'busy';
    if (latest?.channel) {
      const found = await findByMarkers(
        latest.channel,
        claims[0]!.sent_at ?? claims[0]!.at,
        new Set(claims.map((c) => c.marker!)),
      );
      if (found) {
        await insert({ _id: key, at: now, channel: latest.channel, ts: found });
        log.info({ digest: key, ts: found }, 'digest found by its marker and recorded');
        return 'found';
      }
    }
    const message = await render();
    if (!message) {
      await insert({ _id: key, at: now, skipped: true });
      return 'skipped';
    }
    if (claims.length >= MAX_CLAIMS)
      throw new Error(`digest ${key}: ${MAX_CLAIMS} claims and no post; giving up for today`);
    const claim: DigestPostDoc = {
      _id: `${key}#${claims.length}`,
      at: now,
      sent_at: new Date(),
      marker: randomUUID(),
      channel: await channel(),
    };
    if (!(await insert(claim))) return 'busy';
    const posted = await client.chat.postMessage({
      channel: claim.channel!,
      ...message,
      metadata: {
        event_type: SLACK_METADATA_EVENT_TYPE,
        event_payload: { kind: 'digest', digest: key, marker: claim.marker! },
      },
    });
    if (!posted.ts) throw new Error('chat.postMessage returned no ts');
    await insert({ _id: key, at: clock.now(), channel: claim.channel!, ts: posted.ts });
    log.info({ digest: key, channel: claim.channel, ts: posted.ts }, 'digest posted');
    return 'posted';
  };
}

export type EnsureDigestPosted = ReturnType<typeof digestPoster>;
