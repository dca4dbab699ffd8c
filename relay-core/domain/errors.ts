// The one domain error of the relay: every edge (JSON-RPC, REST, MCP, Slack, jobs) translates it once.

export const ERROR_CODES = {
  parse_error: -32700,
  invalid_request: -32600,
  method_not_found: -32601,
  invalid_params: -32602,
  unauthenticated: -32001,
  forbidden: -32002,
  rate_limited: -32003,
  recipient_not_found: -32004,
  not_a_participant: -32005,
  thread_not_found: -32006,
  thread_terminal: -32007,
  invalid_transition: -32008,
  not_authorized_transition: -32009,
  state_changed: -32010,
  duplicate_idempotency_key: -32011,
  invalid_intent_payload: -32012,
  teammate_blocked: -32013,
  conflict: -32014,
  not_found: -32015,
  unavailable: -32016,
  policy_denied: -32020,
  approval_pending: -32021,
  internal: -32099,
} as const;

export type ErrorSymbol = keyof typeof ERROR_CODES;

/** HTTP status for the REST routes (JSON-RPC answers 200 except unauthenticated, unavailable and parse_error). */
export const HTTP_STATUS: Record<ErrorSymbol, number> = {
  parse_error: 400,
  invalid_request: 400,
  method_not_found: 404,
  invalid_params: 400,
  unauthenticated: 401,
  forbidden: 403,
  rate_limited: 429,
  recipient_not_found: 404,
  not_a_participant: 403,
  thread_not_found: 404,
  thread_terminal: 409,
  invalid_transition: 409,
  not_authorized_transition: 403,
  state_changed: 409,
  duplicate_idempotency_key: 409,
  invalid_intent_payload: 400,
  teammate_blocked: 403,
  conflict: 409,
  not_found: 404,
  unavailable: 503,
  policy_denied: 403,
  approval_pending: 409,
  internal: 500,
};

export class RelayError extends Error {
  readonly code: ErrorSymbol;
  readonly details?: unknown;
  /** The symbol's HTTP status, or the transport's own when the edge says so (a body over the size limit is 413). */
  readonly httpStatus: number;

  constructor(code: ErrorSymbol, message: string, details?: unknown, httpStatus?: number) {
    super(message);
    this.name = 'RelayError';
    this.code = code;
    this.details = details;
    this.httpStatus = httpStatus ?? HTTP_STATUS[code];
  }

  get numericCode(): number {
    return ERROR_CODES[this.code];
  }
}

/** How many offending fields an invalid_params message names (its `issues` detail lists up to 10). */
const NAMED_ISSUES = 5;

/**
 * Turns a zod error into invalid_params whose message starts with the first offending field path and names the other
 * offending fields after it (one issue each, up to NAMED_ISSUES), so a caller fixes them all in one go.
 */
export function invalidParams(
  issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>,
  root = 'params',
): RelayError {
  const pathOf = (parts: readonly PropertyKey[]) =>
    [root, ...parts].map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join('');
  const byPath = new Map<string, string>();
  for (const issue of issues) {
    const path = pathOf(issue.path);
    if (!byPath.has(path)) byPath.set(path, issue.message);
  }
  const named = [...byPath].map(([path, message]) => `${path}: ${message}`);
  const more = named.length > NAMED_ISSUES ? `; and ${named.length - NAMED_ISSUES} more` : '';
  const message = named.length === 0 ? `${root}: invalid` : named.slice(0, NAMED_ISSUES).join('; ') + more;
  return new RelayError('invalid_params', message, {
    issues: issues.slice(0, 10).map((i) => ({ path: i.path.map(String), message: i.message })),
  });
}
