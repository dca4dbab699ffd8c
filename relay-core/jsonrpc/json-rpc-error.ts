// The JSON-RPC error answer of /a2a and /mcp: the relay's numeric code, its symbol and the request id.
import type { RelayError } from '../domain/errors';

/** `code` is the number the method's contract gives the error (A2A v1.0 methods: a2a-errors.ts); the relay's own by default. */
export function jsonRpcError(id: unknown, error: RelayError, reqId: string, code: number = error.numericCode) {
  return {
    jsonrpc: '2.0' as const,
    id: id ?? null,
    error: {
      code,
      message: error.message,
      data: { code: error.code, request_id: reqId, ...(error.details === undefined ? {} : { details: error.details }) },
    },
  };
}
