// The JSON-RPC endpoints (/a2a, /mcp) read only application/json bodies (any charset parameter): any other
// content type is refused with 415 in the JSON-RPC error shape before the body is read, so text/plain or a form
// is never taken for JSON-RPC.
import type { RequestHandler } from 'express';
import { RelayError } from '../domain/errors';
import { jsonRpcError } from '../jsonrpc/json-rpc-error';
import { requestId } from '../ops/request-context';

export function requireJsonContentType(): RequestHandler {
  return (req, res, next) => {
    // null: no body at all, which the endpoint answers as not JSON (parse_error).
    if (req.is('application/json') !== false) return next();
    const got = req.get('content-type');
    const error = new RelayError(
      'invalid_request',
      `Content-Type must be application/json (got ${got ? JSON.stringify(got.slice(0, 100)) : 'none'})`,
      undefined,
      415,
    );
    res.status(415).json(jsonRpcError(null, error, requestId(res)));
  };
}
