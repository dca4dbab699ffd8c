// Which key prefix the relay's queues use in Redis: RELAY_QUEUE_PREFIX, else the one its database chose on first start.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { MongoStore } from '../store/mongo-store';
import { QUEUE_NAMES } from './bullmq-queues';

/** What every relay used when RELAY_QUEUE_PREFIX was unset, before the default was made per database. */
export const LEGACY_QUEUE_PREFIX = 'handoff';

/** The `meta` document holding the prefix a database chose (MongoStore.settle). */
const PREFIX_KEY = 'queue_prefix';

export type QueuePrefixSource = 'setting' | 'database' | 'legacy';

/**
 * The default for a database: `handoff-` and 12 hex digits of its identity (a UUID made on its first start). Every
 * process and every start of one relay agrees on it, whatever URL each reaches the database by (the embedded
 * FerretDB's port changes at every start, a URL carries credentials and host lists), and two relays with their own
 * databases never share queues on one Redis.
 */
export function databaseQueuePrefix(identity: string): string {
  return `${LEGACY_QUEUE_PREFIX}-${identity.replace(/-/g, '').slice(0, 12)}`;
}

/**
 * The queue prefix: RELAY_QUEUE_PREFIX as set; else the one the database chose, which is decided once and stored:
 * its own (databaseQueuePrefix), except for a database an earlier relay served while Redis still holds keys under
 * that relay's default (`handoff`): its jobs (deliveries and retries waiting, timers days away) are there, and a
 * relay upgraded in place keeps them, saying how to move.
 */
export async function resolveQueuePrefix(opts: {
  setting: string | undefined;
  store: Pick<MongoStore, 'identity' | 'settle' | 'servedBefore'>;
  /** Resolves once the connection is ready (or gave up waiting): only an upgraded database needs it. */
  redis: () => Promise<Pick<Redis, 'exists'>>;
  log: Logger;
  /** The earlier default (tests name their own, so as not to touch a relay running on this Redis). */
  legacyPrefix?: string;
}): Promise<{ prefix: string; source: QueuePrefixSource }> {
  if (opts.setting) return { prefix: opts.setting, source: 'setting' };
  const legacy = opts.legacyPrefix ?? LEGACY_QUEUE_PREFIX;
  const own = databaseQueuePrefix(await opts.store.identity());
  const prefix = await opts.store.settle(PREFIX_KEY, async () =>
    (await heldByEarlierRelay(opts, legacy)) ? legacy : own,
  );
  if (prefix === legacy) {
    opts.log.warn(
      { queue_prefix: prefix, own_prefix: own },
      `queues stay under "${legacy}", the default of earlier relays: this database was served before and Redis held jobs there. Two relays on this Redis without RELAY_QUEUE_PREFIX share it; to move, set RELAY_QUEUE_PREFIX=${own} once the queues under "${legacy}" are empty (GET /admin/queues)`,
    );
  }
  return { prefix, source: prefix === own ? 'database' : 'legacy' };
}

/**
 * Whether an earlier relay served this database under the old default: it holds teammates or threads, and Redis
 * holds that prefix's queue or marker keys. Redis unreachable counts as yes: keeping where the jobs were loses none.
 */
async function heldByEarlierRelay(opts: Parameters<typeof resolveQueuePrefix>[0], legacy: string): Promise<boolean> {
  if (!(await opts.store.servedBefore())) return false;
  const keys = [
    ...QUEUE_NAMES.map((name) => `${legacy}:${name}:meta`),
    `${legacy}:timers:armed`,
    `${legacy}:webhooks:requeued`,
  ];
  try {
    return (await (await opts.redis()).exists(...keys)) > 0;
  } catch {
    return true;
  }
}
