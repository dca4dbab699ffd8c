// `handoff-relay start` (and the local Slack, which starts the same relay wired to a fake Slack): local services when
// none are configured, generated secrets, the relay, and a drain on SIGTERM.
import { join, resolve } from 'node:path';
import { loadConfig, type RelayConfig } from '../relay-core/ops/config';
import { createLogger } from '../relay-core/ops/logger';
import { bindPort } from './bind-port';
import { ensureFerretDbBinary } from './local-services/ferretdb-build';
import { startFerretDb } from './local-services/ferretdb';
import { keepRunning } from './local-services/keep-running';
import { ensureRedis } from './local-services/redis';
import { ADMIN_KEY_FILE, PEPPER_FILE, ensureSecret } from './local-secrets';
import type { RunningRelay } from './relay';

/**
 * MONGODB_URL, or the embedded FerretDB under the data directory (started now; its stop is pushed on `stops`). With
 * `onGiveUp`, a FerretDB that dies is started again on the same port and data (keep-running.ts).
 */
export async function storeUrl(
  config: RelayConfig,
  stops: Array<() => Promise<void>>,
  say: (line: string) => void,
  onGiveUp?: (reason: string) => void,
): Promise<string> {
  if (config.mongodbUrl) return config.mongodbUrl;
  const dataDir = resolve(config.dataDir, 'ferretdb');
  await ensureFerretDbBinary(say);
  const ferret = await startFerretDb({ dataDir, log: say });
  if (onGiveUp) {
    const again = () => startFerretDb({ dataDir, port: ferret.port, log: say });
    const kept = keepRunning(ferret, again, {
      name: 'FerretDB',
      where: `127.0.0.1:${ferret.port}`,
      log: say,
      onGiveUp,
    });
    stops.push(() => kept.stop());
  } else {
    stops.push(() => ferret.stop());
  }
  say(`FerretDB (SQLite under ${dataDir}) on ${ferret.url}`);
  return ferret.url;
}

export interface StartCommandOptions {
  env: NodeJS.ProcessEnv;
  /** Where the lines a person reads go (stderr). */
  say: (line: string) => void;
  /** Stopped after the relay and before its local services (the local Slack page, say). */
  alsoStop?: Array<() => Promise<void>>;
}

/**
 * `handoff-relay start`: the store (MONGODB_URL, or FerretDB started here), Redis (started here when none answers),
 * the admin key and pepper (generated under the data dir when unset), the relay, and a drain on SIGTERM / SIGINT.
 */
export async function startCommand({
  env,
  say,
  alsoStop = [],
}: StartCommandOptions): Promise<{ relay: RunningRelay; config: RelayConfig }> {
  const config = loadConfig(env);
  // The relay's code loads only once the settings are good (a bad one stops start-up with its line at once), and
  // meanwhile the local services start.
  const relayModule = import('./relay.js');
  relayModule.catch(() => {}); // awaited below; a start-up that fails before then reports its own error
  const log = createLogger(config.logLevel);
  const stops: Array<() => Promise<void>> = [];
  let stopping = false;
  // A local service that dies and cannot be started again stops the relay, rather than leave it answering errors.
  const gaveUp = (reason: string) => void shutdown(`${reason}; stopping the relay`, 1);

  // The port first: a second relay on it stops here, before it starts a FerretDB or touches Redis.
  const server = await bindPort(config.host, config.port);
  const mongodbUrl = await storeUrl(config, stops, say, gaveUp);
  // A redis-server started here keeps its jobs in .data/redis: deliveries and retries waiting survive it.
  const redis = await ensureRedis(config.redisUrl, say, { dataDir: resolve(config.dataDir, 'redis') });
  if (redis.started) {
    const kept = keepRunning(redis, redis.startAgain, {
      name: 'redis-server',
      where: redis.where,
      log: say,
      onGiveUp: gaveUp,
    });
    stops.push(() => kept.stop());
  }

  let adminKey = config.adminKey;
  if (!adminKey) {
    const secret = await ensureSecret(config.dataDir, ADMIN_KEY_FILE, 'hra_');
    adminKey = secret.value;
    say(
      `Admin key ${secret.created ? 'generated and stored' : 'read from'} ${join(resolve(config.dataDir), ADMIN_KEY_FILE)} (owner-only; set RELAY_ADMIN_KEY to use your own)`,
    );
  }
  const keyPepper = config.keyPepper ?? (await ensureSecret(config.dataDir, PEPPER_FILE)).value;

  const { startRelay } = await relayModule;
  const relay = await startRelay({ config: { ...config, mongodbUrl, adminKey, keyPepper }, log, server });
  stops.unshift(() => relay.stop(), ...alsoStop);
  const slack = config.slack
    ? config.slack.oauth
      ? `on, any workspace (install at ${config.publicUrl}/slack/install; HTTP at ${config.publicUrl}/slack/events)`
      : `on (HTTP at ${config.publicUrl}/slack/events)`
    : 'off (set SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET, or SLACK_CLIENT_ID, SLACK_CLIENT_SECRET and SLACK_STATE_SECRET)';

  async function shutdown(why: string, exitCode = 0): Promise<void> {
    if (stopping) return;
    stopping = true;
    say(`${why}: draining (no new requests or jobs; running ones finish) and stopping…`);
    // Past the grace period, exit anyway: a job cut short is taken up again by another worker (stalled-job recovery).
    setTimeout(() => {
      say(
        `still draining after ${config.shutdownGraceMs} ms (RELAY_SHUTDOWN_GRACE_MS); exiting with running work unfinished`,
      );
      process.exit(1);
    }, config.shutdownGraceMs).unref();
    let failed = false;
    for (const stop of stops) {
      await stop().catch((error: Error) => {
        failed = true;
        say(`stop failed: ${error.message}`);
      });
    }
    await new Promise<void>((resolve) => log.flush(() => resolve()));
    process.exit(failed ? 1 : exitCode);
  }
  // The drain is in place before the relay says it serves: a SIGTERM sent on that line (a supervisor, a test) would
  // otherwise meet Node's default action and kill the relay without stopping its FerretDB.
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  say(
    `handoff-relay ${relay.url ? `listening on ${relay.url}` : 'running'} · roles: ${config.roles.join(',')} · queues: ${relay.queuePrefix} · Slack: ${slack}`,
  );
  return { relay, config };
}
