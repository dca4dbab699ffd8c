// Streamable HTTP MCP at /mcp on the relay's HTTP app: the same tools, in process, as the key's teammate.
import express, { type Request, type Response } from 'express';
import { LIMITS } from '../relay-core/domain/schemas';
import { RelayError } from '../relay-core/domain/errors';
import { bearer } from '../relay-core/http/bearer-auth';
import { requireJsonContentType } from '../relay-core/http/json-content-type';
import { jsonRpcError } from '../relay-core/jsonrpc/json-rpc-error';
import { requestId } from '../relay-core/ops/request-context';
import type { RateLimiter } from '../relay-core/ops/rate-limiter';
import type { AgentDoc } from '../relay-core/domain/documents';
import { SESSION_ID_PATTERN, type MethodUseCases } from '../relay-core/jsonrpc/method';
import { InProcessRelayClient } from './in-process-relay-client';
import { originGuard, type McpOriginPolicy } from './origin-guard';
import { keyOwner, McpSessions, type McpSessionLimits } from './mcp-sessions';
import type { McpHttpSession } from './http-session';

// An initialize without Mcp-Session-Id opens a session (mcp-sessions.ts): its id then carries every request, the
// server's GET stream and resources/subscribe; a request without the header is served statelessly, as before sessions.

/**
 * The MCP SDK's server side and the tools load on the first /mcp request a key lets through: agents that use the
 * stdio server (which calls /a2a) never make one, and a relay that loaded them at start held about 6 MiB more.
 */
let sessionModule: Promise<typeof import('./http-session.js')> | undefined;

function loadSessionModule(): Promise<typeof import('./http-session.js')> {
  sessionModule ??= import('./http-session.js').catch((error: unknown) => {
    sessionModule = undefined;
    throw error;
  });
  return sessionModule;
}

export interface McpHttpDeps {
  /** The use cases the tools' JSON-RPC methods call. */
  uses: MethodUseCases;
  /** Counts mutating calls per teammate, like /a2a; omitted, MCP calls are not rate limited. */
  rateLimiter?: RateLimiter;
  /** Which Host and Origin headers /mcp serves (DNS-rebinding protection), checked before the key. */
  origins: McpOriginPolicy;
  /** How long an idle session lives and how many one key holds. */
  sessions: McpSessionLimits;
}

/** The client's own X-Relay-Session, which a policy's per-session allowance counts, when it sent a valid one. */
function clientSessionOf(req: Request): string | undefined {
  const session = req.get('x-relay-session');
  return session && SESSION_ID_PATTERN.test(session) ? session : undefined;
}

/** A request naming a session this process does not hold for this key: closed, expired, unknown or another key's. */
function sessionNotFound(res: Response): void {
  res.status(404).json({
    jsonrpc: '2.0',
    id: null,
    error: {
      code: -32001,
      message:
        'Session not found: it ended (expired, deleted or the relay restarted) or is not yours; send initialize without Mcp-Session-Id to open a new one',
      data: { code: 'session_not_found' },
    },
  });
}

function unauthenticated(res: Response, key: string | undefined): void {
  res.setHeader('WWW-Authenticate', 'Bearer');
  const error = new RelayError(
    'unauthenticated',
    key ? 'The API key is not valid' : 'Missing Authorization: Bearer <api key>',
  );
  res.status(401).json(jsonRpcError(null, error, requestId(res)));
}

/** The teammate the bearer key names, or null; a key that cannot be looked up (database down) is `unavailable`. */
async function callerOf(deps: McpHttpDeps, key: string | undefined): Promise<AgentDoc | null> {
  if (!key) return null;
  try {
    return await deps.uses.teammates.authenticate(key);
  } catch (error) {
    if (error instanceof RelayError) throw error;
    throw new RelayError('unavailable', 'The relay cannot check API keys right now; retry shortly');
  }
}

/** A refusal before the MCP server runs, in the JSON-RPC error shape MCP clients read (503 + Retry-After when unavailable). */
function refuse(res: Response, error: RelayError): void {
  if (error.code === 'unavailable') res.setHeader('Retry-After', '2');
  res.status(error.httpStatus).json(jsonRpcError(null, error, requestId(res)));
}

export function mountMcpHttp(
  app: express.Express,
  deps: McpHttpDeps,
): { close: () => Promise<void>; size: () => number } {
  const json = express.json({ limit: LIMITS.bodyBytes });
  const guard = originGuard(deps.origins);
  const sessions = new McpSessions<McpHttpSession>(deps.sessions);
  const relayFor = (sessionId: string | undefined, caller: AgentDoc | (() => AgentDoc)) =>
    new InProcessRelayClient({ uses: deps.uses, caller, rateLimiter: deps.rateLimiter, sessionId });

  /** The request's session, bound to its key; answers 404 (and returns undefined) when there is none such. */
  const sessionOf = (req: Request, res: Response, key: string, caller: AgentDoc): McpHttpSession | undefined => {
    const id = req.get('mcp-session-id')!;
    const session = sessions.find(id, keyOwner(key));
    if (!session) {
      sessionNotFound(res);
      return undefined;
    }
    session.caller = caller; // the teammate as its key names it now
    sessions.use(id, res, req.method === 'GET');
    return session;
  };

  app.post('/mcp', guard, requireJsonContentType(), json, async (req, res, next) => {
    try {
      const key = bearer(req);
      const caller = await callerOf(deps, key);
      if (!key || !caller) return unauthenticated(res, key);
      const module = await loadSessionModule();
      if (req.get('mcp-session-id') !== undefined) {
        const session = sessionOf(req, res, key, caller);
        return session && (await session.handle(req, res));
      }
      if (module.opensSession(req.body)) {
        if (!sessions.open) return refuse(res, new RelayError('unavailable', 'The relay is stopping; retry shortly'));
        const owner = keyOwner(key);
        if (!(await sessions.makeRoom(owner)))
          return refuse(
            res,
            new RelayError(
              'rate_limited',
              `This key holds ${sessions.limits.perKey} MCP sessions (RELAY_MCP_SESSIONS_PER_KEY), each answering a request now; end one with DELETE /mcp or retry when one has answered`,
            ),
          );
        // A policy's per-session allowance counts the client's own X-Relay-Session if it sent one, else this session.
        const own = clientSessionOf(req);
        const relayOf = (id: string, current: () => AgentDoc) => relayFor(own ?? id, current);
        return await module.openMcpSession({ sessions, owner, caller, relayFor: relayOf }, req, res);
      }
      await module.serveMcpRequest(relayFor(clientSessionOf(req), caller), req, res);
    } catch (error) {
      if (res.headersSent) return;
      if (error instanceof RelayError) return refuse(res, error);
      next(error);
    }
  });

  // GET opens the session's stream for what the server sends on its own (resources/updated); DELETE ends the session.
  // Without a session there is neither.
  const sessionRequest = async (req: Request, res: Response, next: express.NextFunction) => {
    try {
      const key = bearer(req);
      const caller = await callerOf(deps, key);
      if (!key || !caller) return unauthenticated(res, key);
      if (req.get('mcp-session-id') === undefined) {
        res.setHeader('Allow', 'POST');
        return void res.status(405).json({
          jsonrpc: '2.0',
          id: null,
          error: {
            code: -32000,
            message: `Method not allowed without Mcp-Session-Id: ${req.method} /mcp is a session's (send initialize without one to open a session)`,
            data: { code: 'method_not_allowed' },
          },
        });
      }
      const session = sessionOf(req, res, key, caller);
      if (session) await session.handle(req, res);
    } catch (error) {
      if (res.headersSent) return;
      if (error instanceof RelayError) return refuse(res, error);
      next(error);
    }
  };
  app.get('/mcp', guard, sessionRequest);
  app.delete('/mcp', guard, sessionRequest);
  return { close: () => sessions.closeAll(), size: () => sessions.size };
}
