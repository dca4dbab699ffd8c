// The relay's one HTTP app: REST for teammates and admins, health, the inbox page, and /a2a (jsonrpc/endpoint.ts).
import express, { type NextFunction, type Request, type Response } from 'express';
import { z } from 'zod';
import type { Logger } from 'pino';
import { agentCard, cardVersionOf } from '../jsonrpc/agent-card';
import { jsonRpcEndpoint } from '../jsonrpc/endpoint';
import { RelayError, invalidParams } from '../domain/errors';
import { adminAuth, teammateAuth } from './bearer-auth';
import { ADMIN_KEY_HELP, acceptedKey, challengeForAdminKey } from './admin-credentials';
import { homePage } from './home-page';
import { RELAY_VERSION } from '../ops/version';
import { requireJsonContentType } from './json-content-type';
import { failureAnswer } from '../jsonrpc/failure-answer';
import { jsonRpcError } from '../jsonrpc/json-rpc-error';
import { requestContext, requestId } from '../ops/request-context';
import { inboxHelpPage, inboxPage } from './inbox-page';
import type { RateLimiter } from '../ops/rate-limiter';
import type { Relay } from '../service/relay-service';
import type { MethodUseCases } from '../jsonrpc/method';
import { LIMITS, agentRegistrationSchema, cardUpdateSchema, handleSchema } from '../domain/schemas';
import { ownCard } from '../service/teammates';
import { mountWebhookAdminRoutes } from '../webhooks/admin-routes';
import { mountPolicyAdminRoutes, type PolicyAdminDeps } from './policy-admin-routes';
import { mountApprovalRoutes, type ApprovalRouteDeps } from './approval-routes';
import { mountInviteRoutes } from './invite-routes';
import type { Invites } from '../service/invites';
import type { WebhookDeadLetters } from '../webhooks/delivery-processor';
import type { WebhookEndpoints } from '../webhooks/endpoint-lifecycle';
import type { RelayMetrics } from '../ops/metrics';
import type { EventFeed } from '../service/event-feed';
import { mountEventsRoute, type OpenEventStreams } from './events-route';
import { mountWebInbox, type WebInboxDeps } from './web-inbox-routes';

// Slack (bot/) and MCP (mcp/) mount their routes on the same app; finishHttpApp adds the 404 and error handlers last.

export interface HttpAppDeps {
  /** The use cases the routes and the JSON-RPC methods call. */
  uses: MethodUseCases & ApprovalRouteDeps['uses'] & Pick<Relay, 'auditTrail' | 'links' | 'webSessions'>;
  adminKey: string;
  rateLimiter: RateLimiter;
  log: Logger;
  /** Each resolves when its dependency answers; /readyz reports which one does not. */
  readiness: Record<string, () => Promise<void>>;
  /** Webhook deliveries for the admin routes (/admin/deliveries…). */
  deadLetters?: WebhookDeadLetters;
  /** Webhook endpoints, for POST /agents/me/notification/secret. */
  endpoints: WebhookEndpoints;
  /** GET /metrics serves these, to a bearer of `metricsToken` or the admin key. */
  metrics?: RelayMetrics;
  metricsToken?: string;
  /** false without the api role: only health, metrics and what bot/ mounts (/slack/events) answer. */
  apiRoutes?: boolean;
  /** The policy for the admin routes (/admin/policy…). */
  policy?: Omit<PolicyAdminDeps, 'requireAdmin' | 'teammates' | 'store'> & { store: PolicyAdminDeps['store'] };
  /** GET /events: the teammates' event logs, and this process's open streams (ended on shutdown). */
  events?: { feed: EventFeed; streams: OpenEventStreams };
  /** Invitations (/admin/invites…, /invites/:id/redeem). */
  invites?: Invites;
  /** Redemptions per client address (POST /invites/:id/redeem takes no key to count by). */
  redeemLimiter?: RateLimiter;
  /** Web inbox sign-in attempts per client address (GET and POST /inbox/sign-in). */
  signInLimiter?: RateLimiter;
  /** The recipients' Snooze on the web inbox's thread page (the same use case as Slack's Snooze buttons). */
  timers?: WebInboxDeps['timers'];
  /** The Slack app's client id and secret (and bot token): "Sign in with Slack" on the web inbox. */
  slackSignIn?: WebInboxDeps['slackSignIn'];
}

/** The relay's own pages (/, /inbox…) run no script and load nothing from elsewhere. */
const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** What answers when the api role is off (bot/ mounts /slack/events itself). */
const OPS_PATHS = new Set(['/', '/favicon.ico', '/healthz', '/health', '/readyz', '/metrics', '/slack/events']);

function restError(res: Response, error: RelayError): void {
  // A rate limit says when to come back, in the header clients and proxies read and in the body.
  const retryAfterMs =
    error.code === 'rate_limited'
      ? (error.details as { retry_after_ms?: unknown } | undefined)?.retry_after_ms
      : undefined;
  if (typeof retryAfterMs === 'number')
    res.setHeader('Retry-After', String(Math.max(1, Math.ceil(retryAfterMs / 1_000))));
  res.status(error.httpStatus).json({
    code: error.code,
    message: error.message,
    ...(typeof retryAfterMs === 'number' ? { retry_after_ms: retryAfterMs } : {}),
    request_id: requestId(res),
  });
}

export function createHttpApp(deps: HttpAppDeps): express.Express {
  const { log } = deps;
  const { teammates, auditTrail, links, reads } = deps.uses;
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', false);
  const json = express.json({ limit: LIMITS.bodyBytes, strict: false, type: () => true });

  app.use(requestContext(log));
  if (deps.metrics) app.use(deps.metrics.httpMiddleware());
  if (deps.apiRoutes === false) {
    app.use((req, res, next) => {
      if (OPS_PATHS.has(req.path)) return next();
      restError(
        res,
        new RelayError('method_not_found', `No route ${req.method} ${req.path} (this relay runs without the api role)`),
      );
    });
  }

  app.get('/metrics', async (req, res) => {
    // The same admin key as /admin/queues, the same two ways; a scraper may hold RELAY_METRICS_TOKEN instead.
    if (!acceptedKey(req, [deps.metricsToken, deps.adminKey])) {
      challengeForAdminKey(res);
      throw new RelayError(
        'unauthenticated',
        `Missing or wrong admin key: ${ADMIN_KEY_HELP}; or RELAY_METRICS_TOKEN the same way`,
      );
    }
    if (!deps.metrics) throw new RelayError('method_not_found', 'Metrics are not collected by this relay');
    const { contentType, body } = await deps.metrics.render();
    res.type(contentType).send(body);
  });

  const authenticate = teammateAuth(teammates, log);
  const requireAdmin = adminAuth(deps.adminKey);

  app.post(
    '/a2a',
    requireJsonContentType(),
    json,
    jsonRpcEndpoint({
      uses: deps.uses,
      rateLimiter: deps.rateLimiter,
      log,
      authenticate,
      streams: deps.events?.streams,
    }),
  );

  function handleParam(req: Request): string {
    const parsed = handleSchema.safeParse(req.params.handle);
    if (!parsed.success) throw invalidParams(parsed.error.issues, 'path.handle');
    return parsed.data;
  }

  function body<T extends z.ZodType>(req: Request, schema: T, source: 'body' | 'query' = 'body'): z.infer<T> {
    const parsed = schema.safeParse(source === 'body' ? req.body : req.query);
    if (!parsed.success) throw invalidParams(parsed.error.issues, source);
    return parsed.data;
  }

  const agentsQuery = z
    .object({
      role: z.string().max(LIMITS.role),
      skill: z.string().max(LIMITS.skill),
      repo: z.string().max(LIMITS.path),
    })
    .partial()
    .strict();

  const auditQuery = z
    .object({
      limit: z
        .string()
        .regex(/^[0-9]{1,3}$/, 'must be a whole number from 1 to 200')
        .transform(Number)
        .pipe(z.number().int().min(1).max(200))
        .default(50),
      cursor: z.string().min(1).max(1_024).optional(),
    })
    .strict();

  app.post('/admin/agents', json, async (req, res) => {
    requireAdmin(req);
    const { card, api_key } = await teammates.register(body(req, agentRegistrationSchema));
    // agent_id: the handle, under the name other relays' onboarding commands read it by.
    res.status(201).json({ ...card, agent_id: card.handle, api_key });
  });

  app.post('/admin/agents/:handle/keys', async (req, res) => {
    requireAdmin(req);
    const handle = handleParam(req);
    const { api_key, key_id } = await teammates.rotateKey(handle, 'admin');
    res.status(201).json({ handle, api_key, key_id });
  });

  app.post('/admin/agents/:handle/disable', async (req, res) => {
    requireAdmin(req);
    res.json(await teammates.disable(handleParam(req)));
  });

  if (deps.deadLetters) mountWebhookAdminRoutes(app, { deadLetters: deps.deadLetters, requireAdmin });
  if (deps.policy) mountPolicyAdminRoutes(app, { ...deps.policy, teammates, requireAdmin });
  mountApprovalRoutes(app, { uses: deps.uses, requireAdmin, authenticate });
  if (deps.invites)
    mountInviteRoutes(app, {
      invites: deps.invites,
      requireAdmin,
      publicUrl: links.publicUrl,
      redeemLimiter: deps.redeemLimiter,
    });

  app.get('/agents/me', async (req, res) => {
    res.json(ownCard(await authenticate(req)));
  });

  app.put('/agents/me/card', json, async (req, res) => {
    const agent = await authenticate(req);
    res.json(await teammates.updateCard(agent.handle, body(req, cardUpdateSchema)));
  });

  app.post('/agents/me/notification/secret', async (req, res) => {
    const agent = await authenticate(req);
    res.status(201).json(await deps.endpoints.rotateSecret(agent.handle));
  });

  app.post('/agents/me/keys', async (req, res) => {
    const agent = await authenticate(req);
    const { api_key, key_id } = await teammates.rotateKey(agent.handle);
    res.status(201).json({ handle: agent.handle, api_key, key_id });
  });

  // The same rotation where other relays' clients look for it (`rotate-key`), in their shape.
  app.post('/agents/me/keys/rotate', async (req, res) => {
    const agent = await authenticate(req);
    const { api_key, key_id } = await teammates.rotateKey(agent.handle);
    res.status(201).json({ agent_id: agent.handle, api_key, key_id });
  });

  app.get('/agents/me/audit', async (req, res) => {
    const agent = await authenticate(req);
    const { limit, cursor } = body(req, auditQuery, 'query');
    res.json(await auditTrail.page(agent.handle, cursor, limit));
  });

  // A one-time link that signs a browser in to the web inbox as the key's teammate (handoff-relay open).
  app.post('/agents/me/web-link', async (req, res) => {
    const agent = await authenticate(req);
    res.status(201).json(await deps.uses.webSessions.issueLink(agent.handle, 'api'));
  });

  app.get('/agents/me/block', async (req, res) => {
    const agent = await authenticate(req);
    res.json({ blocked: await teammates.blocks(agent.handle) });
  });

  app.post('/agents/me/block', json, async (req, res) => {
    const agent = await authenticate(req);
    const { handle } = body(req, z.object({ handle: handleSchema }).strict());
    res.json({ blocked: await teammates.block(agent.handle, handle) });
  });

  app.delete('/agents/me/block/:handle', async (req, res) => {
    const agent = await authenticate(req);
    res.json({ blocked: await teammates.unblock(agent.handle, handleParam(req)) });
  });

  if (deps.events) mountEventsRoute(app, { ...deps.events, authenticate, log });

  app.get('/agents', async (req, res) => {
    await authenticate(req);
    res.json({ teammates: await teammates.list(body(req, agentsQuery, 'query')) });
  });

  mountWebInbox(app, {
    uses: deps.uses,
    publicUrl: links.publicUrl,
    signInLimiter: deps.signInLimiter,
    changeLimiter: deps.rateLimiter,
    events: deps.events,
    timers: deps.timers,
    slackSignIn: deps.slackSignIn,
    log,
  });

  app.get('/inbox/:thread_id', async (req, res) => {
    res.setHeader('Content-Security-Policy', PAGE_CSP);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Referrer-Policy', 'no-referrer');
    // The signed link is the credential: keep it out of shared caches and history-restoring proxies.
    res.setHeader('Cache-Control', 'no-store');
    const id = /^[0-9a-f-]{36}$/i.test(req.params.thread_id) ? req.params.thread_id.toLowerCase() : null;
    if (!id) return res.status(404).type('html').send(inboxHelpPage('', 'There is no such handoff.'));
    const { as, sig } = req.query;
    if (typeof as !== 'string' || typeof sig !== 'string') {
      return res
        .status(200)
        .type('html')
        .send(inboxHelpPage(id, 'This link does not say who you are, so the thread is not shown here.'));
    }
    const found = await reads.threadForInboxLink(id, as, sig);
    if (!found) return res.status(403).type('html').send(inboxHelpPage(id, 'This link is not valid for this handoff.'));
    res.type('html').send(inboxPage(found.view, found.viewer));
  });

  // /health too: where people and load balancers often look first (a route each, so each logs its own pattern).
  for (const path of ['/healthz', '/health']) {
    app.get(path, (_req, res) => {
      res.json({ status: 'ok' });
    });
  }

  // The card at the domain's well-known path (A2A §8.2, RFC 8615), and under the /a2a base too, where clients that
  // are given the endpoint's URL (the A2A TCK's --sut-url) look for it.
  for (const path of ['/.well-known/agent-card.json', '/a2a/.well-known/agent-card.json']) {
    app.get(path, (req, res) => {
      const cardVersion = cardVersionOf(req.get('a2a-version'), req.query['A2A-Version']);
      res.setHeader('Vary', 'A2A-Version');
      res.json(agentCard({ publicUrl: links.publicUrl, version: RELAY_VERSION, cardVersion }));
    });
  }

  /** Each dependency: 'ok', or why it does not answer. */
  async function readiness(): Promise<Record<string, string>> {
    const checks = await Promise.all(
      Object.entries(deps.readiness).map(async ([name, check]) => {
        try {
          await check();
          return [name, 'ok'] as const;
        } catch (error) {
          return [name, `unavailable: ${(error as Error).message}`] as const;
        }
      }),
    );
    return Object.fromEntries(checks);
  }

  app.get('/readyz', async (_req, res) => {
    const checks = await readiness();
    const ready = Object.values(checks).every((state) => state === 'ok');
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready', checks });
  });

  // Browsers ask every site for an icon; the relay has none to show, and says so without an error in their console.
  app.get('/favicon.ico', (_req, res) => {
    res.setHeader('Cache-Control', 'public, max-age=86400');
    res.status(204).end();
  });

  app.get('/', async (_req, res) => {
    res.setHeader('Content-Security-Policy', PAGE_CSP);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    const api = deps.apiRoutes !== false;
    const links = [
      { href: '/readyz', text: '/readyz', note: 'readiness as JSON (also /healthz, /health)' },
      ...(api
        ? [
            {
              href: '/admin/queues',
              text: '/admin/queues',
              note: 'the delivery queues (admin key: your browser asks for it)',
            },
          ]
        : []),
      { href: '/metrics', text: '/metrics', note: 'Prometheus metrics (admin key or RELAY_METRICS_TOKEN)' },
      ...(api
        ? [
            {
              href: '/.well-known/agent-card.json',
              text: '/.well-known/agent-card.json',
              note: "the A2A agent card (POST /a2a, POST /mcp with a teammate's API key)",
            },
            {
              href: '/inbox',
              text: '/inbox',
              note: 'the web inbox: sign in with a one-time link (handoff-relay open, or "Open web inbox" in Slack)',
            },
          ]
        : []),
    ];
    res.type('html').send(homePage({ version: RELAY_VERSION, checks: await readiness(), links }));
  });

  return app;
}

/** Routes whose errors are JSON-RPC error objects rather than REST ones (/mcp is mounted by mcp/). */
const JSON_RPC_PATHS = new Set(['/a2a', '/mcp']);

/** Last handlers: unknown routes and errors become `{ code, message, request_id }` (never a stack). */
export function finishHttpApp(app: express.Express, log: Logger): void {
  app.use((req, res) => {
    restError(res, new RelayError('method_not_found', `No route ${req.method} ${req.path}`));
  });
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (error instanceof RelayError) return restError(res, error);
    const status = (error as { status?: number; type?: string }).status;
    const type = (error as { type?: string }).type;
    if (type === 'entity.parse.failed') {
      const err = new RelayError('parse_error', 'The request body is not valid JSON');
      if (JSON_RPC_PATHS.has(req.path)) {
        return res.status(400).json(jsonRpcError(null, err, requestId(res)));
      }
      return restError(res, err);
    }
    if (type === 'entity.too.large') {
      const err = new RelayError(
        'invalid_request',
        `The request body is larger than ${LIMITS.bodyBytes} bytes`,
        undefined,
        413,
      );
      if (JSON_RPC_PATHS.has(req.path)) return res.status(413).json(jsonRpcError(null, err, requestId(res)));
      return restError(res, err);
    }
    if (status && status >= 400 && status < 500) {
      const err = new RelayError('invalid_request', (error as Error).message, undefined, status);
      if (JSON_RPC_PATHS.has(req.path)) {
        // 400 here means the body could not be read (e.g. a broken gzip stream): not JSON, as far as we can tell.
        const rpcErr =
          status === 400
            ? new RelayError('parse_error', `The request body could not be read: ${(error as Error).message}`)
            : err;
        return res.status(status).json(jsonRpcError(null, rpcErr, requestId(res)));
      }
      return restError(res, err);
    }
    // The relay's own failure: unavailable (503, Retry-After) when its database or queue cannot be reached, else internal.
    const answer = failureAnswer(error);
    log.error({ err: error, request_id: requestId(res) }, 'unexpected error in HTTP route');
    if (answer.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(answer.retryAfterSeconds));
    restError(res, answer.error);
  });
}
