// POST /a2a: authenticates the caller, checks the JSON-RPC envelope, and runs the method dispatch.ts picks.
import type { Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import type { AgentDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';
import { requestId } from '../ops/request-context';
import { jsonRpcError } from './json-rpc-error';
import type { RateLimiter } from '../ops/rate-limiter';
import { resolveMethod } from './dispatch';
import { failureAnswer } from './failure-answer';
import {
  MUTATING_METHODS,
  SESSION_ID_PATTERN,
  WAITING_METHODS,
  type MethodContext,
  type MethodUseCases,
} from './method';
import { A2A_STREAMING_METHODS, followTask, isStreamingMethod } from './a2a-streaming';
import { assertCleanParams } from './params-hygiene';
import { a2aErrorCode, isA2AV1Method } from './a2a-errors';

export interface JsonRpcEndpointDeps {
  /** The use cases the methods call. */
  uses: MethodUseCases;
  rateLimiter: RateLimiter;
  log: Logger;
  /** The open streams of this process (SendStreamingMessage, SubscribeToTask), ended on shutdown. */
  streams?: { track(res: Response): AbortSignal };
  /** The teammate the request authenticates as (throws unauthenticated). */
  authenticate(req: Request): Promise<AgentDoc>;
}

export function jsonRpcEndpoint(deps: JsonRpcEndpointDeps): RequestHandler {
  const { uses, log } = deps;
  return async (req, res) => {
    const reqId = requestId(res);
    // express.json reads an empty body as {}; an empty body is not JSON.
    if (req.get('content-length') === '0') {
      return res
        .status(400)
        .json(
          jsonRpcError(
            null,
            new RelayError('parse_error', 'The request body is empty; expected a JSON-RPC request'),
            reqId,
          ),
        );
    }
    const body = req.body as unknown;
    const envelope = (body && typeof body === 'object' && !Array.isArray(body) ? body : {}) as {
      jsonrpc?: unknown;
      method?: unknown;
      params?: unknown;
      id?: unknown;
    };
    // Every answer echoes the request's id when it can be read, a malformed request's too; an id of another type is null.
    const id = typeof envelope.id === 'string' || typeof envelope.id === 'number' ? envelope.id : null;
    const send = (status: number, payload: unknown) => res.status(status).json(payload);
    const fail = (error: unknown, method?: unknown) => {
      const answer = failureAnswer(error);
      if (answer.unexpected)
        log.error({ err: error, request_id: reqId, method }, 'unexpected error in JSON-RPC method');
      if (answer.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(answer.retryAfterSeconds));
      const code = isA2AV1Method(method) ? a2aErrorCode(method, answer.error) : answer.error.numericCode;
      return send(answer.status, jsonRpcError(id, answer.error, reqId, code));
    };
    let caller: AgentDoc;
    try {
      caller = await deps.authenticate(req);
    } catch (error) {
      // unauthenticated (401), or unavailable (503) when the key could not be looked up.
      return fail(
        error instanceof RelayError
          ? error
          : new RelayError('unavailable', 'The relay cannot check API keys right now; retry shortly'),
        envelope.method,
      );
    }
    if (
      !body ||
      typeof body !== 'object' ||
      Array.isArray(body) ||
      envelope.jsonrpc !== '2.0' ||
      typeof envelope.method !== 'string'
    ) {
      return send(
        200,
        jsonRpcError(
          id,
          new RelayError(
            'invalid_request',
            'Expected a JSON-RPC 2.0 request object with "jsonrpc": "2.0" and a method',
          ),
          reqId,
        ),
      );
    }
    if (
      envelope.id !== undefined &&
      envelope.id !== null &&
      typeof envelope.id !== 'string' &&
      typeof envelope.id !== 'number'
    ) {
      return send(
        200,
        jsonRpcError(
          null,
          new RelayError('invalid_request', 'The JSON-RPC id must be a string, a number or null'),
          reqId,
        ),
      );
    }
    if (isStreamingMethod(envelope.method)) return streamMethod(deps, req, res, caller, envelope, fail);
    const method = resolveMethod(envelope.method, envelope.params);
    if (!method) {
      return send(
        200,
        jsonRpcError(id, new RelayError('method_not_found', `Unknown method ${envelope.method}`), reqId),
      );
    }
    if (
      envelope.params !== undefined &&
      (envelope.params === null || typeof envelope.params !== 'object' || Array.isArray(envelope.params))
    ) {
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
      const signal = WAITING_METHODS.has(envelope.method) ? deps.streams?.track(res) : undefined;
      const result = await method(
        { ...uses, caller, idempotencyKey, via, sessionId, ...(signal ? { signal } : {}) },
        envelope.params,
      );
      return send(200, { jsonrpc: '2.0', id: id ?? null, result });
    } catch (error) {
      return fail(error, envelope.method);
    }
  };
}

/** Heartbeat comments on an A2A stream with nothing to say for this long. */
const STREAM_HEARTBEAT_MS = 15_000;

/**
 * A streaming method: errors before the stream opens are ordinary JSON-RPC answers; then Server-Sent Events, each a
 * JSON-RPC response with the request's id whose result is one StreamResponse, until the task is finished.
 */
async function streamMethod(
  deps: JsonRpcEndpointDeps,
  req: Request,
  res: Response,
  caller: AgentDoc,
  envelope: { method?: unknown; params?: unknown; id?: unknown },
  fail: (error: unknown, method?: unknown) => unknown,
): Promise<unknown> {
  const name = envelope.method as string;
  const id = (envelope.id as string | number | null | undefined) ?? null;
  const ctx: MethodContext = {
    ...deps.uses,
    caller,
    idempotencyKey: req.get('idempotency-key') || undefined,
    via: 'a2a',
    sessionId: undefined,
  };
  let opened;
  try {
    if (
      envelope.params !== undefined &&
      (envelope.params === null || typeof envelope.params !== 'object' || Array.isArray(envelope.params))
    ) {
      throw new RelayError('invalid_params', 'params must be an object');
    }
    assertCleanParams(envelope.params);
    const sessionId = req.get('x-relay-session') || undefined;
    if (sessionId !== undefined && !SESSION_ID_PATTERN.test(sessionId)) {
      throw new RelayError('invalid_params', 'X-Relay-Session: must be 1–128 letters, digits, ".", "_", ":" or "-"');
    }
    ctx.sessionId = sessionId;
    if (MUTATING_METHODS.has(name)) await deps.rateLimiter.consume(caller.handle);
    opened = await A2A_STREAMING_METHODS[name]!(ctx, envelope.params ?? {});
  } catch (error) {
    return fail(error, name);
  }
  const controller = new AbortController();
  const signal = deps.streams ? deps.streams.track(res) : controller.signal;
  res.on('close', () => controller.abort());
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    'x-accel-buffering': 'no',
  });
  const write = async (chunk: string) => {
    if (!res.write(chunk))
      await new Promise<void>((resolve) => (res.once('drain', resolve), res.once('close', resolve)));
  };
  const send = (result: Record<string, unknown>) =>
    write(`data: ${JSON.stringify({ jsonrpc: '2.0', id, result })}\n\n`);
  try {
    await send(opened.first);
    if (!opened.finished)
      await followTask(ctx, opened, send, () => write(': heartbeat\n\n'), signal, deps.log, STREAM_HEARTBEAT_MS);
  } catch (error) {
    deps.log.warn({ err: (error as Error).message, method: name }, 'task stream ended by an error');
    const answer = failureAnswer(error);
    await write(
      `data: ${JSON.stringify(jsonRpcError(id, answer.error, requestId(res), a2aErrorCode(name, answer.error)))}\n\n`,
    ).catch(() => {});
  } finally {
    res.end();
  }
  return undefined;
}
