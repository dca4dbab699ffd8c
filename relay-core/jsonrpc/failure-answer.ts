// How a JSON-RPC call that failed is answered over HTTP: a client's mistake keeps its 200, and a failure that
// is the relay's own (a bug, its store or queue unreachable, a write it could not get in under contention)
// answers 5xx with the same JSON-RPC error body, so clients that retry on 5xx (handoff-mcp among them) do.
import { RelayError } from '../domain/errors';

export interface FailureAnswer {
  error: RelayError;
  status: number;
  /** Seconds for a Retry-After header, where waiting and retrying is likely to work. */
  retryAfterSeconds?: number;
  /** Not a RelayError: the relay did not expect it, so it is logged. */
  unexpected: boolean;
}

/** Errors of the MongoDB driver and of sockets that mean a dependency cannot be reached right now. */
const UNREACHABLE_NAMES = new Set([
  'MongoServerSelectionError',
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoNotConnectedError',
  'MongoTopologyClosedError',
  'MongoPoolClearedError',
  'MaxRetriesPerRequestError',
]);
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH']);

function unreachable(error: unknown): boolean {
  for (
    let e = error, depth = 0;
    e && typeof e === 'object' && depth < 5;
    e = (e as { cause?: unknown }).cause, depth += 1
  ) {
    const { name, code } = e as { name?: unknown; code?: unknown };
    if (
      (typeof name === 'string' && UNREACHABLE_NAMES.has(name)) ||
      (typeof code === 'string' && UNREACHABLE_CODES.has(code))
    )
      return true;
  }
  return false;
}

export function failureAnswer(error: unknown): FailureAnswer {
  if (error instanceof RelayError) {
    if (error.code === 'internal') return { error, status: 500, unexpected: false };
    // Over JSON-RPC state_changed only comes from contention: the write ran out of attempts, and a retry will get in.
    if (error.code === 'state_changed') return { error, status: 503, retryAfterSeconds: 1, unexpected: false };
    if (error.code === 'unavailable') return { error, status: 503, retryAfterSeconds: 2, unexpected: false };
    return { error, status: error.code === 'unauthenticated' ? 401 : 200, unexpected: false };
  }
  if (unreachable(error)) {
    return {
      error: new RelayError('unavailable', 'The relay cannot reach its database or queue right now; retry in a moment'),
      status: 503,
      retryAfterSeconds: 2,
      unexpected: true,
    };
  }
  return {
    error: new RelayError('internal', 'Internal error; the request id identifies it in the logs'),
    status: 500,
    unexpected: true,
  };
}
