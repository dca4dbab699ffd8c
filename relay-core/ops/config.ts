// Configuration: the only place that reads the environment. Bad settings fail with one line naming the variable.
import { z } from 'zod';
import {
  DIGEST_TIME_MESSAGE,
  parseDigestTime,
  parseWorkingHours,
  TIMER_DURATION_MESSAGE,
  TIMER_DURATION_RANGE,
  WEEKDAYS,
  WORKING_HOURS_MESSAGE,
  type DigestTime,
} from '../domain/team-settings';
import { durationSchema, parseDuration } from '../domain/duration';

export type { DigestTime } from '../domain/team-settings';

/** `250` (a bare number is ms), `250ms`, `5s`, `30m`, `2h`: from 0 to a day. */
const SHORT_DURATION = { min: 0, max: 86_400_000, bareMs: true } as const;

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const ROLES = ['api', 'worker', 'bot'] as const;
export type Role = (typeof ROLES)[number];

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

const port = z.coerce.number().int().min(0).max(65535);
const httpUrl = z.url({ protocol: /^https?$/ });

/** The relay's environment: every variable it reads, its check and its default (docs/configuration.md documents each). */
export const envSchema = z.object({
  PORT: port.default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  RELAY_PUBLIC_URL: httpUrl.optional(),
  MONGODB_URL: z
    .string()
    .regex(/^mongodb(\+srv)?:\/\//, 'must start with mongodb:// or mongodb+srv://')
    .optional(),
  MONGODB_DB: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,38}$/, 'must be a database name of letters, digits, _ and -')
    .default('handoff_relay'),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must start with redis:// or rediss://')
    .default('redis://127.0.0.1:6379'),
  // Unset: the database's own prefix (queues/queue-prefix.ts).
  RELAY_QUEUE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,40}$/, 'must be letters, digits, _ and -')
    .optional(),
  RELAY_ROLES: z
    .string()
    .default('api,worker,bot')
    .transform((value, ctx) => {
      const roles = value
        .split(',')
        .map((r) => r.trim())
        .filter(Boolean);
      const unknown = roles.filter((r) => !(ROLES as readonly string[]).includes(r));
      if (roles.length === 0 || unknown.length > 0) {
        ctx.addIssue({ code: 'custom', message: `must be a comma-separated subset of ${ROLES.join(',')}` });
        return z.NEVER;
      }
      return [...new Set(roles)] as Role[];
    }),
  RELAY_ADMIN_KEY: z.string().min(24, 'must be at least 24 characters').optional(),
  RELAY_KEY_PEPPER: z.string().min(32, 'must be at least 32 characters').optional(),
  RELAY_DATA_DIR: z.string().min(1).default('.data'),
  RELAY_TEAM: z
    .string()
    .regex(/^[A-Za-z0-9._-]+$/, 'must be letters, digits, ".", "_" and "-"')
    .optional(),
  SLACK_BOT_TOKEN: z
    .string()
    .regex(/^xox[bp]-/, 'must be a bot token starting with xoxb-')
    .optional(),
  SLACK_SIGNING_SECRET: z.string().min(8, 'must be the app signing secret').optional(),
  SLACK_APP_TOKEN: z
    .string()
    .regex(/^xapp-/, 'must be an app-level token starting with xapp-')
    .optional(),
  SLACK_API_URL: httpUrl.optional(),
  SLACK_CLIENT_ID: z
    .string()
    .regex(/^\d+\.\d+$/, 'must be the app Client ID (digits.digits, Basic Information → App Credentials)')
    .optional(),
  SLACK_CLIENT_SECRET: z.string().min(8, 'must be the app Client Secret').optional(),
  SLACK_STATE_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  RELAY_POLICY_FILE: z.string().min(1).optional(),
  RELAY_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(600),
  RELAY_REDEEM_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(60),
  RELAY_SIGN_IN_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(30),
  RELAY_WEB_SESSION_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 90)
    .default(24 * 7),
  RELAY_METRICS_TOKEN: z.string().min(24, 'must be at least 24 characters').optional(),
  RELAY_WORKER_LOCK_MS: z.coerce.number().int().min(500).max(600_000).default(30_000),
  RELAY_SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(3_600_000).default(25_000),
  LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  RELAY_DIGEST_AT: z
    .string()
    .default('09:30')
    .transform((value, ctx): DigestTime | null => {
      if (value.toLowerCase() === 'off') return null;
      const at = parseDigestTime(value);
      if (!at) {
        ctx.addIssue({ code: 'custom', message: DIGEST_TIME_MESSAGE });
        return z.NEVER;
      }
      return at;
    }),
  RELAY_WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined) return [...DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS];
      const delays = value.split(',').map((part) => parseDuration(part, SHORT_DURATION));
      if (delays.length === 0 || delays.length > 20 || delays.some((d) => d === null)) {
        ctx.addIssue({
          code: 'custom',
          message: 'must be 1–20 comma-separated delays such as 5s,5m,30m,2h (units ms, s, m, h; a bare number is ms)',
        });
        return z.NEVER;
      }
      return delays as number[];
    }),
  RELAY_REMIND_AFTER: timerDuration('4h'),
  RELAY_REMIND_AGAIN: timerDuration('24h'),
  RELAY_ESCALATE_AFTER: timerDuration('48h'),
  RELAY_STALE_AFTER: timerDuration('3d'),
  RELAY_EXPIRE_AFTER: timerDuration('14d'),
  RELAY_ESCALATE_CHANNEL: z
    .string()
    .regex(/^[CG][A-Z0-9]{2,20}$/, 'must be a Slack channel id such as C0123ABCD (the app must be invited to it)')
    .optional(),
  RELAY_ESCALATE_INTENTS: z
    .string()
    .default('ask_question,propose_action')
    .transform((value, ctx) => {
      const intents =
        value === 'none'
          ? []
          : value
              .split(',')
              .map((i) => i.trim())
              .filter(Boolean);
      const known = ['inform', 'ask_question', 'propose_action'];
      if (intents.some((i) => !known.includes(i))) {
        ctx.addIssue({ code: 'custom', message: `must be "none" or a comma-separated subset of ${known.join(',')}` });
        return z.NEVER;
      }
      return [...new Set(intents)] as Array<'inform' | 'ask_question' | 'propose_action'>;
    }),
  RELAY_WORKING_HOURS: z
    .string()
    .default('09:00-18:00')
    .transform((value, ctx) => {
      if (value === 'off') return null;
      const hours = parseWorkingHours(value);
      if (!hours) {
        ctx.addIssue({ code: 'custom', message: WORKING_HOURS_MESSAGE });
        return z.NEVER;
      }
      return hours;
    }),
  RELAY_WORKING_DAYS: z
    .string()
    .default('mon,tue,wed,thu,fri')
    .transform((value, ctx) => {
      const days = value.split(',').map((d) => WEEKDAYS.indexOf(d.trim().toLowerCase() as (typeof WEEKDAYS)[number]));
      if (days.length === 0 || days.some((d) => d < 0)) {
        ctx.addIssue({ code: 'custom', message: `must be a comma-separated list of ${WEEKDAYS.join(',')}` });
        return z.NEVER;
      }
      return [...new Set(days)].sort();
    }),
  RELAY_TIMER_SWEEP_INTERVAL: durationSchema(
    { ...SHORT_DURATION, min: 100, message: () => 'must be a duration from 100ms to 24h such as 30s or 1m' },
    '1m',
  ),
  RELAY_RUN_LEASE: runDuration('60s', 1_000),
  RELAY_RUN_PROGRESS_INTERVAL: runDuration('3s', 0),
  RELAY_WEBHOOK_ALLOW_PRIVATE: z
    .enum(['0', '1', 'true', 'false'], { error: 'must be 1 or 0' })
    .default('0')
    .transform((v) => v === '1' || v === 'true'),
  RELAY_MCP_ALLOWED_ORIGINS: z
    .string()
    .optional()
    .transform((value, ctx) => {
      const origins: string[] = [];
      for (const item of (value ?? '')
        .split(',')
        .map((o) => o.trim())
        .filter(Boolean)) {
        const origin = originOf(item);
        if (!origin) {
          ctx.addIssue({
            code: 'custom',
            message: `must be comma-separated origins such as https://app.example.com (scheme, host and port only; "${item}" is not one)`,
          });
          return z.NEVER;
        }
        origins.push(origin);
      }
      return origins;
    }),
  RELAY_MCP_SESSION_IDLE: durationSchema(
    { min: 1_000, max: 86_400_000, message: () => 'must be a duration from 1s to 24h such as 30m or 2h' },
    '30m',
  ),
  RELAY_MCP_SESSIONS_PER_KEY: z
    .string()
    .regex(/^[0-9]{1,4}$/, 'must be a whole number from 1 to 1000')
    .default('10')
    .transform(Number)
    .pipe(z.number().min(1, 'must be at least 1').max(1000, 'must be at most 1000')),
  RELAY_MCP_ALLOWED_HOSTS: z
    .string()
    .optional()
    .transform((value, ctx) => {
      const hosts = (value ?? '')
        .split(',')
        .map((h) => h.trim().toLowerCase())
        .filter(Boolean);
      const bad = hosts.find((h) => hostnameOf(h) !== h);
      if (bad !== undefined) {
        ctx.addIssue({
          code: 'custom',
          message: `must be comma-separated host names without ports, such as relay.internal ("${bad}" is not one)`,
        });
        return z.NEVER;
      }
      return hosts;
    }),
});

/** `scheme://host[:port]` of an http(s) origin written exactly so (no path, query or credentials), or null. */
function originOf(text: string): string | null {
  try {
    const url = new URL(text);
    if (!/^https?:$/.test(url.protocol) || url.username || url.password) return null;
    if (text.replace(/\/$/, '').toLowerCase() !== url.origin) return null;
    return url.origin;
  } catch {
    return null;
  }
}

/** The host name a Host header value names (lower case, IPv6 in brackets, no port), or null. */
export function hostnameOf(host: string): string | null {
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    return null;
  }
}

/**
 * Test hooks and internal tuning: settable like the rest, but documented for contributors, not in the operators' table
 * (docs/configuration.md; test/unit/docs-configuration.test.ts holds the two tables to this split).
 */
export const CONTRIBUTOR_SETTINGS = [
  'SLACK_API_URL',
  'RELAY_WEBHOOK_ALLOW_PRIVATE',
  'RELAY_WORKER_LOCK_MS',
  'RELAY_SHUTDOWN_GRACE_MS',
  'RELAY_TIMER_SWEEP_INTERVAL',
  'RELAY_RUN_PROGRESS_INTERVAL',
] as const satisfies ReadonlyArray<keyof typeof envSchema.shape>;

/** A run setting: a duration such as 500ms, 3s or 2m, at least `minMs` and at most an hour. */
function runDuration(fallback: string, minMs: number) {
  return durationSchema(
    {
      min: minMs,
      max: 3_600_000,
      bareMs: true,
      message: () => `must be a duration from ${minMs}ms to 1h such as 500ms, 3s or 2m`,
    },
    fallback,
  );
}

/** A timer setting: a duration such as 4h or 3d, or `off` (null: that step never fires). */
function timerDuration(fallback: string) {
  return z
    .string()
    .default(fallback)
    .transform((value, ctx) => {
      if (value === 'off') return null;
      const ms = parseDuration(value, TIMER_DURATION_RANGE);
      if (ms === null) {
        ctx.addIssue({ code: 'custom', message: TIMER_DURATION_MESSAGE });
        return z.NEVER;
      }
      return ms;
    });
}

/** Svix's schedule: after the immediate first attempt, retries 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h later. */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS = [
  5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
] as const;

/** Install anywhere: the OAuth v2 install flow, a bot token per workspace (or org) kept in MongoDB. */
export interface SlackOAuthConfig {
  clientId: string;
  clientSecret: string;
  stateSecret: string;
  /** Where /slack/install sends the browser (Slack's authorize page; the tests' fake Slack serves its own). */
  authorizeUrl: string;
}

export interface SlackConfig {
  /** Single-token mode: the one workspace's bot token. Unset in OAuth mode (`oauth`). */
  botToken?: string;
  oauth?: SlackOAuthConfig;
  signingSecret: string;
  apiUrl?: string;
  /** Set: Socket Mode (Bolt connects out over a WebSocket; no public /slack/events needed). */
  appToken?: string;
  /** The app's SLACK_CLIENT_ID / SLACK_CLIENT_SECRET: with both, the web inbox offers "Sign in with Slack". */
  clientId?: string;
  clientSecret?: string;
}

export interface RelayConfig {
  port: number;
  host: string;
  publicUrl: string;
  mongodbUrl?: string;
  mongodbDb: string;
  redisUrl: string;
  /** RELAY_QUEUE_PREFIX; unset, the relay uses its database's own (queues/queue-prefix.ts). */
  queuePrefix?: string;
  roles: Role[];
  adminKey?: string;
  keyPepper?: string;
  dataDir: string;
  team?: string;
  slack?: SlackConfig;
  rateLimitPerMinute: number;
  /** POST /invites/:id/redeem per client address per minute (the route takes no key to count by). */
  redeemRateLimitPerMinute: number;
  /** Web inbox sign-in attempts (GET and POST /inbox/sign-in) per client address per minute. */
  signInRateLimitPerMinute: number;
  /** How long a web inbox session lasts from sign-in. */
  webSessionTtlMs: number;
  /** A policy file (YAML) applied at start; without one the stored policy (or allow-all) stays in force. */
  policyFile?: string;
  logLevel: LogLevel;
  /** Bearer token for GET /metrics (the admin key works too). */
  metricsToken?: string;
  /** BullMQ lock duration; a job whose worker died is taken up again within about this long (also the stalled-check interval). */
  workerLockMs: number;
  /** How long `start` waits on SIGTERM for running jobs and requests before it exits anyway (status 1). */
  shutdownGraceMs: number;
  webhooks: WebhookConfig;
  /** RELAY_DIGEST_AT: when the daily Slack digest goes out, local to each person; null = off for everyone. */
  digestAt: DigestTime | null;
  timers: TimerConfig;
  /** Who may call /mcp from a browser page and under what Host (mcp/origin-guard.ts), besides RELAY_PUBLIC_URL and loopback. */
  mcp: { allowedOrigins: string[]; allowedHosts: string[]; sessionIdleMs: number; sessionsPerKey: number };
  /** Handoff runs (docs/agent-runner.md): how long a runner's lease lasts, the least time between progress batches. */
  runs: { leaseMs: number; progressIntervalMs: number };
}

/** Reminders, escalation and expiry (docs/timers.md); a null duration turns its step off. */
export interface TimerConfig {
  remindAfterMs: number | null;
  remindAgainMs: number | null;
  escalateAfterMs: number | null;
  staleAfterMs: number | null;
  expireAfterMs: number | null;
  /** Where escalations go when the recipient has no lead (else back to the sender). */
  escalateChannel?: string;
  /** Intents whose pending handoffs escalate (an inform needs no escalation by default). */
  escalateIntents: Array<'inform' | 'ask_question' | 'propose_action'>;
  /** Reminders, nudges and escalations due outside these hours (recipient's Slack time zone) move to the next start; null: any time. */
  workingHours: { startMinute: number; endMinute: number; days: number[] } | null;
  /** How often the worker re-checks the threads' `due` index for steps due (and re-arms after Redis lost its jobs). */
  sweepIntervalMs: number;
}

export interface WebhookConfig {
  /** Delays before each retry; the first attempt is immediate, so there are `length + 1` attempts. */
  retryScheduleMs: number[];
  /** Loopback and private receivers allowed (tests, local development); never in production. */
  allowPrivate: boolean;
}

export function loadConfig(env: NodeJS.ProcessEnv): RelayConfig {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const variable = String(issue.path[0] ?? 'environment');
    const raw = present[variable];
    const shown = raw === undefined || /KEY|TOKEN|SECRET|PEPPER|URL/.test(variable) ? '' : ` (got "${raw}")`;
    throw new ConfigError(variable, `${issue.message}${shown}`);
  }
  const e = parsed.data;
  // OAuth mode (install anywhere) is SLACK_STATE_SECRET with the app's client id and secret, and no bot token; the
  // client id and secret beside a bot token are one workspace's, for the web inbox's "Sign in with Slack".
  if (e.SLACK_APP_TOKEN && !e.SLACK_BOT_TOKEN && !e.SLACK_STATE_SECRET) {
    throw new ConfigError(
      'SLACK_BOT_TOKEN',
      'must be set when SLACK_APP_TOKEN is (Socket Mode receives over the socket, but posts with the bot token)',
    );
  }
  if (Boolean(e.SLACK_CLIENT_ID) !== Boolean(e.SLACK_CLIENT_SECRET))
    throw new ConfigError(
      e.SLACK_CLIENT_ID ? 'SLACK_CLIENT_SECRET' : 'SLACK_CLIENT_ID',
      'must be set together with the other (SLACK_CLIENT_ID + SLACK_CLIENT_SECRET, from the app’s Basic Information)',
    );
  if (e.SLACK_STATE_SECRET) {
    if (!e.SLACK_CLIENT_ID)
      throw new ConfigError(
        'SLACK_CLIENT_ID',
        'must be set together with SLACK_STATE_SECRET and SLACK_CLIENT_SECRET (the OAuth install flow)',
      );
    if (e.SLACK_BOT_TOKEN)
      throw new ConfigError(
        'SLACK_BOT_TOKEN',
        'must be unset when SLACK_STATE_SECRET is set: OAuth mode keeps one token per installed workspace',
      );
    if (e.SLACK_APP_TOKEN)
      throw new ConfigError('SLACK_APP_TOKEN', 'must be unset in OAuth mode (the install flow needs HTTP mode)');
    if (!e.SLACK_SIGNING_SECRET)
      throw new ConfigError(
        'SLACK_SIGNING_SECRET',
        'must be set when SLACK_STATE_SECRET is (Slack signs every request)',
      );
  } else if (e.SLACK_CLIENT_ID && !e.SLACK_BOT_TOKEN) {
    throw new ConfigError(
      'SLACK_STATE_SECRET',
      'must be set together with SLACK_CLIENT_ID and SLACK_CLIENT_SECRET (the OAuth install flow), or SLACK_BOT_TOKEN for one workspace',
    );
  } else if (Boolean(e.SLACK_BOT_TOKEN) !== Boolean(e.SLACK_SIGNING_SECRET)) {
    const missing = e.SLACK_BOT_TOKEN ? 'SLACK_SIGNING_SECRET' : 'SLACK_BOT_TOKEN';
    throw new ConfigError(
      missing,
      'must be set together with the other Slack setting (SLACK_BOT_TOKEN + SLACK_SIGNING_SECRET)',
    );
  }
  const localHost = e.HOST === '0.0.0.0' || e.HOST === '::' ? '127.0.0.1' : e.HOST;
  return {
    port: e.PORT,
    host: e.HOST,
    publicUrl: (e.RELAY_PUBLIC_URL ?? `http://${localHost}:${e.PORT}`).replace(/\/+$/, ''),
    mongodbUrl: e.MONGODB_URL,
    mongodbDb: e.MONGODB_DB,
    redisUrl: e.REDIS_URL,
    queuePrefix: e.RELAY_QUEUE_PREFIX,
    roles: e.RELAY_ROLES,
    adminKey: e.RELAY_ADMIN_KEY,
    keyPepper: e.RELAY_KEY_PEPPER,
    dataDir: e.RELAY_DATA_DIR,
    team: e.RELAY_TEAM,
    slack:
      e.SLACK_BOT_TOKEN || e.SLACK_STATE_SECRET
        ? {
            ...(e.SLACK_BOT_TOKEN ? { botToken: e.SLACK_BOT_TOKEN } : {}),
            ...(e.SLACK_STATE_SECRET
              ? {
                  oauth: {
                    clientId: e.SLACK_CLIENT_ID!,
                    clientSecret: e.SLACK_CLIENT_SECRET!,
                    stateSecret: e.SLACK_STATE_SECRET,
                    // Slack's page, or the one beside SLACK_API_URL (…/api/ → …/oauth/v2/authorize) for a fake Slack.
                    authorizeUrl: e.SLACK_API_URL
                      ? new URL('../oauth/v2/authorize', e.SLACK_API_URL.replace(/\/?$/, '/')).toString()
                      : 'https://slack.com/oauth/v2/authorize',
                  },
                }
              : {}),
            signingSecret: e.SLACK_SIGNING_SECRET!,
            apiUrl: e.SLACK_API_URL ? e.SLACK_API_URL.replace(/\/?$/, '/') : undefined,
            appToken: e.SLACK_APP_TOKEN,
            // One workspace's app credentials: the web inbox's "Sign in with Slack" (OpenID Connect).
            ...(e.SLACK_BOT_TOKEN && e.SLACK_CLIENT_ID
              ? { clientId: e.SLACK_CLIENT_ID, clientSecret: e.SLACK_CLIENT_SECRET }
              : {}),
          }
        : undefined,
    rateLimitPerMinute: e.RELAY_RATE_LIMIT_PER_MINUTE,
    redeemRateLimitPerMinute: e.RELAY_REDEEM_RATE_LIMIT_PER_MINUTE,
    signInRateLimitPerMinute: e.RELAY_SIGN_IN_RATE_LIMIT_PER_MINUTE,
    webSessionTtlMs: e.RELAY_WEB_SESSION_HOURS * 3_600_000,
    ...(e.RELAY_POLICY_FILE ? { policyFile: e.RELAY_POLICY_FILE } : {}),
    logLevel: e.LOG_LEVEL,
    webhooks: { retryScheduleMs: e.RELAY_WEBHOOK_RETRY_SCHEDULE, allowPrivate: e.RELAY_WEBHOOK_ALLOW_PRIVATE },
    timers: {
      remindAfterMs: e.RELAY_REMIND_AFTER,
      remindAgainMs: e.RELAY_REMIND_AGAIN,
      escalateAfterMs: e.RELAY_ESCALATE_AFTER,
      staleAfterMs: e.RELAY_STALE_AFTER,
      expireAfterMs: e.RELAY_EXPIRE_AFTER,
      ...(e.RELAY_ESCALATE_CHANNEL ? { escalateChannel: e.RELAY_ESCALATE_CHANNEL } : {}),
      escalateIntents: e.RELAY_ESCALATE_INTENTS,
      workingHours: e.RELAY_WORKING_HOURS ? { ...e.RELAY_WORKING_HOURS, days: e.RELAY_WORKING_DAYS } : null,
      sweepIntervalMs: e.RELAY_TIMER_SWEEP_INTERVAL,
    },
    metricsToken: e.RELAY_METRICS_TOKEN,
    workerLockMs: e.RELAY_WORKER_LOCK_MS,
    shutdownGraceMs: e.RELAY_SHUTDOWN_GRACE_MS,
    digestAt: e.RELAY_DIGEST_AT,
    mcp: {
      allowedOrigins: e.RELAY_MCP_ALLOWED_ORIGINS,
      allowedHosts: e.RELAY_MCP_ALLOWED_HOSTS,
      sessionIdleMs: e.RELAY_MCP_SESSION_IDLE,
      sessionsPerKey: e.RELAY_MCP_SESSIONS_PER_KEY,
    },
    runs: { leaseMs: e.RELAY_RUN_LEASE, progressIntervalMs: e.RELAY_RUN_PROGRESS_INTERVAL },
  };
}

/** What the CLI and the stdio MCP server read (a subset shared with the relay's, plus RELAY_URL and RELAY_API_KEY). */
export const clientEnvSchema = z.object({
  RELAY_URL: httpUrl.default('http://127.0.0.1:3000'),
  RELAY_API_KEY: z
    .string()
    .regex(
      /^hr_[0-9a-f]{12}_[A-Za-z0-9_-]{20,}$/,
      'must be a handoff-relay API key (hr_…), as printed by `handoff-relay register`',
    )
    .optional(),
  RELAY_ADMIN_KEY: z.string().min(24, 'must be at least 24 characters').optional(),
  RELAY_DATA_DIR: z.string().min(1).default('.data'),
});

export interface ClientConfig {
  relayUrl: string;
  apiKey?: string;
  adminKey?: string;
  dataDir: string;
}

/** Settings of the programs that talk to a relay: the CLI and the stdio MCP server. */
export function loadClientConfig(env: NodeJS.ProcessEnv): ClientConfig {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = clientEnvSchema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(String(issue.path[0] ?? 'environment'), issue.message);
  }
  return {
    relayUrl: parsed.data.RELAY_URL.replace(/\/+$/, ''),
    apiKey: parsed.data.RELAY_API_KEY,
    adminKey: parsed.data.RELAY_ADMIN_KEY,
    dataDir: parsed.data.RELAY_DATA_DIR,
  };
}
