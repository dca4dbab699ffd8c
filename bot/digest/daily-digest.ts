// The daily digest's tick: a repeatable `verify` job that finds whose local digest hour has come and posts each
// due digest exactly once per person and local day (delivery/digest-post.ts).
import type { Job, Queue } from 'bullmq';
import type { WebClient } from '@slack/web-api';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Clock } from '../../relay-core/domain/clock';
import type { AgentDoc } from '../../relay-core/domain/documents';
import type { DigestTime } from '../../relay-core/ops/config';
import { LRUCache } from 'lru-cache';
import type { ListItem } from '../../relay-core/service/wire-views';
import type { Relay } from '../../relay-core/service/relay-service';
import type { EnsureDigestPosted } from '../delivery/digest-post';
import { slackErrorCode } from '../delivery/slack-errors';
import { dailyDigest } from '../views/daily-digest';
import type { DigestPrefs } from './digest-prefs';
import { digestDueDay } from './local-time';

// Who is due is decided from the relay's clock (injected: tests move it) and each linked person's Slack time zone
// (users.info, or users.list pages when many are unknown; cached for hours): a tick reads the Slack links and, of the
// teammates, only those due. The lists come from the indexed lists (relay.listThreads), never a scan.

export const DIGEST_TICK_JOB = 'slack-digest-tick';
/** The job scheduler that adds the tick (BullMQ runs an `every` scheduler once at once, then every interval). */
export const DIGEST_SCHEDULER_ID = 'slack-digest';
/** The key (under the verify queue's) set beside the schedule, so a Redis that lost it can be told. */
const DIGEST_SCHEDULED_MARKER = 'digest-scheduled';
/** How often the tick runs: a digest goes out within this long after the local hour. */
export const DIGEST_TICK_MS = 15 * 60_000;
const TZ_CACHE_MS = 6 * 3600_000;
/**
 * Past this many linked people whose time zone is not known (the first tick after a start, a team linked at once),
 * a tick learns them from users.list, 200 people a page, rather than one users.info call each: 10,000 people were
 * 10,000 calls one after another (Tier 4, about 100 a minute), so the last digests of a tick came over an hour late.
 */
const ZONES_BY_LIST_ABOVE = 50;
const USERS_LIST_PAGE = 200;
/** The most items read per list: the message shows the oldest that fit, and counts the rest. */
const LIST_CAP = 500;

export interface DigestDeps {
  links: Relay['links'];
  reads: Relay['reads'];
  teammates: Relay['teammates'];
  client: WebClient;
  prefs: DigestPrefs;
  ensurePosted: EnsureDigestPosted;
  clock: Clock;
  log: Logger;
  /** When the digest goes out (RELAY_DIGEST_AT, or the policy's team.digest_at), asked at each tick; null: the tick does nothing. */
  at: DigestTime | null | (() => DigestTime | null);
  /**
   * OAuth mode: the installed workspaces (SlackTokens.teams), each listed with its own token (users.list `team_id`):
   * a member list names no workspace by itself. Unset (one token): the token's own workspace.
   */
  teams?: () => Promise<string[]>;
}

/**
 * Starts (or, with the digest off, removes) the repeatable tick on the `verify` queue, and sets a marker key beside
 * it. Setting it up runs a tick at once, so it is done at start; with `onlyIfLost` (the worker's timer sweep), only
 * when the marker is gone: a Redis that came back empty lost the schedule with it, and digests would stop until the
 * next start. A schedule removed on purpose (the tests' own ticks) keeps its marker and stays removed.
 */
export async function scheduleDigestTick(
  queue: Queue,
  at: DigestTime | null,
  opts: { redis: Pick<Redis, 'exists' | 'set' | 'del'>; onlyIfLost?: boolean; everyMs?: number },
): Promise<void> {
  const marker = queue.toKey(DIGEST_SCHEDULED_MARKER);
  if (!at) {
    if (opts.onlyIfLost) return;
    await queue.removeJobScheduler(DIGEST_SCHEDULER_ID);
    await opts.redis.del(marker);
    return;
  }
  if (opts.onlyIfLost && (await opts.redis.exists(marker))) return;
  const tick = { name: DIGEST_TICK_JOB, data: {}, opts: { removeOnComplete: true, removeOnFail: { age: 24 * 3600 } } };
  await queue.upsertJobScheduler(DIGEST_SCHEDULER_ID, { every: opts.everyMs ?? DIGEST_TICK_MS }, tick);
  await opts.redis.set(marker, '1');
}

export function digestTickHandler(deps: DigestDeps) {
  const { links, reads, teammates, client, prefs, ensurePosted, clock, log } = deps;
  const zones = new LRUCache<string, string>({ max: 10_000, ttl: TZ_CACHE_MS });

  async function zoneOf(slackUser: string): Promise<string | null> {
    const cached = zones.get(slackUser);
    if (cached) return cached;
    try {
      const tz = (await client.users.info({ user: slackUser })).user?.tz;
      if (!tz) return null;
      zones.set(slackUser, tz);
      return tz;
    } catch (error) {
      log.warn(
        { slack_user: slackUser, err: slackErrorCode(error) ?? (error as Error).message },
        'digest: no time zone for this Slack user',
      );
      return null;
    }
  }

  /**
   * The time zones of `wanted` Slack users, from each installed workspace's member list (the token's own workspace with
   * one token); stops once all are found.
   */
  async function learnZones(wanted: Set<string>): Promise<void> {
    try {
      for (const team of deps.teams ? await deps.teams() : [undefined]) {
        let cursor: string | undefined;
        do {
          const page = await client.users.list({
            limit: USERS_LIST_PAGE,
            ...(team ? { team_id: team } : {}),
            ...(cursor ? { cursor } : {}),
          });
          for (const member of page.members ?? []) {
            if (member.id && member.tz && wanted.delete(member.id)) zones.set(member.id, member.tz);
          }
          cursor = page.response_metadata?.next_cursor || undefined;
        } while (cursor && wanted.size > 0);
        if (wanted.size === 0) return;
      }
    } catch (error) {
      // Those still unknown are asked one at a time, as for a few.
      log.warn(
        { err: slackErrorCode(error) ?? (error as Error).message },
        'digest: users.list failed; asking users.info person by person',
      );
    }
  }

  /** Every unclaimed (as a candidate), pending and accepted thread on one side, oldest first (pages of the list, newest first). */
  async function open(teammate: AgentDoc, role: 'recipient' | 'sender'): Promise<ListItem[]> {
    const items: ListItem[] = [];
    let cursor: string | undefined;
    do {
      const page = await reads.listThreads(teammate, {
        role,
        status: ['unclaimed', 'pending', 'accepted'],
        limit: 100,
        cursor,
      });
      items.push(...page.items);
      cursor = page.next_cursor ?? undefined;
    } while (cursor && items.length < LIST_CAP);
    return items.reverse();
  }

  async function digestFor(teammate: AgentDoc, slackUser: string, day: string): Promise<string> {
    return ensurePosted(
      `digest:${teammate.handle}:${day}`,
      async () => {
        const opened = await client.conversations.open({ users: slackUser });
        if (!opened.channel?.id) throw new Error('conversations.open returned no channel');
        return opened.channel.id;
      },
      async () => {
        // Asked again right before posting: a click on "turn off" since the tick began wins.
        if (await prefs.isOff(teammate.handle)) return null;
        const [waiting, sent] = await Promise.all([open(teammate, 'recipient'), open(teammate, 'sender')]);
        return dailyDigest({
          handle: teammate.handle,
          waiting,
          sent,
          inboxUrl: (id) => links.url(id, teammate.handle),
        });
      },
    );
  }

  return async function digestTick(_job: Job): Promise<{ due: number; outcomes: Record<string, string> }> {
    const outcomes: Record<string, string> = {};
    const at = typeof deps.at === 'function' ? deps.at() : deps.at;
    if (!at) return { due: 0, outcomes };
    const now = clock.now();
    let due = 0;
    // Everyone linked to Slack (one read), whose local digest hour has come; only they are read.
    const links = await teammates.slackLinks();
    const unknown = new Set(links.map((link) => link.slackUser).filter((user) => !zones.get(user)));
    if (unknown.size > ZONES_BY_LIST_ABOVE) await learnZones(unknown);
    for (const { slackUser, handle } of links) {
      const tz = await zoneOf(slackUser);
      const day = tz ? digestDueDay(now, tz, at) : null;
      if (!day) continue;
      const teammate = await teammates.get(handle);
      if (teammate?.slack_user_id !== slackUser || teammate.status !== 'active' || (await prefs.isOff(handle)))
        continue;
      due += 1;
      try {
        outcomes[teammate.handle] = await digestFor(teammate, slackUser, day);
      } catch (error) {
        // One person's failure is not everyone's: the next tick tries again (the ledger keeps it to one post).
        outcomes[teammate.handle] = 'failed';
        log.warn(
          { handle: teammate.handle, day, err: slackErrorCode(error) ?? (error as Error).message },
          'digest not posted; the next tick retries',
        );
      }
    }
    log.debug({ due, outcomes }, 'digest tick done');
    return { due, outcomes };
  };
}
