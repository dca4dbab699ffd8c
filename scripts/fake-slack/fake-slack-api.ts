// Test double for https://slack.com/api/: a strict loopback Slack Web API the app reaches through SLACK_API_URL.
//
// It speaks what @slack/web-api sends (POST {url}{method}, form-encoded with nested values as JSON
// strings, or a JSON body; token in `Authorization: Bearer`, or a `token` form field) and answers
// with Slack's response shapes and error codes, HTTP 200 for API errors as Slack does. It is
// deliberately stricter than lenient: what Slack would reject, it rejects, and it also enforces our
// product rule that every message carries a top-level `text` fallback.

import { generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { findBlockProblem, findViewProblem, formatProblem, type BlockProblem } from './block-limits';

export interface FakeSlackCall {
  method: string;
  args: Record<string, unknown>;
  at: number;
  response: Record<string, unknown>;
  /** The workspace of the token the call came with (install anywhere); absent for a call refused before that. */
  team?: string;
}

export interface FakeSlackMessage {
  ts: string;
  text: string;
  blocks: unknown[];
  thread_ts?: string;
  /** How many accepted chat.update calls changed this message (0: as posted). */
  updated: number;
  /** Message metadata as posted ({event_type, event_payload}); returned only to include_all_metadata reads. */
  metadata?: FakeSlackMetadata;
  /** Who wrote it: a person's message added with addUserMessage (absent: the bot posted it). */
  user?: string;
  /** A streamed message (chat.startStream): true while it streams, false once stopped; absent for a posted one. */
  streaming?: boolean;
  /** A streamed message's chunks of markdown text, in order (start, each append, stop). */
  chunks?: string[];
}

/** Links a person shared in a message, as the link_shared event carries them (see shareLinks). */
export interface FakeSlackSharedLinks {
  channel: string;
  user: string;
  message_ts: string;
  unfurl_id: string;
  source: 'conversations_history';
  links: Array<{ domain: string; url: string }>;
}

export interface FakeSlackAck {
  envelope_id: string;
  payload?: unknown;
}

export interface FakeSlackMetadata {
  event_type: string;
  event_payload: Record<string, unknown>;
}

/** A call held back by holdNext: it has arrived (and waits, unapplied and unanswered) until released. */
export interface FakeSlackHold {
  /** Resolves with the held call's arguments once it arrives. */
  arrived: Promise<Record<string, unknown>>;
  /** Lets the call through: it is handled and answered as if it had just arrived. */
  release(): void;
}

export interface FakeSlackFailure {
  status?: number;
  body?: Record<string, unknown>;
  headers?: Record<string, string>;
}

export interface FakeSlackUserProfile {
  real_name?: string;
  name?: string;
  display_name?: string;
  /** IANA time zone users.info reports (default Europe/London); tz_offset and tz_label follow it. */
  tz?: string;
  /** The workspace the person is in (addWorkspace first); default the fake's own team. */
  team?: string;
  /** A workspace admin or owner, as users.info reports (both false unless set). */
  is_admin?: boolean;
  is_owner?: boolean;
}

export interface FakeSlack {
  /** Web API base with a trailing slash, e.g. http://127.0.0.1:PORT/api/ (pass as slackApiUrl / SLACK_API_URL). */
  url: string;
  /** The only accepted bot token. */
  token: string;
  teamId: string;
  /** The bot's user id and bot id, as auth.test reports them (Bolt offline needs both). */
  botUserId: string;
  botId: string;
  /** Every call, accepted or rejected, in arrival order. */
  calls: FakeSlackCall[];
  /** Successful (ok: true) calls to method. */
  callsTo(method: string): FakeSlackCall[];
  /** First successful call to method matching predicate, already made or future; rejects after timeoutMs (5000) listing every call seen. */
  waitFor(method: string, predicate?: (c: FakeSlackCall) => boolean, timeoutMs?: number): Promise<FakeSlackCall>;
  /** What a user would see now, by channel id (IM ids start with D). */
  messages: Map<string, FakeSlackMessage[]>;
  /** Home tab views as last published, by user id. */
  homeViews: Map<string, Record<string, unknown>>;
  /** A view (modal or home) as last opened, updated or published, by view id; undefined for an unknown id. */
  view(id: string): Record<string, unknown> | undefined;
  /** The workspace's people (not the bot), in the order added. */
  userIds(): string[];
  /** Adds a user to the workspace; ids look like Slack's (U or W, then capitals and digits). */
  addUser(id: string, profile?: FakeSlackUserProfile): void;
  /**
   * Adds a channel (C… public, G… private); `members` limits who may receive ephemerals there (default: anyone).
   * The bot is a member unless `botMember` is false: like Slack, posting, updating or reading history in a channel
   * the bot is not in is `not_in_channel` (the app has no chat:write.public).
   */
  addChannel(id: string, members?: string[], opts?: { botMember?: boolean }): void;
  /** Invites the bot to a channel, or removes it (`/invite @app`, `/kick @app`). */
  setBotMember(id: string, member: boolean): void;
  /** A person's message in a known channel (what a message shortcut or a shared link points at); returns its ts. */
  addUserMessage(channel: string, user: string, text: string, opts?: { thread_ts?: string }): string;
  /** A person posts `urls` in `channel`: the message, and what the link_shared event says about it; chat.unfurl accepts only these. */
  shareLinks(channel: string, user: string, urls: string[]): FakeSlackSharedLinks;
  /** Unfurls accepted by chat.unfurl, by `channel:message_ts`, then by URL (the last one given for each URL). */
  unfurls: Map<string, Map<string, Record<string, unknown>>>;
  /** The IM channel id conversations.open returns for userId (stable, `D` + the user id's suffix); does not open it. */
  imChannelId(userId: string): string;
  /** A response_url a slash command or action payload can carry; POSTs to it are recorded as method "response_url". */
  responseUrl(name?: string): string;
  /**
   * A trigger_id as Slack puts into an interaction payload. views.open accepts only ids issued here,
   * each once, within 3 s of issue (Slack: invalid_trigger_id / exchanged_trigger_id / expired_trigger_id).
   * `issuedMsAgo` backdates one, to test expiry without waiting.
   */
  triggerId(opts?: { issuedMsAgo?: number }): string;
  /** Scripted failure for the next call to method (queued: two calls script the next two calls). */
  failNext(method: string, response: FakeSlackFailure): void;
  /** A workspace without Slack's streaming methods: chat.startStream / appendStream / stopStream answer unknown_method. */
  setStreaming(available: boolean): void;
  // --- slack-delivery additions (rate limits, lost responses) ---------------------------------
  /** The next `times` calls to method answer HTTP 429 `ratelimited` with `Retry-After: retryAfterSeconds`, changing nothing. */
  rateLimitNext(method: string, opts?: { times?: number; retryAfterSeconds?: number }): void;
  /** The next `times` calls to method take effect, but their HTTP connection is destroyed before any answer (a lost response). */
  dropResponseNext(method: string, times?: number): void;
  /**
   * The next call to method whose arguments match holds (a slow Slack): nothing of it is applied or answered until
   * `release()`; calls that do not match go through meanwhile.
   */
  holdNext(method: string, match?: (args: Record<string, unknown>) => boolean): FakeSlackHold;
  /** Socket Mode: the only accepted app-level token (xapp-…), good for apps.connections.open only. */
  appToken: string;
  /** Socket Mode: resolves once a client holds an open connection (after `hello`); rejects after timeoutMs. */
  socketConnected(timeoutMs?: number): Promise<void>;
  /** Socket Mode: sends an envelope to the connected client; resolves with its ack ({envelope_id, payload?}). */
  sendEnvelope(
    type: 'interactive' | 'slash_commands' | 'events_api',
    payload: Record<string, unknown>,
    timeoutMs?: number,
  ): Promise<FakeSlackAck>;
  // --- end slack-delivery additions -------------------------------------------------------------
  // --- Sign in with Slack (OpenID Connect) -------------------------------------------------------
  /** The app's client id and secret (SLACK_CLIENT_ID / SLACK_CLIENT_SECRET): openid.connect.token takes only these. */
  clientId: string;
  clientSecret: string;
  /**
   * Who is signed in to Slack in "the browser": GET /openid/connect/authorize then sends them straight back with a
   * code (as Slack does for someone who already consented). null (the start): the page lists the people to choose.
   */
  signInAs(userId: string | null): void;
  // --- install anywhere (OAuth v2) -------------------------------------------------------------
  /**
   * Turns on the install flow for one app: GET /oauth/v2/authorize (beside the Web API: `…/oauth/v2/authorize`) and
   * `oauth.v2.access`, which checks client_id and client_secret, takes each code once, and requires the redirect_uri
   * the authorize step was given.
   */
  enableOAuth(app: { clientId: string; clientSecret: string; rotation?: boolean }): void;
  /** Token rotation: the team's current bot token answers `token_expired` from now on (its refresh token still works). */
  expireToken(teamId: string): void;
  /**
   * A workspace of its own (`T…`): its people (addUser with `team`) are seen only with a token installed there, or
   * with the org-wide token of its Enterprise Grid org (`org`: addOrg first).
   */
  addWorkspace(teamId: string, name?: string, opts?: { org?: string }): void;
  /** An Enterprise Grid org (`E…`): its workspaces (addWorkspace with `org`) can be installed all at once. */
  addOrg(enterpriseId: string, name?: string): void;
  /**
   * The person at Slack's authorize page pressing *Allow* for `teamId` (a workspace), or for an org (`E…`: an org-wide
   * install): answers the browser's GET of the authorize URL with the redirect to redirect_uri?code=…&state=… (GET the
   * authorize URL with `team=<id>` added).
   */
  authorizeUrlFor(authorizeUrl: string, teamId: string): string;
  /** The bot tokens oauth.v2.access issued, by team id, or org id for an org-wide install (the latest one). */
  installedTokens: Map<string, string>;
  /**
   * The app is removed from `teamId` (or from an org, `E…`): its tokens answer `token_revoked` from now on. Returns the
   * event Slack sends (post it with postSignedEvent's `teamId`, or `enterpriseId` and `isEnterpriseInstall` for an org).
   */
  uninstall(teamId: string): Record<string, unknown>;
  // --- end install anywhere ------------------------------------------------------------------------
  /** Clears calls, messages, views and scripted failures; users, channels and opened IMs stay. */
  reset(): void;
  close(): Promise<void>;
}

/** The bot scopes the fake grants: exactly manifest.yml's. */
export const FAKE_SLACK_SCOPES = [
  'chat:write',
  'im:write',
  'commands',
  'users:read',
  'im:history',
  'channels:history',
  'groups:history',
  'links:read',
  'links:write',
] as const;

export function startFakeSlack(opts: { token?: string; anyUser?: boolean } = {}): Promise<FakeSlack> {
  const fake = new FakeSlackServer(opts.token ?? 'xoxb-0000000000-fake-handoff-relay', opts.anyUser ?? false);
  fake.appToken = 'xapp-1-A0FAKEAPP-0000-fakeapptoken';
  return fake.listen();
}

// ---------------------------------------------------------------------------------------------

type Args = Record<string, unknown>;
type Body = Record<string, unknown>;
type Handler = (args: Args) => Body;
type Channel = { kind: 'im'; user: string } | { kind: 'channel'; members?: Set<string>; botMember: boolean };
interface StoredView {
  id: string;
  type: 'modal' | 'home';
  hash: string;
  externalId: string;
  response: Body;
}
interface Waiter {
  match: (c: FakeSlackCall) => boolean;
  resolve: (c: FakeSlackCall) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

/** Form fields that hold JSON: @slack/web-api JSON.stringifies every non-primitive argument. */
const JSON_FIELDS = ['blocks', 'attachments', 'view', 'metadata', 'unfurls'];

/** A time zone's current UTC offset (seconds) and a label, as users.info reports them. */
function zoneNow(tz: string): { offsetSeconds: number; label: string } {
  let name: string;
  try {
    name =
      new Intl.DateTimeFormat('en-US', { timeZone: tz, timeZoneName: 'longOffset' })
        .formatToParts(new Date())
        .find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
  } catch {
    throw new Error(`fake Slack: "${tz}" is not an IANA time zone`);
  }
  const m = /GMT(?:([+-])(\d{2}):(\d{2}))?/.exec(name);
  const offsetSeconds = m?.[1] ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 3600 + Number(m[3]) * 60) : 0;
  const label =
    new Intl.DateTimeFormat('en-US', { timeZone: tz, timeZoneName: 'long' })
      .formatToParts(new Date())
      .find((p) => p.type === 'timeZoneName')?.value ?? tz;
  return { offsetSeconds, label };
}
const USER_ID = /^[UW][A-Z0-9]{2,}$/;
const MESSAGE_TEXT_LIMIT = 40000;
const TEAM_ID = 'T0FAKETEAM';
const BOT_USER_ID = 'U0FAKEBOT';
const BOT_ID = 'B0FAKEBOT';
const APP_ID = 'A0FAKEAPP';
const OIDC_CLIENT_ID = '1000000000001.2000000000002';
const OIDC_CLIENT_SECRET = 'fakeclientsecret0123456789abcdef';
/** Slack's authorization codes last 10 minutes and work once. */
const OIDC_CODE_TTL_MS = 10 * 60_000;
/** How long a trigger_id may be exchanged for a modal. */
const TRIGGER_TTL_MS = 3000;

function fail(error: string, ...messages: string[]): Body {
  return messages.length ? { ok: false, error, response_metadata: { messages } } : { ok: false, error };
}

function problemBody(problem: BlockProblem): Body {
  return {
    ok: false,
    error: problem.error,
    errors: [problem.message],
    response_metadata: { messages: [formatProblem(problem)] },
  };
}

function present(v: unknown): boolean {
  return v !== undefined && v !== null && v !== '';
}

function truthy(v: unknown): boolean {
  return v === true || v === 'true' || v === '1' || v === 1;
}

class FakeSlackServer implements FakeSlack {
  url = '';
  readonly teamId = TEAM_ID;
  readonly clientId = OIDC_CLIENT_ID;
  readonly clientSecret = OIDC_CLIENT_SECRET;
  readonly botUserId = BOT_USER_ID;
  readonly botId = BOT_ID;
  readonly calls: FakeSlackCall[] = [];
  readonly messages = new Map<string, FakeSlackMessage[]>();
  readonly homeViews = new Map<string, Body>();
  readonly unfurls = new Map<string, Map<string, Body>>();
  /** Shared links chat.unfurl may unfurl: `channel:message_ts` and unfurl_id → the URLs shared there. */
  private readonly shared = new Map<string, { key: string; urls: Set<string> }>();

  private readonly server = createServer((req, res) => {
    this.handle(req, res).catch((err: Error) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`fake Slack bug: ${err.stack ?? err.message}`);
    });
  });
  private origin = '';
  private readonly users = new Map<string, Body>();
  /** Sign in with Slack: the person the authorize page signs in without asking, and the codes it issued. */
  private oidcUser: string | null = null;
  private readonly oidcCodes = new Map<
    string,
    { user: string; redirectUri: string; nonce: string | null; issuedAt: number; used: boolean }
  >();
  /** The id_tokens' signing key, made at the first sign-in (most fakes never need one). */
  private oidcKey: KeyObject | null = null;
  private readonly channels = new Map<string, Channel>();
  private readonly failures = new Map<string, FakeSlackFailure[]>();
  private readonly views = new Map<string, StoredView>();
  private readonly waiters = new Set<Waiter>();
  private lastTsMicros = 0;
  private readonly triggers = new Map<string, { issuedAt: number; used: boolean }>();
  private viewCounter = 0;
  /** slack-delivery: methods whose next calls lose their response (count left). */
  private readonly drops = new Map<string, number>();
  private readonly holds: Array<{
    method: string;
    match: (args: Args) => boolean;
    arrive: (args: Args) => void;
    released: Promise<void>;
  }> = [];
  /** slack-delivery, Socket Mode: tickets handed out by apps.connections.open, open sockets, acks awaited. */
  appToken = '';
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly tickets = new Set<string>();
  private readonly sockets = new Set<WebSocket>();
  private readonly acks = new Map<string, (ack: FakeSlackAck) => void>();

  private readonly handlers: Record<string, Handler> = {
    'auth.test': () => this.authTest(),
    'conversations.open': (a) => this.conversationsOpen(a),
    'chat.postMessage': (a) => this.postMessage(a),
    'chat.update': (a) => this.update(a),
    'chat.postEphemeral': (a) => this.postEphemeral(a),
    'users.info': (a) => this.usersInfo(a),
    'users.list': (a) => this.usersList(a),
    'chat.getPermalink': (a) => this.getPermalink(a),
    'chat.unfurl': (a) => this.unfurl(a),
    'views.open': (a) => this.viewsOpen(a),
    'views.update': (a) => this.viewsUpdate(a),
    'views.publish': (a) => this.viewsPublish(a),
    // slack-delivery additions
    'conversations.history': (a) => this.conversationsHistory(a),
    'conversations.replies': (a) => this.conversationsReplies(a),
    'apps.connections.open': () => this.appsConnectionsOpen(),
    // Text streaming (an agent's progress as one message)
    'chat.startStream': (a) => this.startStream(a),
    'chat.appendStream': (a) => this.appendStream(a),
    'chat.stopStream': (a) => this.stopStream(a),
  };
  private streamingAvailable = true;
  // --- install anywhere
  private oauthApp: { clientId: string; clientSecret: string; rotation?: boolean } | null = null;
  /** Token rotation: refresh token → team; each is taken once. */
  private readonly refreshTokens = new Map<string, string>();
  private readonly workspaces = new Map<string, string>([[TEAM_ID, 'handoff-relay test']]);
  /** Enterprise Grid: org id → name, and each workspace of an org → its org. */
  private readonly orgs = new Map<string, string>();
  private readonly orgOfTeam = new Map<string, string>();
  /** A grant is for a workspace (`T…`) or, for an org-wide install, an org (`E…`). */
  private readonly codes = new Map<string, { team: string; redirectUri: string; used: boolean }>();
  /** Every token oauth.v2.access issued → its team (or org), and whether it was revoked. */
  private readonly tokens = new Map<string, { team: string; revoked: boolean; expired: boolean }>();
  readonly installedTokens = new Map<string, string>();
  /**
   * The team of the token of the call being handled (handlers run synchronously, one at a time); for an org-wide
   * token, the org (`E…`), which sees the people of every workspace of the org.
   */
  private callerTeam = TEAM_ID;
  private callerKnown = false;

  enableOAuth(app: { clientId: string; clientSecret: string; rotation?: boolean }): void {
    this.oauthApp = app;
  }

  expireToken(teamId: string): void {
    const token = this.installedTokens.get(teamId);
    const entry = token ? this.tokens.get(token) : undefined;
    if (!entry) throw new Error(`fake Slack: no token installed for ${teamId}`);
    entry.expired = true;
  }

  /** A new bot token for `team` (with a refresh token and an expiry when rotation is on). */
  private issueToken(team: string): Body {
    const token = `xoxb-${team}-${randomUUID()}`;
    this.tokens.set(token, { team, revoked: false, expired: false });
    this.installedTokens.set(team, token);
    if (!this.oauthApp?.rotation) return { access_token: token };
    const refresh = `xoxe-1-${team}-${randomUUID()}`;
    this.refreshTokens.set(refresh, team);
    return { access_token: token, refresh_token: refresh, expires_in: 43_200 };
  }

  addWorkspace(teamId: string, name = teamId.toLowerCase(), opts: { org?: string } = {}): void {
    if (!/^T[A-Z0-9]{2,}$/.test(teamId)) throw new Error(`fake Slack: "${teamId}" does not look like a team id (T…)`);
    if (opts.org && !this.orgs.has(opts.org)) throw new Error(`fake Slack: no org ${opts.org}; addOrg it first`);
    this.workspaces.set(teamId, name);
    if (opts.org) this.orgOfTeam.set(teamId, opts.org);
  }

  addOrg(enterpriseId: string, name = enterpriseId.toLowerCase()): void {
    if (!/^E[A-Z0-9]{2,}$/.test(enterpriseId))
      throw new Error(`fake Slack: "${enterpriseId}" does not look like an enterprise id (E…)`);
    this.orgs.set(enterpriseId, name);
  }

  private isOrg(id: string): boolean {
    return this.orgs.has(id);
  }

  /** What oauth.v2.access says an installation is: a workspace (of an org or not), or a whole org. */
  private installedWhere(id: string): Body {
    if (this.isOrg(id)) return { team: null, enterprise: { id, name: this.orgs.get(id) }, is_enterprise_install: true };
    const org = this.orgOfTeam.get(id);
    return {
      team: { id, name: this.workspaces.get(id) },
      enterprise: org ? { id: org, name: this.orgs.get(org) } : null,
      is_enterprise_install: false,
    };
  }

  /** Whether a token of `caller` (a workspace, or an org-wide install) sees the people of workspace `team`. */
  private sees(caller: string, team: string): boolean {
    return caller === team || (this.isOrg(caller) && this.orgOfTeam.get(team) === caller);
  }

  authorizeUrlFor(authorizeUrl: string, teamId: string): string {
    const url = new URL(authorizeUrl);
    url.searchParams.set('team', teamId);
    return url.toString();
  }

  uninstall(teamId: string): Record<string, unknown> {
    if (!this.workspaces.has(teamId) && !this.isOrg(teamId))
      throw new Error(`fake Slack: no workspace or org ${teamId}`);
    for (const t of this.tokens.values()) if (t.team === teamId) t.revoked = true;
    return { type: 'app_uninstalled' };
  }

  /** GET /oauth/v2/authorize: Slack's consent page, answered as if the person pressed Allow for `team`. */
  private authorize(url: URL, res: ServerResponse): void {
    const q = url.searchParams;
    const refuse = (why: string): void => {
      res.writeHead(400, { 'content-type': 'text/plain' }).end(`fake Slack: ${why}`);
    };
    if (!this.oauthApp) return refuse('the install flow is off (enableOAuth first)');
    if (q.get('client_id') !== this.oauthApp.clientId) return refuse('invalid client_id');
    const scopes = (q.get('scope') ?? '').split(',').filter(Boolean);
    const unknown = scopes.filter((sc) => !(FAKE_SLACK_SCOPES as readonly string[]).includes(sc));
    if (scopes.length === 0 || unknown.length) return refuse(`invalid scope ${unknown.join(',')}`);
    const redirectUri = q.get('redirect_uri') ?? '';
    if (!/^https?:\/\//.test(redirectUri)) return refuse('bad redirect_uri');
    // A person in a browser (npm run slack:local -- --oauth) chooses where to install; a test names it (`team`).
    if (!q.has('team')) return this.consentPage(url, scopes, res);
    const team = q.get('team') ?? '';
    if (!this.workspaces.has(team) && !this.isOrg(team))
      return refuse(`no workspace or org ${team} (addWorkspace / addOrg first)`);
    const code = `${team}.${randomUUID()}`;
    this.codes.set(code, { team, redirectUri, used: false });
    const back = new URL(redirectUri);
    back.searchParams.set('code', code);
    if (q.get('state')) back.searchParams.set('state', q.get('state')!);
    res.writeHead(302, { location: back.toString() }).end();
  }

  /** The consent page for a person: the scopes asked for, and an Allow for each workspace and org (GET with `team`). */
  private consentPage(url: URL, scopes: string[], res: ServerResponse): void {
    const escapeHtml = (t: string) => t.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
    const hidden = [...url.searchParams]
      .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
      .join('');
    const choices = [
      ...[...this.workspaces].map(([id, name]) => [id, `${name} (${id})`] as const),
      ...[...this.orgs].map(([id, name]) => [id, `${name} (${id}, the whole org)`] as const),
    ]
      .map(
        ([id, label], i) =>
          `<label><input type="radio" name="team" value="${escapeHtml(id)}"${i === 0 ? ' checked' : ''}> ${escapeHtml(label)}</label><br>`,
      )
      .join('');
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Install handoff-relay (fake Slack)</title></head><body>` +
          `<h1>handoff-relay is requesting permission to access a workspace</h1>` +
          `<p>Fake Slack on this machine (development only). Bot scopes: ${scopes.map((sc) => `<code>${escapeHtml(sc)}</code>`).join(', ')}</p>` +
          `<form method="get" action="/oauth/v2/authorize">${hidden}${choices}<button type="submit" id="allow">Allow</button></form></body></html>`,
      );
  }

  private oauthV2Access(req: IncomingMessage, a: Args): Body {
    if (!this.oauthApp) return fail('invalid_client_id');
    const basic = /^Basic\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    const [id, secret] = basic
      ? Buffer.from(basic[1]!, 'base64').toString('utf8').split(':')
      : [a.client_id as string | undefined, a.client_secret as string | undefined];
    if (id !== this.oauthApp.clientId) return fail('invalid_client_id');
    if (secret !== this.oauthApp.clientSecret) return fail('bad_client_secret');
    if (a.grant_type === 'refresh_token') {
      const team = typeof a.refresh_token === 'string' ? this.refreshTokens.get(a.refresh_token) : undefined;
      if (!team) return fail('invalid_refresh_token');
      this.refreshTokens.delete(a.refresh_token as string);
      return {
        ok: true,
        app_id: APP_ID,
        scope: FAKE_SLACK_SCOPES.join(','),
        token_type: 'bot',
        ...this.issueToken(team),
        bot_user_id: BOT_USER_ID,
        ...this.installedWhere(team),
      };
    }
    const grant = typeof a.code === 'string' ? this.codes.get(a.code) : undefined;
    if (!grant || grant.used) return fail('invalid_code');
    grant.used = true;
    if ((a.redirect_uri ?? '') !== grant.redirectUri) return fail('bad_redirect_uri');
    return {
      ok: true,
      app_id: APP_ID,
      authed_user: { id: 'U0INSTALLER' },
      scope: FAKE_SLACK_SCOPES.join(','),
      token_type: 'bot',
      ...this.issueToken(grant.team),
      bot_user_id: BOT_USER_ID,
      ...this.installedWhere(grant.team),
    };
  }

  /** A person of another workspace than the calling token's is unknown to it (an IM with them too). */
  private otherTeam(a: Args): Body | null {
    const teamOf = (user: unknown) =>
      typeof user === 'string' ? ((this.users.get(user)?.team_id as string | undefined) ?? null) : null;
    for (const key of ['user', 'users']) {
      const ids = typeof a[key] === 'string' ? (a[key] as string).split(',') : [];
      if (ids.some((u) => teamOf(u) !== null && !this.sees(this.callerTeam, teamOf(u)!))) return fail('user_not_found');
    }
    const ch = typeof a.channel === 'string' ? this.channels.get(a.channel) : undefined;
    if (ch?.kind === 'im' && teamOf(ch.user) !== null && !this.sees(this.callerTeam, teamOf(ch.user)!))
      return fail('channel_not_found');
    // An org-wide token names the workspace a workspace-wide call is about; it must be one of its org's.
    if (this.isOrg(this.callerTeam) && present(a.team_id) && !this.sees(this.callerTeam, String(a.team_id)))
      return fail('team_access_not_granted');
    return null;
  }

  setStreaming(available: boolean): void {
    this.streamingAvailable = available;
  }

  /**
   * `anyUser`: a well-formed user id the workspace does not know yet joins it when a call names it (the local Slack
   * page: whoever is registered with --slack-user is there), instead of `user_not_found`.
   */
  constructor(
    readonly token: string,
    private readonly anyUser = false,
  ) {
    this.addUser(BOT_USER_ID, { name: 'handoff-relay', real_name: 'handoff-relay' });
    (this.users.get(BOT_USER_ID) as Body).is_bot = true;
  }

  listen(): Promise<FakeSlack> {
    this.server.on('upgrade', (req, socket, head) => this.upgradeSocketMode(req, socket, head));
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => {
        const { port } = this.server.address() as AddressInfo;
        this.origin = `http://127.0.0.1:${port}`;
        this.url = `${this.origin}/api/`;
        resolve(this);
      });
    });
  }

  // --- test-facing API ---------------------------------------------------------------------

  callsTo(method: string): FakeSlackCall[] {
    return this.calls.filter((c) => c.method === method && c.response.ok === true);
  }

  waitFor(method: string, predicate?: (c: FakeSlackCall) => boolean, timeoutMs = 15_000): Promise<FakeSlackCall> {
    const match = (c: FakeSlackCall) => c.method === method && c.response.ok === true && (!predicate || predicate(c));
    try {
      const seen = this.calls.find(match);
      if (seen) return Promise.resolve(seen);
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        match,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          const what = predicate ? ' matching the predicate' : '';
          reject(
            new Error(
              `fake Slack: no successful ${method} call${what} within ${timeoutMs} ms.\n${this.describeCalls()}`,
            ),
          );
        }, timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  addUser(id: string, profile: FakeSlackUserProfile = {}): void {
    if (!USER_ID.test(id))
      throw new Error(`fake Slack: "${id}" does not look like a Slack user id (U or W, then A-Z0-9)`);
    const name = profile.name ?? id.toLowerCase();
    const realName = profile.real_name ?? name;
    const displayName = profile.display_name ?? '';
    const tz = profile.tz ?? 'Europe/London';
    const { offsetSeconds, label } = zoneNow(tz);
    const team = profile.team ?? TEAM_ID;
    if (!this.workspaces.has(team)) throw new Error(`fake Slack: no workspace ${team}; addWorkspace it first`);
    this.users.set(id, {
      id,
      team_id: team,
      name,
      deleted: false,
      color: '9f69e7',
      real_name: realName,
      tz,
      tz_label: label,
      tz_offset: offsetSeconds,
      profile: {
        real_name: realName,
        real_name_normalized: realName,
        display_name: displayName,
        display_name_normalized: displayName,
        team,
      },
      is_admin: profile.is_admin ?? false,
      is_owner: profile.is_owner ?? false,
      is_bot: false,
      is_app_user: false,
      updated: 1700000000,
    });
  }

  view(id: string): Body | undefined {
    return this.views.get(id)?.response;
  }

  userIds(): string[] {
    return [...this.users.keys()].filter((id) => id !== BOT_USER_ID);
  }

  /** Whether the workspace has this person; with `anyUser`, a well-formed id joins it first. */
  private hasUser(id: unknown): id is string {
    if (typeof id !== 'string') return false;
    if (!this.users.has(id) && this.anyUser && USER_ID.test(id)) this.addUser(id);
    return this.users.has(id);
  }

  addChannel(id: string, members?: string[], opts: { botMember?: boolean } = {}): void {
    if (!/^[CG][A-Z0-9]{2,}$/.test(id))
      throw new Error(`fake Slack: "${id}" does not look like a channel id (C or G, then A-Z0-9)`);
    this.channels.set(id, { kind: 'channel', members: members && new Set(members), botMember: opts.botMember ?? true });
  }

  setBotMember(id: string, member: boolean): void {
    const channel = this.channels.get(id);
    if (channel?.kind !== 'channel') throw new Error(`fake Slack: no channel ${id} (addChannel first)`);
    channel.botMember = member;
  }

  /** Slack's answer to the bot writing or reading a channel it is not in. */
  private notInChannel(id: string): Body | null {
    const channel = this.channels.get(id);
    return channel?.kind === 'channel' && !channel.botMember ? fail('not_in_channel') : null;
  }

  addUserMessage(channel: string, user: string, text: string, opts: { thread_ts?: string } = {}): string {
    if (!this.channels.has(channel)) throw new Error(`fake Slack: no channel ${channel}; addChannel it first`);
    if (!this.users.has(user)) throw new Error(`fake Slack: no user ${user}; addUser it first`);
    const list = this.messages.get(channel) ?? [];
    if (opts.thread_ts && !list.some((m) => m.ts === opts.thread_ts))
      throw new Error(`fake Slack: no message ${opts.thread_ts} in ${channel}`);
    const message: FakeSlackMessage = {
      ts: this.nextTs(),
      text,
      blocks: [],
      updated: 0,
      user,
      ...(opts.thread_ts ? { thread_ts: opts.thread_ts } : {}),
    };
    list.push(message);
    this.messages.set(channel, list);
    return message.ts;
  }

  shareLinks(channel: string, user: string, urls: string[]): FakeSlackSharedLinks {
    const messageTs = this.addUserMessage(channel, user, urls.map((u) => `<${u}>`).join(' '));
    const unfurlId = `${messageTs}.${randomUUID().slice(0, 8)}`;
    const entry = { key: `${channel}:${messageTs}`, urls: new Set(urls) };
    this.shared.set(entry.key, entry);
    this.shared.set(unfurlId, entry);
    return {
      channel,
      user,
      message_ts: messageTs,
      unfurl_id: unfurlId,
      source: 'conversations_history',
      links: urls.map((url) => ({ domain: new URL(url).hostname, url })),
    };
  }

  imChannelId(userId: string): string {
    return `D${userId.slice(1)}`;
  }

  responseUrl(name = 'default'): string {
    return `${this.origin}/response/${encodeURIComponent(name)}`;
  }

  triggerId(opts: { issuedMsAgo?: number } = {}): string {
    const id = `${1700000000 + this.triggers.size + 1}.${Math.floor(Math.random() * 1e12)}.${Math.random().toString(16).slice(2, 14)}`;
    this.triggers.set(id, { issuedAt: Date.now() - (opts.issuedMsAgo ?? 0), used: false });
    return id;
  }

  failNext(method: string, response: FakeSlackFailure): void {
    const queue = this.failures.get(method) ?? [];
    queue.push(response);
    this.failures.set(method, queue);
  }

  // --- slack-delivery additions -------------------------------------------------------------

  rateLimitNext(method: string, opts: { times?: number; retryAfterSeconds?: number } = {}): void {
    const { times = 1, retryAfterSeconds = 1 } = opts;
    for (let i = 0; i < times; i += 1) {
      this.failNext(method, {
        status: 429,
        headers: { 'Retry-After': String(retryAfterSeconds) },
        body: { ok: false, error: 'ratelimited' },
      });
    }
  }

  dropResponseNext(method: string, times = 1): void {
    this.drops.set(method, (this.drops.get(method) ?? 0) + times);
  }

  holdNext(method: string, match: (args: Args) => boolean = () => true): FakeSlackHold {
    let arrive!: (args: Args) => void;
    let release!: () => void;
    const arrived = new Promise<Args>((resolve) => (arrive = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    this.holds.push({ method, match, arrive, released });
    return { arrived, release };
  }

  // --- end slack-delivery additions ---------------------------------------------------------

  reset(): void {
    this.streamingAvailable = true;
    this.calls.length = 0;
    this.messages.clear();
    this.homeViews.clear();
    this.unfurls.clear();
    this.views.clear();
    this.failures.clear();
    this.drops.clear();
    this.holds.length = 0;
  }

  close(): Promise<void> {
    for (const w of this.waiters) {
      clearTimeout(w.timer);
      w.reject(new Error('fake Slack closed while waiting'));
    }
    this.waiters.clear();
    for (const ws of this.sockets) ws.terminate();
    this.wss.close();
    return new Promise((resolve, reject) => {
      this.server.close((err) => (err ? reject(err) : resolve()));
      this.server.closeAllConnections();
    });
  }

  // --- Sign in with Slack (OpenID Connect) ----------------------------------------------------

  signInAs(userId: string | null): void {
    if (userId !== null && !this.users.has(userId)) throw new Error(`fake Slack: no user ${userId} in the workspace`);
    this.oidcUser = userId;
  }

  /**
   * GET /openid/connect/authorize, strictly: response_type=code, scope with openid, this app's client_id, an http(s)
   * redirect_uri, a state. A person signed in (signInAs, or chosen on the page: fake_user) goes back to redirect_uri
   * with a single-use code and the state; fake_user=deny answers error=access_denied, as pressing Cancel on Slack's.
   */
  private oidcAuthorize(url: URL, res: ServerResponse): void {
    const q = url.searchParams;
    const refuse = (why: string) =>
      void res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' }).end(`fake Slack: ${why}`);
    if (q.get('response_type') !== 'code') return refuse('response_type must be code');
    if (!(q.get('scope') ?? '').split(/[\s,+]+/).includes('openid')) return refuse('scope must include openid');
    if (q.get('client_id') !== this.clientId) return refuse('invalid_client_id');
    const redirectUri = q.get('redirect_uri') ?? '';
    if (!/^https?:\/\/[^\s]+$/.test(redirectUri)) return refuse('bad_redirect_uri');
    const state = q.get('state') ?? '';
    const back = new URL(redirectUri);
    if (state) back.searchParams.set('state', state);
    const chosen = q.get('fake_user') ?? this.oidcUser;
    if (chosen === 'deny') {
      back.searchParams.set('error', 'access_denied');
      return void res.writeHead(302, { location: back.toString() }).end();
    }
    if (chosen && chosen !== BOT_USER_ID && this.hasUser(chosen)) {
      const code = `${TEAM_ID}.${randomUUID().replace(/-/g, '')}`;
      this.oidcCodes.set(code, { user: chosen, redirectUri, nonce: q.get('nonce'), issuedAt: Date.now(), used: false });
      back.searchParams.set('code', code);
      this.record({
        method: 'openid.connect.authorize',
        args: Object.fromEntries(q),
        at: Date.now(),
        response: { ok: true, user: chosen },
      });
      return void res.writeHead(302, { location: back.toString() }).end();
    }
    // Nobody signed in: a page to choose who (the local Slack page's people), or to cancel.
    const esc = (t: string) => t.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
    const pick = (user: string, label: string) => {
      const next = new URL(url);
      next.searchParams.set('fake_user', user);
      return `<li><a href="${esc(next.pathname + next.search)}">${esc(label)}</a></li>`;
    };
    // Or a member id typed in (with `anyUser`, as the local Slack page runs it, any well-formed id joins).
    const hidden = [...q.entries()]
      .filter(([name]) => name !== 'fake_user')
      .map(([name, value]) => `<input type="hidden" name="${esc(name)}" value="${esc(value)}">`)
      .join('');
    const typed =
      `<form method="get" action="/openid/connect/authorize">${hidden}<label>Slack member id ` +
      `<input name="fake_user" placeholder="U0AAAAAAA" required></label> <button type="submit">Continue</button></form>`;
    const people = this.userIds().map((id) =>
      pick(id, `Continue as ${String(this.users.get(id)?.real_name ?? id)} (${id})`),
    );
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end(
        `<!doctype html><title>Sign in with Slack (fake)</title><h1>Sign in to ${esc(String(redirectUri))} with Slack</h1>` +
          `<p>This is the fake Slack on this machine: choose who you are.</p><ul>${people.join('') || '<li>No one is in this workspace yet.</li>'}${pick('deny', 'Cancel')}</ul>${typed}`,
      );
  }

  /**
   * openid.connect.token, strictly: this app's client id and secret (form fields or HTTP Basic), a code this page
   * issued within 10 minutes and never used, the same redirect_uri; answers an RS256 id_token with Slack's claims.
   */
  private oidcToken(args: Args, req: IncomingMessage): Body {
    let clientId = args.client_id;
    let clientSecret = args.client_secret;
    const basic = /^Basic\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    if (basic) {
      const [id, secret] = Buffer.from(basic[1]!, 'base64').toString('utf8').split(':');
      clientId = id;
      clientSecret = secret;
    }
    if (args.grant_type !== undefined && args.grant_type !== 'authorization_code') return fail('invalid_grant_type');
    if (clientId !== this.clientId) return fail('invalid_client_id');
    if (clientSecret !== this.clientSecret) return fail('bad_client_secret');
    const issued = this.oidcCodes.get(String(args.code ?? ''));
    if (!issued || issued.used || Date.now() - issued.issuedAt > OIDC_CODE_TTL_MS) return fail('invalid_code');
    if (args.redirect_uri !== issued.redirectUri) return fail('bad_redirect_uri');
    issued.used = true;
    const user = this.users.get(issued.user)!;
    const now = Math.floor(Date.now() / 1000);
    const claims = {
      iss: 'https://slack.com',
      sub: issued.user,
      aud: this.clientId,
      exp: now + 3600,
      iat: now,
      auth_time: now,
      ...(issued.nonce ? { nonce: issued.nonce } : {}),
      at_hash: randomUUID().slice(0, 22),
      'https://slack.com/user_id': issued.user,
      'https://slack.com/team_id': TEAM_ID,
      name: user.real_name,
      'https://slack.com/team_name': 'Fake Team',
    };
    const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const signed = `${part({ typ: 'JWT', alg: 'RS256', kid: 'fake-slack-oidc' })}.${part(claims)}`;
    const signature = sign(
      'sha256',
      Buffer.from(signed),
      (this.oidcKey ??= generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey),
    ).toString('base64url');
    return {
      ok: true,
      access_token: `xoxp-fake-${randomUUID()}`,
      token_type: 'Bearer',
      id_token: `${signed}.${signature}`,
    };
  }

  // --- HTTP ----------------------------------------------------------------------------------

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const url = new URL(req.url ?? '/', this.origin);
    if (url.pathname.startsWith('/response/')) return this.handleResponseUrl(req, res, raw);
    if (url.pathname === '/openid/connect/authorize' && req.method === 'GET') return this.oidcAuthorize(url, res);
    if (url.pathname === '/oauth/v2/authorize' && req.method === 'GET') return this.authorize(url, res);
    if (!url.pathname.startsWith('/api/') || (req.method !== 'POST' && req.method !== 'GET')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('fake Slack: not a Web API path');
      return;
    }
    const method = decodeURIComponent(url.pathname.slice('/api/'.length));
    const parsed = parseArgs(req, raw, url);
    const { args } = parsed;

    const held = this.holds.findIndex((h) => h.method === method && h.match(args));
    if (held >= 0) {
      const [hold] = this.holds.splice(held, 1);
      hold.arrive(args);
      await hold.released;
    }
    // Nothing below awaits: the caller's team stays this call's until it is recorded.
    this.callerKnown = false;
    const scripted = this.failures.get(method)?.shift();
    if (scripted) {
      const body = scripted.body ?? { ok: false, error: 'fatal_error' };
      return this.respond(res, method, args, body, scripted.status ?? 200, scripted.headers);
    }
    if ('error' in parsed) return this.respond(res, method, args, fail(parsed.error));
    // openid.connect.token authenticates the app by its client id and secret, not by a token.
    if (method === 'openid.connect.token') return this.respond(res, method, args, this.oidcToken(args, req));
    // oauth.v2.access takes the app's credentials, not a token.
    if (method === 'oauth.v2.access') return this.respond(res, method, args, this.oauthV2Access(req, args));
    const handler = this.handlers[method];
    if (!handler) return this.respond(res, method, args, fail('unknown_method'));

    const header = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    // Slack takes a token from the form but never from a JSON body.
    const token = header?.[1] ?? (parsed.json ? undefined : args.token);
    if (!present(token)) return this.respond(res, method, args, fail('not_authed'));
    // slack-delivery: the app-level token opens sockets and nothing else; the bot token cannot open one.
    const expected = method === 'apps.connections.open' ? this.appToken : this.token;
    if (token !== expected && (token === this.token || token === this.appToken)) {
      return this.respond(res, method, args, fail('not_allowed_token_type'));
    }
    const installed = typeof token === 'string' ? this.tokens.get(token) : undefined;
    if (installed?.revoked) return this.respond(res, method, args, fail('token_revoked'));
    if (installed?.expired) return this.respond(res, method, args, fail('token_expired'));
    if (token !== expected && !(installed && method !== 'apps.connections.open'))
      return this.respond(res, method, args, fail('invalid_auth'));
    this.callerTeam = installed?.team ?? TEAM_ID;
    this.callerKnown = true;

    let body: Body;
    try {
      body = this.otherTeam(args) ?? handler(args);
    } catch (err) {
      body = fail('internal_error', `fake Slack bug: ${(err as Error).stack ?? String(err)}`);
    }
    const drops = this.drops.get(method) ?? 0;
    if (drops > 0) {
      // slack-delivery: the call took effect (and is recorded), but its caller never hears back.
      this.drops.set(method, drops - 1);
      this.record({ method, args, at: Date.now(), response: { ...body, response_lost: true } });
      req.socket.destroy();
      return;
    }
    this.respond(res, method, args, body);
  }

  private respond(
    res: ServerResponse,
    method: string,
    args: Args,
    body: Body,
    status = 200,
    headers: Record<string, string> = {},
  ): void {
    const call: FakeSlackCall = {
      method,
      args,
      at: Date.now(),
      response: body,
      ...(this.callerKnown ? { team: this.callerTeam } : {}),
    };
    this.record(call);
    res
      .writeHead(status, {
        'content-type': 'application/json; charset=utf-8',
        'x-oauth-scopes': FAKE_SLACK_SCOPES.join(','),
        ...headers,
      })
      .end(JSON.stringify(body));
  }

  private record(call: FakeSlackCall): void {
    this.calls.push(call);
    if (call.response.ok !== true) return;
    for (const w of this.waiters) {
      let matched: boolean;
      try {
        matched = w.match(call);
      } catch (err) {
        matched = false;
        this.waiters.delete(w);
        clearTimeout(w.timer);
        w.reject(err as Error);
      }
      if (matched) {
        this.waiters.delete(w);
        clearTimeout(w.timer);
        w.resolve(call);
      }
    }
  }

  /** response_url: a JSON message (Bolt's respond()); same message rules as chat.postMessage, errors as HTTP 400. */
  private handleResponseUrl(req: IncomingMessage, res: ServerResponse, raw: Buffer): void {
    let args: Args = {};
    let body: Body;
    try {
      const parsed: unknown = JSON.parse(raw.toString('utf8'));
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
      args = parsed as Args;
      args.response_url = decodeURIComponent((req.url ?? '').slice('/response/'.length));
      const problem = truthy(args.delete_original) ? null : this.checkMessageContent(args, true);
      body = problem ?? { ok: true };
    } catch {
      body = fail('invalid_payload');
    }
    this.record({ method: 'response_url', args, at: Date.now(), response: body });
    res
      .writeHead(body.ok === true ? 200 : 400, { 'content-type': 'application/json; charset=utf-8' })
      .end(JSON.stringify(body));
  }

  private describeCalls(): string {
    if (this.calls.length === 0)
      return 'No calls reached the fake Slack at all (is slackApiUrl / SLACK_API_URL set to fake.url?).';
    const lines = this.calls.map((c, i) => {
      const outcome = c.response.ok === true ? 'ok' : `ERROR ${String(c.response.error)}`;
      const meta = c.response.response_metadata as { messages?: string[] } | undefined;
      const detail = meta?.messages?.length ? ` ${meta.messages.join(' ')}` : '';
      const shown = ['channel', 'user', 'users', 'user_id', 'ts', 'thread_ts', 'trigger_id', 'text']
        .filter((k) => c.args[k] !== undefined)
        .map((k) => `${k}=${JSON.stringify(String(c.args[k])).slice(0, 82)}`)
        .join(' ');
      return `  #${i + 1} ${c.method} → ${outcome}${detail}  ${shown}`;
    });
    return `Calls seen (${this.calls.length}):\n${lines.join('\n')}`;
  }

  // --- shared rules --------------------------------------------------------------------------

  /** Like Slack's: the wall-clock time in seconds with six decimals, unique and increasing within a workspace. */
  private nextTs(): string {
    this.lastTsMicros = Math.max(Date.now() * 1000, this.lastTsMicros + 1);
    return `${Math.floor(this.lastTsMicros / 1_000_000)}.${String(this.lastTsMicros % 1_000_000).padStart(6, '0')}`;
  }

  /** no_text / msg_too_long / invalid_blocks / msg_blocks_too_long, in that order; null when the content is fine. */
  private checkMessageContent(args: Args, requireContent: boolean): Body | null {
    const hasBlocks = args.blocks !== undefined;
    if (hasBlocks && !Array.isArray(args.blocks)) {
      return fail('invalid_blocks', '[ERROR] blocks must be a JSON array [json-pointer:/blocks]');
    }
    const text = args.text;
    if (text !== undefined && typeof text !== 'string')
      return fail('invalid_arguments', '[ERROR] text must be a string');
    const hasText = typeof text === 'string' && text.trim() !== '';
    if (!hasText && (requireContent || hasBlocks)) {
      // Slack only needs one of text/blocks; our product rule is stricter: blocks always come with a text fallback.
      return fail(
        'no_text',
        hasBlocks ? '[ERROR] blocks were sent without a top-level text fallback' : '[ERROR] no text',
      );
    }
    if (typeof text === 'string' && text.length > MESSAGE_TEXT_LIMIT) return fail('msg_too_long');
    if (hasBlocks) {
      const problem = findBlockProblem(args.blocks, 'message');
      if (problem) return problemBody(problem);
    }
    return null;
  }

  private knownChannel(id: unknown): string | null {
    return typeof id === 'string' && this.channels.has(id) ? id : null;
  }

  private openIm(userId: string): { id: string; alreadyOpen: boolean } {
    const id = this.imChannelId(userId);
    const alreadyOpen = this.channels.has(id);
    if (!alreadyOpen) this.channels.set(id, { kind: 'im', user: userId });
    return { id, alreadyOpen };
  }

  private messageObject(m: FakeSlackMessage, withMetadata = false): Body {
    return {
      type: 'message',
      text: m.text,
      ...(m.user ? { user: m.user } : { user: BOT_USER_ID, bot_id: BOT_ID, app_id: APP_ID }),
      team: TEAM_ID,
      ts: m.ts,
      ...(m.blocks.length ? { blocks: m.blocks } : {}),
      ...(m.thread_ts ? { thread_ts: m.thread_ts, parent_user_id: BOT_USER_ID } : {}),
      ...(withMetadata && m.metadata ? { metadata: m.metadata } : {}),
      ...(m.user
        ? {}
        : { bot_profile: { id: BOT_ID, app_id: APP_ID, name: 'handoff-relay', deleted: false, team_id: TEAM_ID } }),
    };
  }

  // --- methods -------------------------------------------------------------------------------

  private authTest(): Body {
    if (this.isOrg(this.callerTeam))
      return {
        ok: true,
        url: 'https://handoff-relay-test.enterprise.slack.com/',
        team: this.orgs.get(this.callerTeam),
        user: 'handoff-relay',
        team_id: this.callerTeam,
        enterprise_id: this.callerTeam,
        user_id: BOT_USER_ID,
        bot_id: BOT_ID,
        is_enterprise_install: true,
      };
    const org = this.orgOfTeam.get(this.callerTeam);
    return {
      ok: true,
      url: 'https://handoff-relay-test.slack.com/',
      team: this.workspaces.get(this.callerTeam),
      user: 'handoff-relay',
      team_id: this.callerTeam,
      ...(org ? { enterprise_id: org } : {}),
      user_id: BOT_USER_ID,
      bot_id: BOT_ID,
      is_enterprise_install: false,
    };
  }

  private conversationsOpen(a: Args): Body {
    if (present(a.channel) && !present(a.users)) {
      const id = this.knownChannel(a.channel);
      const ch = id ? this.channels.get(id) : undefined;
      if (!id || ch?.kind !== 'im') return fail('channel_not_found');
      return { ok: true, no_op: true, already_open: true, channel: { id } };
    }
    const users =
      typeof a.users === 'string'
        ? a.users
            .split(',')
            .map((u) => u.trim())
            .filter(Boolean)
        : [];
    if (users.length === 0) return fail('users_list_not_supplied');
    if (users.length > 8) return fail('too_many_users');
    const unknown = users.find((u) => !this.hasUser(u));
    if (unknown) return fail('user_not_found');
    if (users.length > 1) {
      return { ok: false, error: 'missing_scope', needed: 'mpim:write', provided: FAKE_SLACK_SCOPES.join(',') };
    }
    const user = users[0];
    if (user === BOT_USER_ID) return fail('cannot_dm_bot');
    const { id, alreadyOpen } = this.openIm(user);
    const channel: Body = truthy(a.return_im)
      ? { id, created: 1700000000, is_im: true, is_org_shared: false, user, is_user_deleted: false, priority: 0 }
      : { id };
    return alreadyOpen ? { ok: true, no_op: true, already_open: true, channel } : { ok: true, channel };
  }

  private postMessage(a: Args): Body {
    // Like Slack, a user id as channel posts into the app's DM with that user.
    let channel = this.knownChannel(a.channel);
    if (!channel && this.hasUser(a.channel) && a.channel !== BOT_USER_ID) {
      channel = this.openIm(a.channel).id;
    }
    if (!channel) return fail('channel_not_found');
    const outside = this.notInChannel(channel);
    if (outside) return outside;
    const problem = this.checkMessageContent(a, true);
    if (problem) return problem;
    const metadata = checkMetadata(a.metadata);
    if ('error' in metadata) return metadata.error;
    const list = this.messages.get(channel) ?? [];
    let threadTs: string | undefined;
    if (present(a.thread_ts)) {
      threadTs = String(a.thread_ts);
      const parent = list.find((m) => m.ts === threadTs);
      if (!parent) return fail('thread_not_found');
      // Replying to a reply lands in the parent's thread, as in Slack.
      threadTs = parent.thread_ts ?? parent.ts;
    }
    const message: FakeSlackMessage = {
      ts: this.nextTs(),
      text: a.text as string,
      blocks: (a.blocks as unknown[] | undefined) ?? [],
      ...(threadTs ? { thread_ts: threadTs } : {}),
      updated: 0,
      ...(metadata.value ? { metadata: metadata.value } : {}),
    };
    list.push(message);
    this.messages.set(channel, list);
    return { ok: true, channel, ts: message.ts, message: this.messageObject(message) };
  }

  /**
   * chat.startStream: a reply in a thread (thread_ts required, as Slack asks), started with markdown_text or chunks;
   * outside a DM recipient_user_id and recipient_team_id are required. Each markdown_text is at most 12,000 characters.
   */
  private startStream(a: Args): Body {
    if (!this.streamingAvailable) return fail('unknown_method');
    const channel = this.knownChannel(a.channel);
    if (!channel) return fail('channel_not_found');
    const outside = this.notInChannel(channel);
    if (outside) return outside;
    if (!present(a.thread_ts)) return fail('invalid_arguments', '[ERROR] missing required field: thread_ts');
    const problem = this.streamText(a, true);
    if (problem) return problem;
    const ch = this.channels.get(channel) as Channel;
    if (ch.kind !== 'im' && (!present(a.recipient_user_id) || !present(a.recipient_team_id)))
      return fail('invalid_arguments', '[ERROR] recipient_user_id and recipient_team_id are required outside a DM');
    if (present(a.task_display_mode) && a.task_display_mode !== 'timeline' && a.task_display_mode !== 'plan')
      return fail('invalid_arguments', '[ERROR] task_display_mode must be timeline or plan');
    const list = this.messages.get(channel) ?? [];
    const parent = list.find((m) => m.ts === String(a.thread_ts));
    if (!parent) return fail('thread_not_found');
    const text = this.chunkText(a);
    const message: FakeSlackMessage = {
      ts: this.nextTs(),
      text,
      blocks: [],
      thread_ts: parent.thread_ts ?? parent.ts,
      updated: 0,
      streaming: true,
      chunks: [text],
    };
    list.push(message);
    this.messages.set(channel, list);
    return { ok: true, channel, ts: message.ts };
  }

  /** chat.appendStream: more markdown to a message still streaming (message_not_in_streaming_state once stopped). */
  private appendStream(a: Args): Body {
    if (!this.streamingAvailable) return fail('unknown_method');
    const found = this.streamed(a);
    if ('error' in found) return found.error;
    const problem = this.streamText(a, true);
    if (problem) return problem;
    const text = this.chunkText(a);
    found.message.text += text;
    found.message.chunks!.push(text);
    return { ok: true, channel: found.channel, ts: found.message.ts };
  }

  /** chat.stopStream: ends the stream, with optional last markdown and blocks (checked like a message's). */
  private stopStream(a: Args): Body {
    if (!this.streamingAvailable) return fail('unknown_method');
    const found = this.streamed(a);
    if ('error' in found) return found.error;
    const problem = this.streamText(a, false);
    if (problem) return problem;
    if (a.blocks !== undefined) {
      const blocks = findBlockProblem(a.blocks, 'message');
      if (blocks) return problemBody(blocks);
    }
    const metadata = checkMetadata(a.metadata);
    if ('error' in metadata) return metadata.error;
    const text = this.chunkText(a);
    if (text) {
      found.message.text += text;
      found.message.chunks!.push(text);
    }
    if (a.blocks !== undefined) found.message.blocks = a.blocks as unknown[];
    if (metadata.value) found.message.metadata = metadata.value;
    found.message.streaming = false;
    return { ok: true, channel: found.channel, ts: found.message.ts, message: this.messageObject(found.message) };
  }

  private streamed(a: Args): { channel: string; message: FakeSlackMessage } | { error: Body } {
    const channel = this.knownChannel(a.channel);
    if (!channel) return { error: fail('channel_not_found') };
    if (!present(a.ts)) return { error: fail('invalid_arguments', '[ERROR] missing required field: ts') };
    const message = this.messages.get(channel)?.find((m) => m.ts === String(a.ts));
    if (!message) return { error: fail('message_not_found') };
    if (message.streaming !== true) return { error: fail('message_not_in_streaming_state') };
    return { channel, message };
  }

  /** markdown_text (a string of at most 12,000 characters) or chunks (an array of markdown_text chunks) — one required when `required`. */
  private streamText(a: Args, required: boolean): Body | null {
    if (a.markdown_text !== undefined) {
      if (typeof a.markdown_text !== 'string')
        return fail('invalid_arguments', '[ERROR] markdown_text must be a string');
      if (a.markdown_text.length > 12_000) return fail('msg_too_long');
    }
    if (a.chunks !== undefined) {
      if (!Array.isArray(a.chunks) || a.chunks.length === 0)
        return fail('invalid_arguments', '[ERROR] chunks must be a non-empty array');
      for (const chunk of a.chunks as Array<Record<string, unknown>>) {
        if (!chunk || typeof chunk.type !== 'string') return fail('invalid_chunks');
        if (chunk.type === 'markdown_text' && (typeof chunk.text !== 'string' || chunk.text.length > 12_000))
          return fail('invalid_chunks');
      }
    }
    if (required && !present(a.markdown_text) && a.chunks === undefined)
      return fail('invalid_arguments', '[ERROR] markdown_text or chunks is required');
    return null;
  }

  private chunkText(a: Args): string {
    if (typeof a.markdown_text === 'string') return a.markdown_text;
    const chunks = (a.chunks as Array<Record<string, unknown>> | undefined) ?? [];
    return chunks.map((c) => (c.type === 'markdown_text' ? String(c.text) : '')).join('');
  }

  private update(a: Args): Body {
    const channel = this.knownChannel(a.channel);
    if (!channel) return fail('channel_not_found');
    const outside = this.notInChannel(channel);
    if (outside) return outside;
    const message = this.messages.get(channel)?.find((m) => m.ts === a.ts);
    if (!message) return fail('message_not_found');
    const problem = this.checkMessageContent(a, true);
    if (problem) return problem;
    const metadata = checkMetadata(a.metadata);
    if ('error' in metadata) return metadata.error;
    if (metadata.value) message.metadata = metadata.value;
    message.text = a.text as string;
    // Slack keeps the previous blocks when `blocks` is left out; an empty array removes them.
    if (a.blocks !== undefined) message.blocks = a.blocks as unknown[];
    message.updated += 1;
    return { ok: true, channel, ts: message.ts, text: message.text, message: this.messageObject(message) };
  }

  private postEphemeral(a: Args): Body {
    const channel = this.knownChannel(a.channel);
    if (!channel) return fail('channel_not_found');
    if (!this.hasUser(a.user)) return fail('user_not_found');
    const ch = this.channels.get(channel) as Channel;
    const member = ch.kind === 'im' ? ch.user === a.user : !ch.members || ch.members.has(a.user);
    if (!member) return fail('user_not_in_channel');
    const problem = this.checkMessageContent(a, true);
    if (problem) return problem;
    return { ok: true, message_ts: this.nextTs() };
  }

  private usersInfo(a: Args): Body {
    const user = this.hasUser(a.user) ? this.users.get(a.user) : undefined;
    return user ? { ok: true, user } : fail('user_not_found');
  }

  /**
   * Every member of the workspace (the bot too), in the order added, a page at a time (limit 1..1000 as Slack allows).
   * An org-wide token must say which of its workspaces (`team_id`), as Slack requires.
   */
  private usersList(a: Args): Body {
    const org = this.isOrg(this.callerTeam);
    if (org && !present(a.team_id)) return fail('missing_argument', '[ERROR] team_id is required for an org token');
    const team = org ? String(a.team_id) : this.callerTeam;
    const page = this.pageOf(
      [...this.users.values()].filter((u) => u.id === BOT_USER_ID || u.team_id === team),
      a,
      1_000,
    );
    if ('error' in page) return page.error;
    return { ok: true, members: page.items, cache_ts: Math.floor(Date.now() / 1000), response_metadata: page.metadata };
  }

  /** A message's permalink (no scope needed): the channel must be known and hold a message with that ts. */
  private getPermalink(a: Args): Body {
    const channel = this.knownChannel(a.channel);
    if (!channel) return fail('channel_not_found');
    if (!present(a.message_ts)) return fail('invalid_arguments', '[ERROR] missing required field: message_ts');
    const message = this.messages.get(channel)?.find((m) => m.ts === a.message_ts);
    if (!message) return fail('message_not_found');
    const base = `https://handoff-relay-test.slack.com/archives/${channel}/p${message.ts.replace('.', '')}`;
    return {
      ok: true,
      channel,
      permalink: message.thread_ts ? `${base}?thread_ts=${message.thread_ts}&cid=${channel}` : base,
    };
  }

  /**
   * chat.unfurl (links:write): `unfurls` a JSON object of shared URL → { blocks } (or attachment fields), for a message
   * named by channel + ts or by unfurl_id + source. Only URLs shareLinks shared in that message may be unfurled.
   */
  private unfurl(a: Args): Body {
    let entry: { key: string; urls: Set<string> } | undefined;
    if (present(a.unfurl_id) || present(a.source)) {
      if (!present(a.unfurl_id) || !present(a.source))
        return fail('invalid_arguments', '[ERROR] unfurl_id and source go together');
      entry = this.shared.get(String(a.unfurl_id));
      if (!entry) return fail('cannot_unfurl_message');
    } else {
      if (!present(a.channel)) return fail('missing_channel');
      if (!present(a.ts)) return fail('missing_ts');
      if (!this.knownChannel(a.channel)) return fail('channel_not_found');
      entry = this.shared.get(`${String(a.channel)}:${String(a.ts)}`);
      if (!entry) return fail('cannot_unfurl_message');
    }
    if (!present(a.unfurls)) return fail('missing_unfurls');
    let unfurls: unknown = a.unfurls;
    if (typeof unfurls === 'string') {
      try {
        unfurls = JSON.parse(unfurls);
      } catch {
        return fail('invalid_unfurls_format', '[ERROR] unfurls must be a JSON object');
      }
    }
    if (
      typeof unfurls !== 'object' ||
      unfurls === null ||
      Array.isArray(unfurls) ||
      Object.keys(unfurls).length === 0
    ) {
      return fail('invalid_unfurls_format', '[ERROR] unfurls must be a non-empty JSON object of URL → unfurl');
    }
    for (const [url, value] of Object.entries(unfurls as Record<string, unknown>)) {
      if (!entry.urls.has(url)) return fail('cannot_unfurl_url', `[ERROR] ${url} was not shared in this message`);
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        return fail('invalid_unfurls_format', `[ERROR] the unfurl of ${url} must be an object`);
      const blocks = (value as Body).blocks;
      if (blocks === undefined && !present((value as Body).text))
        return fail('invalid_unfurls_format', `[ERROR] the unfurl of ${url} has neither blocks nor text`);
      if (blocks !== undefined) {
        const problem = findBlockProblem(blocks, 'message', '/unfurls');
        if (problem) return problemBody(problem);
      }
    }
    const stored = this.unfurls.get(entry.key) ?? new Map<string, Body>();
    for (const [url, value] of Object.entries(unfurls as Record<string, Body>)) stored.set(url, value);
    this.unfurls.set(entry.key, stored);
    return { ok: true };
  }

  private parseView(a: Args, kind: 'modal' | 'home'): { view: Body } | { error: Body } {
    if (a.view === undefined) return { error: fail('invalid_arguments', '[ERROR] missing required field: view') };
    if (typeof a.view === 'string')
      return { error: fail('invalid_arguments', '[ERROR] view must be a JSON object [json-pointer:/view]') };
    const problem = findViewProblem(a.view, kind);
    if (problem) return { error: problemBody(problem) };
    return { view: a.view as Body };
  }

  private storeView(id: string, type: 'modal' | 'home', view: Body, previous?: StoredView): StoredView {
    const hash = `${1700000000 + ++this.viewCounter}.${((this.viewCounter * 2654435761) % 4294967296).toString(16)}`;
    const externalId = typeof view.external_id === 'string' ? view.external_id : (previous?.externalId ?? '');
    const response: Body = {
      id,
      team_id: TEAM_ID,
      type,
      blocks: view.blocks,
      private_metadata: view.private_metadata ?? '',
      callback_id: view.callback_id ?? '',
      state: { values: {} },
      hash,
      title: view.title ?? null,
      close: view.close ?? null,
      submit: view.submit ?? null,
      clear_on_close: view.clear_on_close ?? false,
      notify_on_close: view.notify_on_close ?? false,
      root_view_id: id,
      previous_view_id: null,
      app_id: APP_ID,
      external_id: externalId,
      app_installed_team_id: TEAM_ID,
      bot_id: BOT_ID,
    };
    const stored: StoredView = { id, type, hash, externalId, response };
    this.views.set(id, stored);
    return stored;
  }

  private newViewId(): string {
    return `V${String(++this.viewCounter).padStart(8, '0')}`;
  }

  private externalIdTaken(view: Body, exceptId?: string): boolean {
    if (!present(view.external_id)) return false;
    return [...this.views.values()].some((v) => v.externalId === view.external_id && v.id !== exceptId);
  }

  private viewsOpen(a: Args): Body {
    if (!present(a.trigger_id) && !present(a.interactivity_pointer)) {
      return fail('invalid_arguments', '[ERROR] missing required field: trigger_id');
    }
    const parsed = this.parseView(a, 'modal');
    if ('error' in parsed) return parsed.error;
    if (this.externalIdTaken(parsed.view)) return fail('duplicate_external_id');
    const triggerProblem = present(a.trigger_id) ? this.exchangeTrigger(String(a.trigger_id)) : null;
    if (triggerProblem) return triggerProblem;
    return { ok: true, view: this.storeView(this.newViewId(), 'modal', parsed.view).response };
  }

  /** A trigger_id opens one modal, only if issued by triggerId() less than 3 s ago. */
  private exchangeTrigger(id: string): Body | null {
    const trigger = this.triggers.get(id);
    if (!trigger)
      return fail(
        'invalid_trigger_id',
        '[ERROR] trigger_id was not issued by this fake Slack: put fake.triggerId() into the payload',
      );
    if (trigger.used) return fail('exchanged_trigger_id');
    if (Date.now() - trigger.issuedAt > TRIGGER_TTL_MS) return fail('expired_trigger_id');
    trigger.used = true;
    return null;
  }

  private viewsUpdate(a: Args): Body {
    if (!present(a.view_id) && !present(a.external_id)) {
      return fail('invalid_arguments', '[ERROR] missing required field: view_id or external_id');
    }
    const current = present(a.view_id)
      ? this.views.get(String(a.view_id))
      : [...this.views.values()].find((v) => v.externalId === a.external_id);
    if (!current) return fail('not_found');
    if (present(a.hash) && a.hash !== current.hash) return fail('hash_conflict');
    const parsed = this.parseView(a, current.type);
    if ('error' in parsed) return parsed.error;
    if (this.externalIdTaken(parsed.view, current.id)) return fail('duplicate_external_id');
    const stored = this.storeView(current.id, current.type, parsed.view, current);
    if (current.type === 'home') {
      for (const [user, v] of this.homeViews) if (v.id === current.id) this.homeViews.set(user, stored.response);
    }
    return { ok: true, view: stored.response };
  }

  private viewsPublish(a: Args): Body {
    if (!present(a.user_id)) return fail('invalid_arguments', '[ERROR] missing required field: user_id');
    const user = String(a.user_id);
    if (!this.hasUser(user) || user === BOT_USER_ID) return fail('invalid_arguments', 'invalid `user_id`');
    const parsed = this.parseView(a, 'home');
    if ('error' in parsed) return parsed.error;
    const previousId = this.homeViews.get(user)?.id as string | undefined;
    const previous = previousId ? this.views.get(previousId) : undefined;
    if (present(a.hash) && a.hash !== previous?.hash) return fail('hash_conflict');
    if (this.externalIdTaken(parsed.view, previousId)) return fail('duplicate_external_id');
    const stored = this.storeView(previousId ?? this.newViewId(), 'home', parsed.view, previous);
    this.homeViews.set(user, stored.response);
    return { ok: true, view: stored.response };
  }

  // --- slack-delivery additions: reading a conversation back ---------------------------------

  /** The channel a history read may see: known, and readable with the granted scopes (im:history only). */
  private readableChannel(a: Args): { id: string } | { error: Body } {
    const id = this.knownChannel(a.channel);
    if (!id) return { error: fail('channel_not_found') };
    const outside = this.notInChannel(id);
    if (outside) return { error: outside };
    const needed =
      this.channels.get(id)?.kind === 'im' ? 'im:history' : id.startsWith('G') ? 'groups:history' : 'channels:history';
    if (!(FAKE_SLACK_SCOPES as readonly string[]).includes(needed)) {
      return { error: { ok: false, error: 'missing_scope', needed, provided: FAKE_SLACK_SCOPES.join(',') } };
    }
    return { id };
  }

  /** Newest first, top-level messages only (thread replies stay in their thread), oldest/latest/inclusive/limit/cursor as Slack. */
  private conversationsHistory(a: Args): Body {
    const channel = this.readableChannel(a);
    if ('error' in channel) return channel.error;
    const window = timeWindow(a);
    if ('error' in window) return window.error;
    const list = this.messages.get(channel.id) ?? [];
    const top = list.filter((m) => !m.thread_ts && window.includes(m.ts)).reverse();
    return this.page(top, a, (m) => {
      const replies = list.filter((r) => r.thread_ts === m.ts);
      const thread = replies.length
        ? { thread_ts: m.ts, reply_count: replies.length, latest_reply: replies[replies.length - 1].ts }
        : {};
      return { ...this.messageObject(m, truthy(a.include_all_metadata)), ...thread };
    });
  }

  /** The parent first, then its replies oldest first; `ts` may name the parent or any reply. */
  private conversationsReplies(a: Args): Body {
    const channel = this.readableChannel(a);
    if ('error' in channel) return channel.error;
    if (!present(a.ts)) return fail('invalid_arguments', '[ERROR] missing required field: ts');
    const window = timeWindow(a);
    if ('error' in window) return window.error;
    const list = this.messages.get(channel.id) ?? [];
    const named = list.find((m) => m.ts === a.ts);
    if (!named) return fail('thread_not_found');
    const parentTs = named.thread_ts ?? named.ts;
    const parent = list.find((m) => m.ts === parentTs)!;
    const replies = list.filter((m) => m.thread_ts === parentTs && window.includes(m.ts));
    return this.page([parent, ...replies], a, (m) => {
      const object = this.messageObject(m, truthy(a.include_all_metadata));
      return m === parent && replies.length ? { ...object, thread_ts: m.ts, reply_count: replies.length } : object;
    });
  }

  /** Cursor pagination for conversations.history and .replies: limit 1..999, default 100. */
  private page(items: FakeSlackMessage[], a: Args, show: (m: FakeSlackMessage) => Body): Body {
    const page = this.pageOf(items, a, 999);
    if ('error' in page) return page.error;
    return {
      ok: true,
      messages: page.items.map(show),
      has_more: page.metadata.next_cursor !== '',
      pin_count: 0,
      response_metadata: page.metadata,
    };
  }

  /** Cursor pagination: the cursor is opaque to callers (here, the offset); a limit above `max` gives `max`, default 100. */
  private pageOf<T>(
    items: T[],
    a: Args,
    max: number,
  ): { items: T[]; metadata: { next_cursor: string } } | { error: Body } {
    const limit = a.limit === undefined ? 100 : Number(a.limit);
    if (!Number.isInteger(limit) || limit < 1) return { error: fail('invalid_limit') };
    let offset = 0;
    if (present(a.cursor)) {
      const decoded = /^offset:(\d+)$/.exec(Buffer.from(String(a.cursor), 'base64').toString('utf8'));
      if (!decoded) return { error: fail('invalid_cursor') };
      offset = Number(decoded[1]);
    }
    const slice = items.slice(offset, offset + Math.min(limit, max));
    const next =
      offset + slice.length < items.length ? Buffer.from(`offset:${offset + slice.length}`).toString('base64') : '';
    return { items: slice, metadata: { next_cursor: next } };
  }

  // --- slack-delivery additions: Socket Mode --------------------------------------------------

  private appsConnectionsOpen(): Body {
    const ticket = randomUUID();
    this.tickets.add(ticket);
    return { ok: true, url: `${this.origin.replace(/^http/, 'ws')}/link/?ticket=${ticket}&app_id=${APP_ID}` };
  }

  /** A WebSocket upgrade on /link/ with a ticket from apps.connections.open (single use) gets `hello`; anything else is refused. */
  private upgradeSocketMode(req: IncomingMessage, socket: import('node:stream').Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', this.origin);
    const ticket = url.searchParams.get('ticket') ?? '';
    if (url.pathname !== '/link/' || !this.tickets.delete(ticket)) {
      socket.end('HTTP/1.1 401 Unauthorized\r\nconnection: close\r\n\r\n');
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      this.sockets.add(ws);
      ws.on('close', () => this.sockets.delete(ws));
      ws.on('message', (data) => {
        let ack: FakeSlackAck;
        try {
          ack = JSON.parse(data.toString()) as FakeSlackAck;
        } catch {
          return;
        }
        this.record({
          method: 'socket_mode.ack',
          args: ack as unknown as Args,
          at: Date.now(),
          response: { ok: true },
        });
        this.acks.get(ack.envelope_id)?.(ack);
      });
      ws.send(
        JSON.stringify({
          type: 'hello',
          num_connections: this.sockets.size,
          debug_info: { host: 'fake-slack', approximate_connection_time: 3600 },
          connection_info: { app_id: APP_ID },
        }),
      );
      this.record({ method: 'socket_mode.hello', args: {}, at: Date.now(), response: { ok: true } });
    });
  }

  socketConnected(timeoutMs = 5000): Promise<void> {
    return this.waitFor('socket_mode.hello', undefined, timeoutMs).then(() => undefined);
  }

  sendEnvelope(
    type: 'interactive' | 'slash_commands' | 'events_api',
    payload: Record<string, unknown>,
    timeoutMs = 5000,
  ): Promise<FakeSlackAck> {
    const ws = [...this.sockets].find((s) => s.readyState === s.OPEN);
    if (!ws) return Promise.reject(new Error('fake Slack: no Socket Mode client is connected'));
    const envelopeId = randomUUID();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.acks.delete(envelopeId);
        reject(new Error(`fake Slack: envelope ${envelopeId} (${type}) was not acked within ${timeoutMs} ms`));
      }, timeoutMs);
      this.acks.set(envelopeId, (ack) => {
        clearTimeout(timer);
        this.acks.delete(envelopeId);
        resolve(ack);
      });
      ws.send(
        JSON.stringify({
          envelope_id: envelopeId,
          type,
          payload,
          accepts_response_payload: type !== 'events_api',
          retry_attempt: 0,
          retry_reason: '',
        }),
      );
    });
  }

  // --- end slack-delivery additions ---------------------------------------------------------
}

// --- slack-delivery additions: metadata and time windows -----------------------------------------

const TS = /^\d{1,10}(\.\d{1,6})?$/;

/** Slack's message metadata: {event_type: "a_name", event_payload: {...}} (form fields arrive JSON-decoded). */
function checkMetadata(v: unknown): { value?: FakeSlackMetadata } | { error: Body } {
  if (v === undefined) return {};
  const m = v as Record<string, unknown>;
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    return {
      error: fail('invalid_metadata_format', '[ERROR] metadata must be a JSON object [json-pointer:/metadata]'),
    };
  }
  if (typeof m.event_type !== 'string' || !/^[A-Za-z0-9_]{1,255}$/.test(m.event_type)) {
    return {
      error: fail(
        'invalid_metadata_format',
        '[ERROR] event_type must be a string of letters, digits and _ [json-pointer:/metadata/event_type]',
      ),
    };
  }
  if (typeof m.event_payload !== 'object' || m.event_payload === null || Array.isArray(m.event_payload)) {
    return {
      error: fail(
        'invalid_metadata_format',
        '[ERROR] event_payload must be a JSON object [json-pointer:/metadata/event_payload]',
      ),
    };
  }
  const extra = Object.keys(m).find((k) => k !== 'event_type' && k !== 'event_payload');
  if (extra)
    return { error: fail('invalid_metadata_schema', `[ERROR] unknown property "${extra}" [json-pointer:/metadata]`) };
  return { value: { event_type: m.event_type, event_payload: m.event_payload as Record<string, unknown> } };
}

/** oldest / latest / inclusive, as conversations.history and .replies read them. */
function timeWindow(a: Args): { includes: (ts: string) => boolean } | { error: Body } {
  if (present(a.oldest) && !TS.test(String(a.oldest))) return { error: fail('invalid_ts_oldest') };
  if (present(a.latest) && !TS.test(String(a.latest))) return { error: fail('invalid_ts_latest') };
  const oldest = present(a.oldest) ? Number(a.oldest) : 0;
  const latest = present(a.latest) ? Number(a.latest) : Infinity;
  const inclusive = truthy(a.inclusive);
  return {
    includes: (ts) => {
      const t = Number(ts);
      return inclusive ? t >= oldest && t <= latest : t > oldest && t < latest;
    },
  };
}

// --- end slack-delivery additions ----------------------------------------------------------------

// --- request parsing ---------------------------------------------------------------------------

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Query string, then the body: form fields (JSON fields decoded) or a JSON object, with Slack's errors for anything else. */
function parseArgs(
  req: IncomingMessage,
  raw: Buffer,
  url: URL,
): { args: Args; json: boolean } | { error: string; args: Args } {
  const args: Args = Object.fromEntries(url.searchParams);
  const [mime = '', ...params] = (req.headers['content-type'] ?? '').split(';').map((s) => s.trim().toLowerCase());
  const charset = params
    .find((p) => p.startsWith('charset='))
    ?.slice('charset='.length)
    .replace(/"/g, '');
  if (raw.length === 0) return { args, json: false };
  if (!mime) return { error: 'missing_post_type', args };
  if (charset && !['utf-8', 'utf8', 'iso-8859-1'].includes(charset)) return { error: 'invalid_charset', args };
  if (mime === 'application/x-www-form-urlencoded') {
    for (const [key, value] of new URLSearchParams(raw.toString('utf8'))) args[key] = value;
    for (const key of JSON_FIELDS) {
      if (typeof args[key] !== 'string') continue;
      try {
        args[key] = JSON.parse(args[key] as string);
      } catch {
        // left as the raw string: the method answers invalid_blocks / invalid_arguments
      }
    }
    return { args, json: false };
  }
  if (mime === 'application/json') {
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return { error: 'invalid_json', args };
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return { error: 'json_not_object', args };
    Object.assign(args, body);
    for (const key of JSON_FIELDS) {
      // A JSON body may still carry a field as a JSON string; Slack decodes it the same way.
      if (typeof args[key] === 'string') {
        try {
          args[key] = JSON.parse(args[key] as string);
        } catch {
          // left as the raw string
        }
      }
    }
    return { args, json: true };
  }
  if (mime === 'multipart/form-data') return { error: 'invalid_form_data', args };
  return { error: 'invalid_post_type', args };
}
