// POST /a2a: authenticates the caller, checks the JSON-RPC envelope, and runs the method dispatch.ts picks.
import type { Request, RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { AgentDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';
import { requestId } from '../ops/request-context';
import { jsonRpcError } from './json-rpc-error';
import type { RateLimiter } from '../ops/rate-limiter';
import type { RelayService } from '../service/relay-service';
import { resolveMethod } from './dispatch';
import { failureAnswer } from './failure-answer';
import { MUTATING_METHODS, SESSION_ID_PATTERN } from './method';

export interface JsonRpcEndpointDeps {
  relay: RelayService;
  rateLimiter: RateLimiter;
  log: Logger;
  /** The teammate the request authenticates as (throws unauthenticated). */
  authenticate(req: Request): Promise<AgentDoc>;
}

export function jsonRpcEndpoint(deps: JsonRpcEndpointDeps): RequestHandler {
  const { relay, log } = deps;
  return async (req, res) => {
    const reqId = requestId(res);
    // express.json reads an empty body as {}; an empty body is not JSON.
    if (req.get('content-length') === '0') {
      return res.status(400).json(jsonRpcError(null, new RelayError('parse_error', 'The request body is empty; expected a JSON-RPC request'), reqId));
    }
    const body = req.body as unknown;
    const id = body && typeof body === 'object' && !Array.isArray(body) ? (body as { id?: unknown }).id : null;
    const send = (status: number, payload: unknown) => res.status(status).json(payload);
    const fail = (error: unknown, method?: unknown) => {
      const answer = failureAnswer(error);
      if (answer.unexpected) log.error({ err: error, request_id: reqId, method }, 'unexpected error in JSON-RPC method');
      if (answer.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(answer.retryAfterSeconds));
      return send(answer.status, jsonRpcError(id, answer.error, reqId));
    };
    let caller: AgentDoc;
    try {
      caller = await deps.authenticate(req);
    } catch (error) {
      // unauthenticated (401), or unavailable (503) when the key could not be looked up.
      return fail(error instanceof RelayError ? error : new RelayError('unavailable', 'The relay cannot check API keys right now; retry shortly'));
    }
    const envelope = body as { jsonrpc?: unknown; method?: unknown; params?: unknown; id?: unknown };
    if (!body || typeof body !== 'object' || Array.isArray(body) || envelope.jsonrpc !== '2.0' || typeof envelope.method !== 'string') {
      return send(200, jsonRpcError(null, new RelayError('invalid_request', 'Expected a JSON-RPC 2.0 request object with "jsonrpc": "2.0" and a method'), reqId));
    }
    if (envelope.id !== undefined && envelope.id !== null && typeof envelope.id !== 'string' && typeof envelope.id !== 'number') {
      return send(200, jsonRpcError(null, new RelayError('invalid_request', 'The JSON-RPC id must be a string, a number or null'), reqId));
    }
    const method = resolveMethod(envelope.method, envelope.params);
    if (!method) {
      return send(200, jsonRpcError(id, new RelayError('method_not_found', `Unknown method ${envelope.method}`), reqId));
    }
    if (envelope.params !== undefined && (envelope.params === null || typeof envelope.params !== 'object' || Array.isArray(envelope.params))) {
      return send(200, jsonRpcError(id, new RelayError('invalid_params', 'params must be an object'), reqId));
    }
    try {
      if (MUTATING_METHODS.has(envelope.method)) await deps.rateLimiter.consume(caller.handle);
      const idempotencyKey = req.get('idempotency-key') || undefined;
      // The stdio MCP server says so, so status history shows the surface the person used; informational only.
      const via = req.get('x-relay-surface') === 'mcp' ? 'mcp' : 'a2a';
      const sessionId = req.get('x-relay-session') || undefined;
      if (sessionId !== undefined && !SESSION_ID_PATTERN.test(sessionId)) {
        throw new RelayError('invalid_params', 'X-Relay-Session: must be 1–128 letters, digits, ".", "_", ":" or "-"');
      }
      const result = await method({ caller, relay, idempotencyKey, via, sessionId }, envelope.params);
      return send(200, { jsonrpc: '2.0', id: id ?? null, result });
    } catch (error) {
      return fail(error, envelope.method);
    }
  };
}
