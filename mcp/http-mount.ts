// Streamable HTTP MCP at /mcp on the relay's own HTTP app: the same tools, in process, as the teammate whose API key
// authenticates the request. Stateless: one McpServer and transport per request.
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import express, { type Request, type Response } from 'express';
import { LIMITS } from '../relay-core/schemas';
import type { RateLimiter } from '../relay-core/rate-limiter';
import type { RelayService } from '../relay-core/relay-service';
import { InProcessRelayClient } from './in-process-relay-client';
import { createServer } from './server';

export interface McpHttpDeps {
  relay: RelayService;
  /** Counts mutating calls per teammate, like /a2a; omitted, MCP calls are not rate limited. */
  rateLimiter?: RateLimiter;
}

function bearer(req: Request): string | undefined {
  const header = req.get('authorization');
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}

function rpcError(res: Response, status: number, code: number, symbol: string, message: string): void {
  res.status(status).json({ jsonrpc: '2.0', id: null, error: { code, message, data: { code: symbol } } });
}

export function mountMcpHttp(app: express.Express, deps: McpHttpDeps): void {
  const json = express.json({ limit: LIMITS.bodyBytes });

  app.post('/mcp', json, async (req, res, next) => {
    try {
      const key = bearer(req);
      const caller = key ? await deps.relay.teammates.authenticate(key) : null;
      if (!caller) {
        res.setHeader('WWW-Authenticate', 'Bearer');
        return rpcError(res, 401, -32001, 'unauthenticated', key ? 'The API key is not valid' : 'Missing Authorization: Bearer <api key>');
      }
      const { server, cleanup } = createServer(new InProcessRelayClient({ relay: deps.relay, caller, rateLimiter: deps.rateLimiter }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => {
        void transport.close();
        void cleanup();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (error) {
      if (res.headersSent) return;
      next(error);
    }
  });

  // Stateless: no server-initiated stream and no session to end.
  const notAllowed = async (req: Request, res: Response, next: express.NextFunction) => {
    try {
      const key = bearer(req);
      if (!key || !(await deps.relay.teammates.authenticate(key))) {
        res.setHeader('WWW-Authenticate', 'Bearer');
        return rpcError(res, 401, -32001, 'unauthenticated', key ? 'The API key is not valid' : 'Missing Authorization: Bearer <api key>');
      }
      res.setHeader('Allow', 'POST');
      rpcError(res, 405, -32000, 'method_not_allowed', 'Method not allowed: this MCP endpoint is stateless; use POST');
    } catch (error) {
      next(error);
    }
  };
  app.get('/mcp', notAllowed);
  app.delete('/mcp', notAllowed);
}
