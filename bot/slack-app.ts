// The Bolt app: its receiver (HTTP at POST /slack/events on the relay's express app, or Socket Mode) and listeners.
import {
  App,
  ExpressReceiver,
  LogLevel,
  SocketModeReceiver,
  type Logger as BoltLogger,
  type Receiver,
} from '@slack/bolt';
import { WebClient } from '@slack/web-api';
import type express from 'express';
import type { Logger } from 'pino';
import type { JobQueue } from '../relay-core/queues/bullmq-queues';
import type { SlackConfig } from '../relay-core/ops/config';
import type { Relay } from '../relay-core/service/relay-service';
import type { HandoffTimers } from '../relay-core/service/handoff-timers';
import type { Invites } from '../relay-core/service/invites';
import type { ClientSetup } from './views/link-modal';
import type { HomeDigest } from './listeners/events/app-home';
import type { Clock } from '../relay-core/domain/clock';
import type { ThreadWriter } from '../relay-core/domain/thread-writer';
import { registerActions } from './listeners/actions';
import { registerCommands } from './listeners/commands';
import { registerEvents } from './listeners/events';
import { registerShortcuts } from './listeners/shortcuts';
import { registerViews } from './listeners/views';
import { installFlowOptions } from './oauth/install-flow';
import type { MongoInstallationStore } from './oauth/mongo-installation-store';
import type { MongoStateStore } from './oauth/mongo-state-store';
import type { RefreshedToken, SlackTokens } from './oauth/slack-clients';
import { TeamRoutingClient } from './oauth/team-routing-client';

// Socket Mode (SLACK_APP_TOKEN set) connects out to Slack over a WebSocket, and nothing is mounted.

export const SLACK_EVENTS_PATH = '/slack/events';
const MAX_CLOCK_SKEW_SECONDS = 300;

/** The use cases the Slack listeners call. */
export type SlackUses = Pick<
  Relay,
  | 'teammates'
  | 'reads'
  | 'links'
  | 'channels'
  | 'creates'
  | 'claims'
  | 'transitions'
  | 'messages'
  | 'reassignments'
  | 'runs'
  | 'approvers'
  | 'approvalRecords'
  | 'approvalDecisions'
  | 'webSessions'
>;

export interface SlackAppDeps extends SlackUses {
  config: SlackConfig;
  httpApp: express.Express;
  log: Logger;
  /** The `verify` queue: Slack Accept runs there (bot/verify-accept.ts). */
  verifyJobs: JobQueue;
  /** Thread writes of the Slack surface's own records (what a DM redrawn by a listener shows). */
  threads: ThreadWriter;
  /** RELAY_TEAM: the team a teammate created with `/handoff link` joins. */
  team?: string;
  /** Snooze moves a handoff's next reminder (relay-core/service/handoff-timers.ts). */
  timers: HandoffTimers;
  /** The MCP client configuration `/handoff link` and `/handoff join` show with the new key; the composition root passes it in. */
  clientSetup: ClientSetup;
  /** Invitations: `/handoff invite` (workspace admins) makes one, `/handoff join` redeems one. */
  invites: Invites;
  /** The daily digest's opt-outs and hour (bot/digest/), when it is on: its buttons and the Home tab use them. */
  digest?: HomeDigest;
  clock?: Clock;
  /** OAuth mode (config.oauth): the installations, the install states, and who is in which workspace. */
  oauth?: { installations: MongoInstallationStore; states: MongoStateStore; tokens: SlackTokens; publicUrl: string };
  /** app_uninstalled / tokens_revoked mark the installation here (OAuth mode). */
  installations?: MongoInstallationStore;
  /** OAuth mode: the deliveries' client (each call with the token of the workspace it names), made here. */
  deliveryClient?: WebClient;
}

/** Every listener the app registers; the manifest test records what this registers (test/manifest.test.ts). */
export function registerListeners(app: App, deps: SlackAppDeps): void {
  registerActions(app, deps);
  registerViews(app, deps);
  registerCommands(app, deps);
  registerEvents(app, deps);
  registerShortcuts(app, deps);
}

const CLIENT_OPTIONS = {
  // The queue retries failed deliveries; the client itself must not hold a job for half an hour.
  retryConfig: { retries: 0 },
  rejectRateLimitedCalls: true,
  timeout: 10_000,
};

export function slackWebClient(config: SlackConfig, token = config.botToken): WebClient {
  return new WebClient(token, { slackApiUrl: config.apiUrl, ...CLIENT_OPTIONS });
}

/** OAuth mode's client for the jobs: each call with the token of the workspace of the person or conversation it names. */
export function slackRoutingClient(config: SlackConfig, tokens: SlackTokens): WebClient {
  return new TeamRoutingClient(tokens, { slackApiUrl: config.apiUrl, ...CLIENT_OPTIONS });
}

/** Token rotation: a new bot token for a refresh token (OAuth mode; the app's credentials authenticate the call). */
export async function refreshBotToken(config: SlackConfig, refreshToken: string): Promise<RefreshedToken> {
  const oauth = config.oauth;
  if (!oauth) throw new Error('token rotation needs OAuth mode (SLACK_CLIENT_ID)');
  const answer = await new WebClient(undefined, { slackApiUrl: config.apiUrl, ...CLIENT_OPTIONS }).oauth.v2.access({
    client_id: oauth.clientId,
    client_secret: oauth.clientSecret,
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
  });
  if (!answer.access_token || !answer.refresh_token || !answer.expires_in)
    throw new Error('oauth.v2.access returned no rotated token');
  return {
    token: answer.access_token,
    refreshToken: answer.refresh_token,
    expiresAt: Math.floor(Date.now() / 1000) + answer.expires_in,
  };
}

/** Bolt's logger interface over the relay's pino logger (Bolt's errors as warnings: each failure is also answered). */
function boltLogger(log: Logger): BoltLogger {
  let level = LogLevel.WARN;
  const line = (parts: unknown[]) => parts.map((p) => (p instanceof Error ? p.message : String(p))).join(' ');
  return {
    debug: (...m: unknown[]) => log.debug({ component: 'slack-oauth' }, line(m)),
    info: (...m: unknown[]) => log.info({ component: 'slack-oauth' }, line(m)),
    warn: (...m: unknown[]) => log.warn({ component: 'slack-oauth' }, line(m)),
    error: (...m: unknown[]) => log.warn({ component: 'slack-oauth' }, line(m)),
    setLevel: (l: LogLevel) => (level = l),
    getLevel: () => level,
    setName: () => undefined,
  };
}

/** Socket Mode when an app-level token is configured, else the HTTP receiver on the relay's express app. */
function createReceiver(deps: SlackAppDeps): Receiver {
  const { config, httpApp } = deps;
  if (config.appToken) {
    // apps.connections.open goes to SLACK_API_URL too (the tests' fake Slack serves the socket).
    return new SocketModeReceiver({
      appToken: config.appToken,
      logLevel: LogLevel.ERROR,
      installerOptions: {
        clientOptions: { slackApiUrl: config.apiUrl, retryConfig: { retries: 2, maxTimeout: 2_000 } },
      },
    });
  }
  // Bolt accepts timestamps from the future; Slack's rule is five minutes either way. The signature
  // covers the timestamp, so checking the header before Bolt verifies the body is enough.
  httpApp.use(SLACK_EVENTS_PATH, (req, res, next) => {
    const ts = Number(req.get('x-slack-request-timestamp'));
    if (!Number.isFinite(ts) || Math.abs(Date.now() / 1000 - ts) > MAX_CLOCK_SKEW_SECONDS) {
      res.status(401).send('Invalid request timestamp');
      return;
    }
    next();
  });
  return new ExpressReceiver({
    ...(config.oauth && deps.oauth
      ? {
          ...installFlowOptions({ oauth: config.oauth, apiUrl: config.apiUrl, log: deps.log, ...deps.oauth }),
          // The install flow's own complaints (a refused state…) go to the relay's log, not to stderr.
          logger: boltLogger(deps.log),
        }
      : {}),
    signingSecret: config.signingSecret,
    endpoints: SLACK_EVENTS_PATH,
    app: httpApp,
    logLevel: LogLevel.ERROR,
  });
}

export function createSlackApp(deps: SlackAppDeps): App {
  const { config, log } = deps;
  const receiver = createReceiver(deps);
  const app = new App({
    receiver,
    // OAuth mode: no token here; Bolt's authorize reads the installation of the request's workspace.
    ...(config.oauth ? {} : { token: config.botToken }),
    tokenVerificationEnabled: false,
    logLevel: LogLevel.ERROR,
    clientOptions: { slackApiUrl: config.apiUrl, retryConfig: { retries: 2, maxTimeout: 2_000 } },
  });
  // After every listener of a request has finished (the ack went out before): tests wait on it, operators see the time taken.
  app.use(async ({ body, next }) => {
    const started = Date.now();
    await next();
    const action = (body as { actions?: Array<{ action_id?: string }> }).actions?.[0]?.action_id;
    log.debug(
      { type: body.type, ...(action ? { action_id: action } : {}), ms: Date.now() - started },
      'slack request handled',
    );
  });
  // OAuth mode: each request says who is in which workspace; the deliveries then use that workspace's token.
  const tokens = deps.oauth?.tokens;
  if (tokens) {
    app.use(async ({ context, body, next }) => {
      const b = body as { user?: { id?: string }; user_id?: string; channel?: { id?: string }; channel_id?: string };
      const event = (body as { event?: { user?: string; channel?: string } }).event;
      const ids = [
        context.userId ?? b.user?.id ?? b.user_id ?? event?.user,
        b.channel?.id ?? b.channel_id ?? event?.channel,
      ].filter((id): id is string => typeof id === 'string' && id.length > 0);
      if (ids.length && (context.teamId || context.enterpriseId))
        await tokens
          .remember(ids, {
            teamId: context.teamId,
            enterpriseId: context.enterpriseId,
            isEnterpriseInstall: context.isEnterpriseInstall,
          })
          .catch((error: Error) => log.warn({ err: error.message }, 'slack user workspace not recorded'));
      await next();
    });
  }
  registerListeners(app, {
    ...deps,
    installations: deps.oauth?.installations,
    // A post a listener makes outside the request's own workspace (Nudge: under the recipient's DM) routes by whom it names.
    ...(tokens ? { deliveryClient: slackRoutingClient(config, tokens) } : {}),
  });
  app.error(async (error) => {
    log.error({ err: error }, 'slack listener failed');
  });
  return app;
}
