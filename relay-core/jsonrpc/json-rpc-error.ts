// The JSON-RPC error answer of /a2a and /mcp: the relay's numeric code, its symbol and the request id.
import type { RelayError } from '../domain/errors';

export function jsonRpcError(id: unknown, error: RelayError, reqId: string) {
  return {
    jsonrpc: '2.0' as const,
    id: id ?? null,
    error: {
      code: error.numericCode,
      message: error.message,
      data: { code: error.code, request_id: reqId, ...(error.details === undefined ? {} : { details: error.details }) },
    },
  };
}
