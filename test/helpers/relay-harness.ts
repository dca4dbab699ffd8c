// Starts a real relay in this process for one test file: its own database and queue prefix, on FerretDB and Redis.
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Clock } from '../../relay-core/domain/clock';
import { loadConfig, type RelayConfig } from '../../relay-core/ops/config';
import { createLogger } from '../../relay-core/ops/logger';
import { findFreePort } from '../../scripts/local-services/ports';
import { startRelay, type RunningRelay } from '../../scripts/relay';
import type { FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { testMongoUrl, testRedisUrl, uniqueName } from './test-env';
import { queuePrefix, recordQueuePrefix } from './queue-keys';

export interface TestRelay extends RunningRelay {
  adminKey: string;
  signingSecret: string;
  /** As loaded, with the queue prefix the relay uses. */
  config: RelayConfig & { queuePrefix: string };
  /** The relay's log lines so far, parsed (only with `captureLogs`, at debug level). */
  logs: Array<Record<string, unknown>>;
  /** Registers a teammate through POST /admin/agents and returns its raw API key. */
  register(card: {
    handle: string;
    name?: string;
    role?: string;
    slack_user_id?: string;
    skills?: string[];
    repos_owned?: string[];
    lead?: string;
  }): Promise<string>;
  /** One JSON-RPC call to /a2a; returns the HTTP status and the parsed body. */
  rpc(
    apiKey: string | undefined,
    method: string,
    params?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: any }>;
  /** One REST call (JSON body when given, bearer key when given); returns the HTTP status and the parsed body. */
  rest(method: string, path: string, key: string | undefined, body?: unknown): Promise<{ status: number; body: any }>;
}

export async function startTestRelay(opts: {
  name: string;
  slack?: FakeSlack;
  env?: Record<string, string>;
  captureLogs?: boolean;
  /** The relay's clock (a TestClock to move time); the system clock by default. */
  clock?: Clock;
  /** The earlier relays' default queue prefix, for a relay started with RELAY_QUEUE_PREFIX unset (env: ''). */
  legacyQueuePrefix?: string;
}): Promise<TestRelay> {
  const port = await findFreePort();
  const adminKey = `hra_${randomBytes(24).toString('base64url')}`;
  const signingSecret = randomBytes(16).toString('hex');
  const env: Record<string, string> = {
    PORT: String(port),
    MONGODB_URL: testMongoUrl(),
    MONGODB_DB: uniqueName(opts.name),
    REDIS_URL: testRedisUrl(),
    RELAY_QUEUE_PREFIX: queuePrefix(opts.name),
    RELAY_ADMIN_KEY: adminKey,
    RELAY_KEY_PEPPER: randomBytes(32).toString('hex'),
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    // The daily Slack digest would DM whoever is past 09:30 local at start; tests that want it set it.
    RELAY_DIGEST_AT: 'off',
    ...(opts.slack
      ? { SLACK_BOT_TOKEN: opts.slack.token, SLACK_SIGNING_SECRET: signingSecret, SLACK_API_URL: opts.slack.url }
      : {}),
    ...opts.env,
  };
  const config = loadConfig(env);
  const logs: Array<Record<string, unknown>> = [];
  const capture = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const running = await startRelay({
    config: { ...config, mongodbUrl: config.mongodbUrl!, adminKey, keyPepper: config.keyPepper! },
    log: opts.captureLogs ? createLogger('debug', capture) : createLogger(config.logLevel, 2),
    sweepIntervalMs: 500,
    clock: opts.clock,
    legacyQueuePrefix: opts.legacyQueuePrefix,
  });
  // A prefix the relay chose (RELAY_QUEUE_PREFIX unset) has its keys removed after the file too.
  if (!config.queuePrefix) recordQueuePrefix(running.queuePrefix);

  async function rpc(
    apiKey: string | undefined,
    method: string,
    params?: unknown,
    headers: Record<string, string> = {},
  ) {
    const response = await fetch(`${running.url}/a2a`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
        ...headers,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    return { status: response.status, body: await response.json() };
  }

  async function register(card: Parameters<TestRelay['register']>[0]): Promise<string> {
    const response = await fetch(`${running.url}/admin/agents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminKey}` },
      body: JSON.stringify({ name: card.handle.split('@')[0], role: 'engineer', ...card }),
    });
    const body = (await response.json()) as { api_key?: string; message?: string };
    if (response.status !== 201 || !body.api_key)
      throw new Error(`register ${card.handle} failed: ${response.status} ${body.message}`);
    return body.api_key;
  }

  async function rest(method: string, path: string, key: string | undefined, body?: unknown) {
    const response = await fetch(`${running.url}${path}`, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as any };
  }

  return {
    ...running,
    adminKey,
    signingSecret,
    config: { ...config, queuePrefix: running.queuePrefix },
    logs,
    register,
    rpc,
    rest,
  };
}

/** The signed inbox link a participant gets for a thread: `<relay>/inbox/<id>?as=<viewer>&sig=<hmac>`. */
export function inboxUrlOf(relayUrl: string, threadId: string, viewer: string): unknown {
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return expect.stringMatching(
    new RegExp(`^${escape(`${relayUrl}/inbox/${threadId}?as=${encodeURIComponent(viewer)}&sig=`)}[\\w-]{43}$`),
  );
}
