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

// Stateless: one McpServer and transport per request (http-session.ts).

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

export function mountMcpHttp(app: express.Express, deps: McpHttpDeps): void {
  const json = express.json({ limit: LIMITS.bodyBytes });
  const guard = originGuard(deps.origins);

  app.post('/mcp', guard, requireJsonContentType(), json, async (req, res, next) => {
    try {
      const key = bearer(req);
      const caller = await callerOf(deps, key);
      if (!caller) return unauthenticated(res, key);
      // Stateless transport: the client's own session header, when it sends one, is the session a policy counts.
      const session = req.get('x-relay-session') ?? req.get('mcp-session-id');
      const sessionId = session && SESSION_ID_PATTERN.test(session) ? session : undefined;
      const { serveMcpRequest } = await loadSessionModule();
      await serveMcpRequest(
        new InProcessRelayClient({ uses: deps.uses, caller, rateLimiter: deps.rateLimiter, sessionId }),
        req,
        res,
      );
    } catch (error) {
      if (res.headersSent) return;
      if (error instanceof RelayError) return refuse(res, error);
      next(error);
    }
  });

  // Stateless: no server-initiated stream and no session to end.
  const notAllowed = async (req: Request, res: Response, next: express.NextFunction) => {
    try {
      const key = bearer(req);
      if (!(await callerOf(deps, key))) return unauthenticated(res, key);
      res.setHeader('Allow', 'POST');
      res.status(405).json({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32000,
          message: 'Method not allowed: this MCP endpoint is stateless; use POST',
          data: { code: 'method_not_allowed' },
        },
      });
    } catch (error) {
      if (error instanceof RelayError) return refuse(res, error);
      next(error);
    }
  };
  app.get('/mcp', guard, notAllowed);
  app.delete('/mcp', guard, notAllowed);
}
