#!/usr/bin/env node
// The handoff-relay command line: `start` runs the relay (with local services when none are configured),
// `register` creates a teammate and prints its API key once with MCP client configuration.
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, loadClientConfig, loadConfig } from '../relay-core/config';
import { createLogger } from '../relay-core/logger';
import { ensureFerretDbBinary, ensureRedis, startFerretDb } from './local-services';
import { ADMIN_KEY_FILE, PEPPER_FILE, ensureSecret, readSecret } from './local-secrets';
import { mcpClientConfig } from './mcp-client-config';
import { startRelay } from './relay';

const USAGE = `Usage:
  handoff-relay start                      run the relay (every role unless RELAY_ROLES says otherwise)
  handoff-relay register --handle NAME@TEAM --name "Display name" --role ROLE
                         [--slack-user U0123456] [--skills a,b] [--repos apps/web/,docs/] [--tools git,npm]
                                           create a teammate; prints its API key once and MCP configuration
Environment: see README.md (PORT, HOST, MONGODB_URL, REDIS_URL, RELAY_ADMIN_KEY, SLACK_*, RELAY_URL, …)`;

const say = (line: string) => process.stderr.write(`${line}\n`);

async function start(): Promise<void> {
  const config = loadConfig(process.env);
  const log = createLogger(config.logLevel);
  const stops: Array<() => Promise<void>> = [];

  let mongodbUrl = config.mongodbUrl;
  if (!mongodbUrl) {
    const dataDir = resolve(config.dataDir, 'ferretdb');
    await ensureFerretDbBinary(say);
    const ferret = await startFerretDb({ dataDir, log: say });
    stops.push(() => ferret.stop());
    mongodbUrl = ferret.url;
    say(`FerretDB (SQLite under ${dataDir}) on ${ferret.url}`);
  }
  const redis = await ensureRedis(config.redisUrl, say);
  if (redis.started) stops.push(() => redis.stop());

  let adminKey = config.adminKey;
  if (!adminKey) {
    const secret = await ensureSecret(config.dataDir, ADMIN_KEY_FILE, 'hra_');
    adminKey = secret.value;
    say(`Admin key ${secret.created ? 'generated and stored' : 'read from'} ${join(resolve(config.dataDir), ADMIN_KEY_FILE)} (owner-only; set RELAY_ADMIN_KEY to use your own)`);
  }
  const keyPepper = config.keyPepper ?? (await ensureSecret(config.dataDir, PEPPER_FILE)).value;

  const relay = await startRelay({ config: { ...config, mongodbUrl, adminKey, keyPepper }, log });
  stops.unshift(() => relay.stop());
  const slack = config.slack ? `on (HTTP at ${config.publicUrl}/slack/events)` : 'off (set SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET)';
  say(`handoff-relay ${relay.url ? `listening on ${relay.url}` : 'running'} · roles: ${config.roles.join(',')} · Slack: ${slack}`);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    say(`${signal}: draining (no new requests or jobs; running ones finish) and stopping…`);
    // Past the grace period, exit anyway: a job cut short is taken up again by another worker (stalled-job recovery).
    setTimeout(() => {
      say(`still draining after ${config.shutdownGraceMs} ms (RELAY_SHUTDOWN_GRACE_MS); exiting with running work unfinished`);
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
    process.exit(failed ? 1 : 0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

async function register(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      handle: { type: 'string' },
      name: { type: 'string' },
      role: { type: 'string' },
      'slack-user': { type: 'string' },
      skills: { type: 'string' },
      repos: { type: 'string' },
      tools: { type: 'string' },
    },
    strict: true,
  });
  for (const required of ['handle', 'name', 'role'] as const) {
    if (!values[required]) throw new UsageError(`--${required} is required`);
  }
  const client = loadClientConfig(process.env);
  const adminKey = client.adminKey ?? (await readSecret(client.dataDir, ADMIN_KEY_FILE));
  if (!adminKey) {
    throw new UsageError(`RELAY_ADMIN_KEY is not set and ${join(client.dataDir, ADMIN_KEY_FILE)} does not exist (run \`npm start\` once, or set RELAY_ADMIN_KEY)`);
  }
  const list = (v: string | undefined) => (v ? v.split(',').map((s) => s.trim()).filter(Boolean) : undefined);
  const body = {
    handle: values.handle,
    name: values.name,
    role: values.role,
    slack_user_id: values['slack-user'],
    skills: list(values.skills),
    repos_owned: list(values.repos),
    tools: list(values.tools),
  };
  let response: Response;
  try {
    response = await fetch(`${client.relayUrl}/admin/agents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  } catch (error) {
    throw new UsageError(`cannot reach the relay at ${client.relayUrl} (${(error as Error).message}); is \`npm start\` running? (RELAY_URL)`);
  }
  const answer = (await response.json().catch(() => ({}))) as { api_key?: string; handle?: string; message?: string };
  if (!response.ok || !answer.api_key) {
    throw new UsageError(`the relay refused: ${answer.message ?? `HTTP ${response.status}`}`);
  }
  process.stdout.write(
    `Registered ${answer.handle}.\n\nAPI key (shown once, store it now):\n  ${answer.api_key}\n\n` +
      mcpClientConfig({
        relayUrl: client.relayUrl,
        apiKey: answer.api_key,
        handle: answer.handle!,
        // An absolute path to the built stdio server, so the entry works whatever directory the client starts it in.
        stdio: { command: 'node', args: [resolve(__dirname, '..', 'mcp', 'stdio.js')] },
      }),
  );
}

class UsageError extends Error {}

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  switch (command) {
    case 'start':
      return start();
    case 'register':
      return register(rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${USAGE}\n`);
      return;
    default:
      throw new UsageError(`unknown command "${command}"\n${USAGE}`);
  }
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof UsageError) {
    say(`handoff-relay: ${error.message}`);
  } else if (error instanceof TypeError && (error as NodeJS.ErrnoException).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    say(`handoff-relay: ${error.message}`);
  } else {
    say(`handoff-relay: ${(error as Error).message ?? String(error)}`);
  }
  process.exit(1);
});
