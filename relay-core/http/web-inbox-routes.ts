// The web inbox (GET /inbox…): sign-in with a one-time link, the lists, a thread with its actions, sessions, and the
// session's live event stream. Every action is the same use case call the JSON-RPC methods make (via "web"), so
// policies, approvals and the acceptance verdict apply the same; a refusal is shown in words and changes nothing.
import { randomBytes, randomUUID } from 'node:crypto';
import express, { type Express, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import { z } from 'zod';
import { APPROVAL_ID_PATTERN, type ApprovalRecord } from '../domain/approval';
import { isCandidate } from '../domain/claim';
import { isFinishedRun } from '../domain/run';
import type { AgentDoc, ThreadDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';
import { intentSchema, LIMITS, THREAD_STATUSES, type ThreadStatus } from '../domain/schemas';
import { TRANSITIONS } from '../domain/thread-lifecycle';
import type { SnoozeChoice } from '../domain/working-hours';
import { constantTimeEqual } from '../ops/api-keys';
import type { RateLimiter } from '../ops/rate-limiter';
import { CURSOR_PATTERN, type EventFeed } from '../service/event-feed';
import type { HandoffTimers } from '../service/handoff-timers';
import { isEscalationLead } from '../domain/timer-schedule';
import type { Relay } from '../service/relay-service';
import type { WebSession } from '../service/web-sessions';
import { approvalView, type ApprovalView, type ListItem } from '../service/wire-views';
import { streamEvents, type OpenEventStreams } from './events-route';
import {
  exchangeSlackCode,
  installedWorkspace,
  SlackSignInError,
  slackAuthorizeUrl,
  type SlackOidcConfig,
} from './slack-oidc';
import { INBOX_CSS, INBOX_JS } from './web-inbox-assets';
import {
  HOW_TO_SIGN_IN,
  listPage,
  SLACK_SIGN_IN_BUTTON,
  messagePage,
  notFoundPage,
  sessionsPage,
  signInPage,
  threadPage,
  type ListName,
  type PageViewer,
  type ThreadActions,
  COUNT_UP_TO,
} from './web-inbox-pages';

export const SESSION_COOKIE = 'hr_session';
/** A Sign in with Slack under way in this browser: its state and nonce, for ten minutes, only on /inbox/slack. */
export const SLACK_FLOW_COOKIE = 'hr_slack_flow';
const SLACK_FLOW_SECONDS = 600;
const FLOW_PART = /^[A-Za-z0-9_-]{32}$/;

/** Only the relay's own script, stylesheet and event stream; forms post only back here. */
export const INBOX_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

export interface WebInboxDeps {
  uses: Pick<
    Relay,
    | 'webSessions'
    | 'reads'
    | 'transitions'
    | 'messages'
    | 'claims'
    | 'runs'
    | 'approvalDecisions'
    | 'approvalViews'
    | 'approvalRecords'
    | 'clock'
    | 'teammates'
  >;
  /** RELAY_PUBLIC_URL: its origin is where forms may come from; https makes the cookie Secure. */
  publicUrl: string;
  /** Sign-in attempts per client address. */
  signInLimiter?: RateLimiter;
  /** Changes per teammate: the same limit (and count) as their JSON-RPC calls. */
  changeLimiter?: RateLimiter;
  events?: { feed: EventFeed; streams: OpenEventStreams };
  /** Slack's app credentials (SLACK_CLIENT_ID / SLACK_CLIENT_SECRET): with them, "Sign in with Slack" is offered. */
  slackSignIn?: SlackOidcConfig;
  /** The recipient's Snooze (the same use case as Slack's Snooze buttons); without it the page offers none. */
  timers?: Pick<HandoffTimers, 'snooze'>;
  log: Logger;
}

const THREAD_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PAGE_SIZE = 25;
const WAITING: ThreadStatus[] = ['pending', 'accepted'];
const LIST_NAMES = ['waiting', 'received', 'sent', 'claimable', 'approvals'] as const;

const listQuery = z.object({
  list: z.enum(LIST_NAMES).catch('waiting'),
  status: z.enum(THREAD_STATUSES).optional().catch(undefined),
  cursor: z.string().max(200).optional().catch(undefined),
  // The filters (each, or both together): blank means none, as the filter form sends them.
  intent: intentSchema.optional().catch(undefined),
  with: z
    .string()
    .trim()
    .max(200)
    .optional()
    .catch(undefined)
    .transform((v) => (v ? v.toLowerCase() : undefined)),
  // The text search (docs/web-inbox.md#text-search): blank means none.
  q: z
    .string()
    .trim()
    .max(500)
    .optional()
    .catch(undefined)
    .transform((v) => v || undefined),
});

/** What each action's form holds (besides csrf); the messages are what the page shows when a field is wrong. */
/** The Slack Snooze buttons' choices (bot/blocks/timer-action-ids.ts), in the same words. */
const SNOOZE_CHOICES = ['1h', 'tomorrow', 'week'] as const satisfies readonly SnoozeChoice[];
const formKey = z.string().max(100).optional();
const required = (what: string, max: number) =>
  z
    .string({ error: `${what}: write something first` })
    .trim()
    .min(1, `${what}: write something first`)
    .max(max, `${what}: at most ${max} characters`);
const ACTION_FORMS = {
  accept: z.object({ key: formKey }),
  agent: z.object({ key: formKey }),
  claim: z.object({ key: formKey }),
  snooze: z.object({
    key: formKey,
    choice: z.enum(SNOOZE_CHOICES, { error: 'Snooze: choose 1 hour, tomorrow morning or next week' }),
  }),
  decline: z.object({ key: formKey, reason: required('The reason to decline', LIMITS.reason) }),
  cancel: z.object({
    key: formKey,
    reason: z.string().trim().max(LIMITS.reason, `The reason: at most ${LIMITS.reason} characters`).optional(),
  }),
  reply: z.object({ key: formKey, body: required('The reply', LIMITS.summary) }),
  complete: z.object({
    key: formKey,
    summary: required('What was done', LIMITS.summary),
    links: z.string().max(20_000).optional(),
  }),
} as const;
type ActionName = keyof typeof ACTION_FORMS;

const DONE: Record<string, string> = {
  accept: 'Accepted. The sender sees it now.',
  agent: 'Handed to your agent: your runner (handoff-relay agent) takes it next.',
  claim: 'Claimed: it is yours now. Accept it when you start.',
  snooze: 'Snoozed: the reminders wait until the time shown above.',
  decline: 'Declined. The sender was told why.',
  cancel: 'Cancelled. The recipient was told.',
  reply: 'Reply sent.',
  complete: 'Completed. The sender was told what was done.',
  approve: 'Your approval is recorded.',
  reject: 'Rejected. The one who asked was told why.',
  revoked: 'That session is signed out.',
};

function readCookie(req: Request, name: string): string | undefined {
  for (const part of (req.get('cookie') ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

function securityHeaders(res: Response): void {
  res.setHeader('Content-Security-Policy', INBOX_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('X-Frame-Options', 'DENY');
  // same-origin, not no-referrer: with no-referrer a browser sends `Origin: null` on the pages' own form posts.
  res.setHeader('Referrer-Policy', 'same-origin');
  res.setHeader('Cache-Control', 'no-store');
}

/** Completion links, one per line: each must be a web link. */
function linkArtifacts(text: string | undefined): Array<{ type: 'link'; url: string }> {
  const lines = (text ?? '')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  for (const line of lines) {
    if (!/^https?:\/\/\S+$/i.test(line) || line.length > LIMITS.url)
      throw new RelayError(
        'invalid_params',
        `Links: "${line.slice(0, 80)}" is not a web link (https://…), one per line`,
      );
  }
  return lines.map((url) => ({ type: 'link', url }));
}

export function mountWebInbox(app: Express, deps: WebInboxDeps): void {
  const { webSessions, reads, transitions, messages, claims, runs, approvalDecisions, approvalViews, approvalRecords } =
    deps.uses;
  const form = express.urlencoded({ extended: false, limit: '256kb', parameterLimit: 20 });
  const publicOrigin = new URL(deps.publicUrl).origin;
  const secureCookie = deps.publicUrl.startsWith('https:');

  /** Whether a state-changing request comes from this relay's own pages (never another site). */
  function sameOrigin(req: Request): boolean {
    const origin = req.get('origin');
    if (origin !== undefined) return origin === publicOrigin || origin === `${req.protocol}://${req.get('host')}`;
    const site = req.get('sec-fetch-site');
    return site === undefined || site === 'same-origin' || site === 'none';
  }

  async function sessionOf(req: Request): Promise<{ id: string; session: WebSession } | null> {
    const id = readCookie(req, SESSION_COOKIE);
    if (!id) return null;
    const session = await webSessions.session(id);
    return session ? { id, session } : null;
  }

  function viewerOf(session: WebSession): PageViewer {
    return { handle: session.agent.handle, name: session.agent.name, csrf: session.csrf };
  }

  function setCookie(res: Response, value: string, maxAgeSeconds: number): void {
    res.append(
      'Set-Cookie',
      `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secureCookie ? '; Secure' : ''}`,
    );
  }

  /** The Slack sign-in flow's cookie: Lax, so the top-level redirect back from Slack carries it. */
  function setFlowCookie(res: Response, value: string, maxAgeSeconds: number): void {
    res.append(
      'Set-Cookie',
      `${SLACK_FLOW_COOKIE}=${value}; Path=/inbox/slack; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secureCookie ? '; Secure' : ''}`,
    );
  }

  function refuse(res: Response, status: number, title: string, text: string, viewer?: PageViewer): void {
    res
      .status(status)
      .type('html')
      .send(messagePage(title, [text], viewer));
  }

  /** A POST's session, its token and its origin checked; answers (and returns null) when one fails. */
  async function postSession(req: Request, res: Response): Promise<WebSession | null> {
    securityHeaders(res);
    if (!sameOrigin(req)) {
      refuse(res, 403, 'Refused', 'This form was sent from another site, so nothing was changed.');
      return null;
    }
    const found = await sessionOf(req);
    if (!found) {
      refuse(
        res,
        401,
        'Not signed in',
        `You are not signed in (or your session ended), so nothing was changed. ${HOW_TO_SIGN_IN[0]}`,
      );
      return null;
    }
    const token = typeof req.body?.csrf === 'string' ? req.body.csrf : '';
    if (!constantTimeEqual(token, found.session.csrf)) {
      refuse(
        res,
        403,
        'Refused',
        'This form is out of date or was not sent from your inbox page, so nothing was changed. Reload the page and try again.',
        viewerOf(found.session),
      );
      return null;
    }
    return found.session;
  }

  async function counts(agent: AgentDoc): Promise<Partial<Record<ListName, number>>> {
    const [waiting, claimable] = await Promise.all([
      reads.countThreads(agent, 'to', WAITING, COUNT_UP_TO),
      reads.listThreads(agent, { role: 'recipient', status: ['unclaimed'], limit: 50 }).then((p) => p.items.length),
    ]);
    return { waiting, claimable };
  }

  async function limitSignIn(req: Request, res: Response): Promise<boolean> {
    try {
      await deps.signInLimiter?.consume(req.ip ?? req.socket.remoteAddress ?? 'unknown');
      return true;
    } catch (error) {
      if (!(error instanceof RelayError) || error.code !== 'rate_limited') throw error;
      const ms = (error.details as { retry_after_ms?: number } | undefined)?.retry_after_ms ?? 60_000;
      res.setHeader('Retry-After', String(Math.max(1, Math.ceil(ms / 1_000))));
      refuse(res, 429, 'Too many sign-in attempts', `${error.message}.`);
      return false;
    }
  }

  /** Counts one change against the teammate's limit; answers 429 (and returns false) past it. */
  async function limitChanges(res: Response, session: WebSession): Promise<boolean> {
    try {
      await deps.changeLimiter?.consume(session.agent.handle);
      return true;
    } catch (error) {
      if (!(error instanceof RelayError) || error.code !== 'rate_limited') throw error;
      const ms = (error.details as { retry_after_ms?: number } | undefined)?.retry_after_ms ?? 60_000;
      res.setHeader('Retry-After', String(Math.max(1, Math.ceil(ms / 1_000))));
      refuse(res, 429, 'Too many changes', `${error.message}. Nothing was changed.`, viewerOf(session));
      return false;
    }
  }

  app.get('/inbox/app.css', (_req, res) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.type('text/css').send(INBOX_CSS);
  });
  app.get('/inbox/app.js', (_req, res) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.type('text/javascript').send(INBOX_JS);
  });

  app.get('/inbox/sign-in', async (req, res) => {
    securityHeaders(res);
    if (!(await limitSignIn(req, res))) return;
    const token = typeof req.query.token === 'string' ? req.query.token : '';
    try {
      const handle = await webSessions.peekLink(token);
      res.type('html').send(signInPage(handle, token));
    } catch (error) {
      if (!(error instanceof RelayError)) throw error;
      refuse(res, 410, 'This sign-in link does not work', error.message);
    }
  });

  app.post('/inbox/sign-in', form, async (req, res) => {
    securityHeaders(res);
    if (!sameOrigin(req)) return refuse(res, 403, 'Refused', 'This sign-in was sent from another site: not signed in.');
    if (!(await limitSignIn(req, res))) return;
    const token = typeof req.body?.token === 'string' ? req.body.token : '';
    try {
      const { sessionId, expires_at } = await webSessions.redeem(token, {
        userAgent: req.get('user-agent') ?? '',
        replacing: readCookie(req, SESSION_COOKIE),
      });
      setCookie(res, sessionId, Math.round((expires_at.getTime() - deps.uses.clock.now().getTime()) / 1_000));
      res.redirect(303, '/inbox');
    } catch (error) {
      if (!(error instanceof RelayError)) throw error;
      refuse(res, error.code === 'forbidden' ? 403 : 410, 'This sign-in link does not work', error.message);
    }
  });

  // Sign in with Slack (OpenID Connect; slack-oidc.ts): the relay sends the browser to Slack with a fresh state and
  // nonce (kept in a cookie of this browser), and Slack sends it back to /inbox/slack/callback with a one-time code.
  const slack = deps.slackSignIn;
  const slackWorkspace = slack && installedWorkspace(slack);
  const slackRedirectUri = `${deps.publicUrl}/inbox/slack/callback`;
  const startAgain = 'Start again from your inbox page: Sign in with Slack.';

  app.get('/inbox/slack/sign-in', async (req, res) => {
    securityHeaders(res);
    if (!slack)
      return refuse(
        res,
        404,
        'Sign in with Slack is not set up',
        `This relay has no Slack app to sign in with. ${HOW_TO_SIGN_IN[0]}`,
      );
    if (!(await limitSignIn(req, res))) return;
    const state = randomBytes(24).toString('base64url');
    const nonce = randomBytes(24).toString('base64url');
    setFlowCookie(res, `${state}.${nonce}`, SLACK_FLOW_SECONDS);
    res.redirect(303, slackAuthorizeUrl(slack, { redirectUri: slackRedirectUri, state, nonce }));
  });

  app.get('/inbox/slack/callback', async (req, res) => {
    securityHeaders(res);
    if (!slack || !slackWorkspace)
      return refuse(res, 404, 'Sign in with Slack is not set up', 'This relay has no Slack app to sign in with.');
    if (!(await limitSignIn(req, res))) return;
    // The flow is used up whatever happens next: a second visit of this address does not sign in.
    const [state, nonce] = (readCookie(req, SLACK_FLOW_COOKIE) ?? '').split('.');
    setFlowCookie(res, '', 0);
    const notSignedIn = 'Not signed in';
    const sentState = typeof req.query.state === 'string' ? req.query.state : '';
    if (!state || !nonce || !FLOW_PART.test(state) || !FLOW_PART.test(nonce) || !constantTimeEqual(sentState, state))
      return refuse(
        res,
        400,
        notSignedIn,
        `This Slack sign-in did not start in this browser, or took longer than ten minutes. ${startAgain}`,
      );
    if (typeof req.query.error === 'string')
      return refuse(
        res,
        400,
        notSignedIn,
        `Slack sign-in was cancelled (${req.query.error.slice(0, 60)}). ${startAgain}`,
      );
    const code = typeof req.query.code === 'string' ? req.query.code : '';
    if (!code || code.length > 500)
      return refuse(res, 400, notSignedIn, `Slack sent no sign-in code back. ${startAgain}`);
    try {
      const who = await exchangeSlackCode(slack, { code, redirectUri: slackRedirectUri, nonce });
      const workspace = await slackWorkspace();
      if (who.teamId !== workspace)
        return refuse(
          res,
          403,
          notSignedIn,
          `That Slack account is in another workspace (${who.teamId}), not the one this relay's app is installed in.`,
        );
      const agent = await deps.uses.teammates.bySlackUser(who.userId);
      if (!agent)
        return refuse(
          res,
          403,
          'Your Slack account is not linked',
          `Your Slack account (${who.userId}) is not linked to a handoff-relay teammate, so there is no inbox to sign in to. ` +
            'Link it: run `/handoff link` in Slack (or ask your admin to register you with your Slack user id), then sign in again.',
        );
      const { sessionId, expires_at } = await webSessions.start(agent.handle, {
        userAgent: req.get('user-agent') ?? '',
        replacing: readCookie(req, SESSION_COOKIE),
      });
      setCookie(res, sessionId, Math.round((expires_at.getTime() - deps.uses.clock.now().getTime()) / 1_000));
      res.redirect(303, '/inbox');
    } catch (error) {
      if (error instanceof SlackSignInError) {
        deps.log.info({ reason: error.code }, 'slack sign-in refused');
        return refuse(
          res,
          error.code === 'slack_unreachable' ? 502 : 400,
          notSignedIn,
          `${error.message}. ${startAgain}`,
        );
      }
      if (error instanceof RelayError && error.code === 'forbidden')
        return refuse(res, 403, notSignedIn, `${error.message}.`);
      throw error;
    }
  });

  app.post('/inbox/sign-out', form, async (req, res) => {
    const session = await postSession(req, res);
    if (!session) return;
    await webSessions.signOut(readCookie(req, SESSION_COOKIE)!);
    setCookie(res, '', 0);
    res
      .type('html')
      .send(
        messagePage(
          'Signed out',
          ['This browser is signed out.', ...HOW_TO_SIGN_IN],
          undefined,
          slack ? SLACK_SIGN_IN_BUTTON : '',
        ),
      );
  });

  app.get('/inbox/sessions', async (req, res) => {
    securityHeaders(res);
    const found = await sessionOf(req);
    if (!found) return refuse(res, 401, 'Not signed in', HOW_TO_SIGN_IN[0]);
    const { agent } = found.session;
    const [sessions, c] = await Promise.all([webSessions.list(agent.handle), counts(agent)]);
    const done = req.query.done === 'revoked' ? DONE.revoked : undefined;
    res
      .type('html')
      .send(sessionsPage(viewerOf(found.session), found.session.publicId, sessions, deps.uses.clock.now(), c, done));
  });

  app.post('/inbox/sessions/:public_id/revoke', form, async (req, res) => {
    const session = await postSession(req, res);
    if (!session) return;
    const revoked = await webSessions.revoke(session.agent.handle, String(req.params.public_id).slice(0, 40));
    if (!revoked)
      return refuse(
        res,
        404,
        'No such session',
        'You have no such session still signed in; nothing was changed.',
        viewerOf(session),
      );
    res.redirect(303, '/inbox/sessions?done=revoked');
  });

  app.get('/inbox/events', async (req, res) => {
    const signal = deps.events?.streams.track(res);
    const found = await sessionOf(req);
    if (!found) throw new RelayError('unauthenticated', 'Sign in to the web inbox first');
    if (!deps.events || !signal) throw new RelayError('method_not_found', 'This relay serves no event stream');
    // A reconnecting EventSource sends the last event id it saw: resume there, so nothing that happened meanwhile is
    // missed (anything else that is not a cursor starts from now).
    const handle = found.session.agent.handle;
    const last = req.get('last-event-id')?.trim();
    const from = await deps.events.feed
      .start(handle, last !== undefined && CURSOR_PATTERN.test(last) ? last : undefined, 'header.last-event-id')
      .catch((error: unknown) => {
        // A cursor from before the log was cleared (or another relay's): from now, rather than a stream that fails.
        if (error instanceof RelayError && error.code === 'invalid_params')
          return deps.events!.feed.start(handle, undefined, 'header.last-event-id');
        throw error;
      });
    await streamEvents(req, res, { ...deps.events, log: deps.log }, handle, from, 100, signal, false);
  });

  app.get('/inbox', async (req, res) => {
    securityHeaders(res);
    const found = await sessionOf(req);
    if (!found)
      return res
        .type('html')
        .send(
          messagePage(
            'Your handoff inbox',
            [
              ...HOW_TO_SIGN_IN,
              'Each handoff also has its own read-only page: open the inbox_url its DM or its create answer gave you.',
            ],
            undefined,
            slack ? SLACK_SIGN_IN_BUTTON : '',
          ),
        );
    const { agent } = found.session;
    const q = listQuery.parse(req.query);
    const role = q.list === 'sent' ? 'sender' : 'recipient';
    const party = role === 'sender' ? 'from' : 'to';
    const statuses: readonly ThreadStatus[] = q.list === 'waiting' ? WAITING : THREAD_STATUSES;
    const status = q.status && statuses.includes(q.status) ? q.status : undefined;
    const filtered = q.list !== 'approvals' && q.list !== 'claimable';
    const filters = filtered ? { intent: q.intent, other: q.with } : {};
    let items: ListItem[] = [];
    let approvals: ApprovalView[] = [];
    let nextCursor: string | null = null;
    let statusCounts: Partial<Record<ThreadStatus, number>> = {};
    try {
      if (q.list === 'approvals') {
        approvals = (await approvalViews.list({ status: 'pending', approver: agent.handle }, 50)).filter(
          (a) => !a.approved_by.includes(agent.handle),
        );
      } else if (q.q && filtered) {
        // A search of this list: its party, status and filters narrow the words' matches; no per-status counts
        // (those would read every match).
        const page = await reads.searchThreads(agent, {
          text: q.q,
          party,
          status: status ? [status] : q.list === 'waiting' ? WAITING : undefined,
          limit: PAGE_SIZE,
          cursor: q.cursor,
          ...filters,
        });
        items = page.items;
        nextCursor = page.next_cursor;
      } else {
        const page = await reads.listThreads(agent, {
          role,
          status:
            q.list === 'claimable' ? ['unclaimed'] : status ? [status] : q.list === 'waiting' ? WAITING : undefined,
          limit: PAGE_SIZE,
          cursor: q.cursor,
          oldestFirst: q.list === 'waiting',
          ...filters,
        });
        items =
          q.list === 'received' || q.list === 'waiting'
            ? page.items.filter((i) => i.status !== 'unclaimed')
            : page.items;
        nextCursor = page.next_cursor;
        if (q.list !== 'claimable') {
          const shown = statuses.filter((s) => s !== 'unclaimed');
          const numbers = await Promise.all(
            shown.map((s) => reads.countThreads(agent, party, [s], COUNT_UP_TO, filters)),
          );
          statusCounts = Object.fromEntries(shown.map((s, i) => [s, numbers[i]]));
        }
      }
    } catch (error) {
      if (error instanceof RelayError && error.code === 'invalid_params' && q.q && error.message.startsWith('search:'))
        return refuse(
          res,
          400,
          'Nothing to search for',
          `${error.message.charAt(8).toUpperCase()}${error.message.slice(9)}. Nothing else is wrong.`,
          viewerOf(found.session),
        );
      if (error instanceof RelayError && error.code === 'invalid_params')
        return refuse(
          res,
          400,
          'Not a page of this list',
          'That page link is broken; start from the first page.',
          viewerOf(found.session),
        );
      throw error;
    }
    const c = await counts(agent);
    res.type('html').send(
      listPage({
        viewer: viewerOf(found.session),
        list: q.list,
        status,
        statusCounts,
        counts: { ...c, approvals: q.list === 'approvals' ? approvals.length : undefined },
        items,
        approvals,
        nextCursor,
        statuses,
        ...filters,
        ...(q.q && filtered ? { search: q.q } : {}),
      }),
    );
  });

  /**
   * Who the viewer is to the thread; null when they may not see it (then the page is a 404). The lead it was
   * escalated to reads it (their escalation DM's Open) but acts only from Slack (Nudge, Reassign).
   */
  function accessOf(
    agent: AgentDoc,
    doc: ThreadDoc,
  ): { participant: boolean; candidate: boolean; approverOf: ApprovalRecord[] } | null {
    const participant = doc.from === agent.handle || (doc.to === agent.handle && !doc.hidden_from_recipient);
    const candidate = isCandidate(agent.handle, doc);
    const approverOf = (doc.approvals ?? []).filter((a) =>
      a.approvers.some(
        (x) => x.handle === agent.handle || (agent.slack_user_id !== null && x.slack_user_id === agent.slack_user_id),
      ),
    );
    if (!participant && !candidate && approverOf.length === 0 && !isEscalationLead(doc, agent.handle)) return null;
    return { participant, candidate, approverOf };
  }

  async function renderThread(
    req: Request,
    res: Response,
    session: WebSession,
    threadId: string,
    extra: { notice?: { text: string; refused: boolean }; kept?: Record<string, string>; status?: number } = {},
  ): Promise<void> {
    const { agent } = session;
    const doc = await reads.threadById(threadId);
    const access = doc && accessOf(agent, doc);
    if (!doc || !access) {
      res
        .status(404)
        .type('html')
        .send(notFoundPage(viewerOf(session)));
      return;
    }
    const thread =
      access.participant || access.candidate ? await reads.threadViewFor(agent, threadId) : await reads.view(doc);
    const seen = access.participant ? await approvalViews.forThread(agent, doc) : [];
    const approvals = [...seen];
    for (const record of access.approverOf)
      if (!approvals.some((a) => a.approval_id === record.id)) approvals.push(approvalView(doc._id, record));
    const can = (name: keyof typeof TRANSITIONS) =>
      access.participant &&
      doc[TRANSITIONS[name].actor] === agent.handle &&
      TRANSITIONS[name].from.includes(doc.status);
    const actions: ThreadActions = {
      accept: can('accept'),
      decline: can('decline'),
      complete: can('complete'),
      cancel: can('cancel'),
      reply: access.participant && ['pending', 'accepted'].includes(doc.status),
      claim: access.candidate,
      // As Slack's Snooze: the recipient of a pending handoff moves its next reminder.
      snooze: Boolean(deps.timers) && access.participant && doc.to === agent.handle && doc.status === 'pending',
      agent:
        access.participant &&
        doc.to === agent.handle &&
        (doc.status === 'pending' || doc.status === 'accepted') &&
        !(doc.run && !isFinishedRun(doc.run.status)),
      approvals: access.approverOf
        .filter((r) => r.status === 'pending' && !r.approvals.some((v) => v.by === agent.handle))
        .map((r) => approvalView(doc._id, r)),
    };
    const done = typeof req.query.done === 'string' ? DONE[req.query.done] : undefined;
    const notice = extra.notice ?? (done ? { text: done, refused: false } : undefined);
    res
      .status(extra.status ?? 200)
      .type('html')
      .send(
        threadPage({
          viewer: viewerOf(session),
          thread,
          actions,
          approvals,
          counts: await counts(agent),
          snoozedUntil:
            doc.status === 'pending' &&
            doc.timers?.snoozed_until &&
            new Date(doc.timers.snoozed_until) > deps.uses.clock.now()
              ? new Date(doc.timers.snoozed_until)
              : null,
          notice,
          kept: extra.kept,
          formKey: randomUUID(),
        }),
      );
  }

  app.get('/inbox/:thread_id', async (req, res, next) => {
    const id = THREAD_ID.test(req.params.thread_id) ? req.params.thread_id.toLowerCase() : null;
    const found = await sessionOf(req);
    // Without a session the signed per-thread link (?as=&sig=) answers as it always has (http-app.ts).
    if (!found) return next();
    securityHeaders(res);
    if (!id)
      return res
        .status(404)
        .type('html')
        .send(notFoundPage(viewerOf(found.session)));
    await renderThread(req, res, found.session, id);
  });

  /** A refused action: the thread page again, the refusal in words, what was typed kept. */
  async function refused(
    req: Request,
    res: Response,
    session: WebSession,
    threadId: string,
    action: string,
    error: RelayError,
  ) {
    const kept: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.body ?? {}))
      if (typeof value === 'string' && name !== 'csrf' && name !== 'key') kept[`${action}-${name}`] = value;
    const held = error.code === 'approval_pending';
    const status = held ? 202 : error.httpStatus >= 400 && error.httpStatus < 500 ? error.httpStatus : 409;
    const text = held ? `Held for approval: ${error.message}` : `Not done: ${error.message}. Nothing was changed.`;
    await renderThread(req, res, session, threadId, {
      notice: { text, refused: !held },
      kept: held ? {} : kept,
      status,
    });
  }

  app.post('/inbox/approvals/:approval_id/:decision', form, async (req, res) => {
    const session = await postSession(req, res);
    if (!session) return;
    const id = String(req.params.approval_id);
    const decision = req.params.decision;
    if (!(await limitChanges(res, session))) return;
    if (!APPROVAL_ID_PATTERN.test(id) || (decision !== 'approve' && decision !== 'reject'))
      return res
        .status(404)
        .type('html')
        .send(notFoundPage(viewerOf(session)));
    const found = await approvalRecords.get(id).catch(() => null);
    if (!found)
      return res
        .status(404)
        .type('html')
        .send(notFoundPage(viewerOf(session)));
    const threadId = found.thread._id;
    const reason = typeof req.body?.reason === 'string' ? req.body.reason.trim() : '';
    if (decision === 'reject' && !reason)
      return refused(
        req,
        res,
        session,
        threadId,
        'reject',
        new RelayError('invalid_params', 'Write why you reject it first'),
      );
    const { agent } = session;
    const answer = await approvalDecisions.decide(
      id,
      { handle: agent.handle, slack_user_id: agent.slack_user_id, label: agent.handle },
      decision,
      'web',
      decision === 'reject' ? reason.slice(0, LIMITS.reason) : undefined,
    );
    if (!answer.changed && answer.refusal)
      return refused(req, res, session, threadId, decision, new RelayError('conflict', answer.message));
    res.redirect(303, `/inbox/${threadId}?done=${decision}`);
  });

  app.post('/inbox/:thread_id/:action', form, async (req, res) => {
    const session = await postSession(req, res);
    if (!session) return;
    const id = THREAD_ID.test(req.params.thread_id) ? req.params.thread_id.toLowerCase() : null;
    const action = req.params.action as ActionName;
    if (!(await limitChanges(res, session))) return;
    if (!id || !Object.hasOwn(ACTION_FORMS, action))
      return res
        .status(404)
        .type('html')
        .send(notFoundPage(viewerOf(session)));
    const doc = await reads.threadById(id);
    if (!doc || !accessOf(session.agent, doc))
      return res
        .status(404)
        .type('html')
        .send(notFoundPage(viewerOf(session)));
    const { agent } = session;
    try {
      const parsed = ACTION_FORMS[action].safeParse(req.body ?? {});
      if (!parsed.success)
        throw new RelayError('invalid_params', parsed.error.issues[0]?.message ?? 'The form is not complete');
      const f = parsed.data as { key?: string; reason?: string; body?: string; summary?: string; links?: string };
      const key = f.key ? `web:${f.key}` : undefined;
      const shown = THREAD_STATUSES.find((s) => s === req.body?.shown);
      switch (action) {
        case 'claim':
          await claims.claim(agent, id, 'web');
          break;
        case 'snooze':
          if (!deps.timers) throw new RelayError('invalid_params', 'this relay runs no reminders to snooze');
          await deps.timers.snooze(agent, id, (parsed.data as { choice: SnoozeChoice }).choice, 'web');
          break;
        case 'reply':
          await messages.append(agent, { thread_id: id, body: f.body!, payload: {}, artifacts: [] }, 'web', key);
          break;
        case 'agent': {
          // As tasks/update with run: true (and Slack's Hand to my agent): accept first when pending, then the run.
          if (doc.status === 'pending') {
            const answer = await transitions.transition(
              agent,
              { thread_id: id, transition: 'accept', ...(shown ? { expected_status: shown } : {}) },
              'web',
              key,
            );
            if (answer.accepted === false)
              throw new RelayError(
                'conflict',
                `the acceptance checks refused it (${answer.result}: ${answer.reasons.join('; ')})`,
              );
          }
          await runs.request(agent, id, 'web');
          break;
        }
        default: {
          const answer = await transitions.transition(
            agent,
            {
              thread_id: id,
              transition: action,
              ...(shown ? { expected_status: shown } : {}),
              ...(action === 'decline' || action === 'cancel' ? (f.reason ? { reason: f.reason } : {}) : {}),
              ...(action === 'complete' ? { result_summary: f.summary!, artifacts: linkArtifacts(f.links) } : {}),
            },
            'web',
            key,
          );
          if (answer.accepted === false)
            throw new RelayError(
              'conflict',
              `the acceptance checks refused it (${answer.result}: ${answer.reasons.join('; ')})`,
            );
        }
      }
    } catch (error) {
      if (!(error instanceof RelayError)) throw error;
      return refused(req, res, session, id, action, error);
    }
    res.redirect(303, `/inbox/${id}?done=${action}`);
  });
}
