// How a failed Slack Web API call reads, for the `slack` queue and the listeners alike.
import { ErrorCode } from '@slack/web-api';

/** Refusals of what we sent: retrying the same content cannot help. */
const PERMANENT_SLACK_ERRORS = new Set([
  'invalid_blocks',
  'msg_blocks_too_long',
  'msg_too_long',
  'no_text',
  'invalid_metadata_format',
  'invalid_metadata_schema',
  'invalid_arguments',
  'cannot_dm_bot',
  'user_not_found',
  'message_not_found',
]);

/** The token no longer works (the workspace uninstalled the app or revoked it): nothing sent with it will pass. */
const WORKSPACE_GONE_ERRORS = new Set(['token_revoked', 'account_inactive', 'invalid_auth', 'not_authed']);

/** Slack refused the token itself: the workspace is gone for this app until it installs it again. */
export function isWorkspaceGoneError(error: unknown): boolean {
  const code = slackErrorCode(error);
  return code !== undefined && WORKSPACE_GONE_ERRORS.has(code);
}

/** The Web API error code of a refused call (`expired_trigger_id`…), or undefined for any other failure. */
export function slackErrorCode(error: unknown): string | undefined {
  const e = error as { code?: unknown; data?: { error?: unknown } } | undefined;
  return e?.code === ErrorCode.PlatformError && typeof e.data?.error === 'string' ? e.data.error : undefined;
}

/** Slack refused the message itself (`invalid_blocks`, `msg_too_long`…): the same content is refused again. */
export function isPermanentSlackError(error: unknown): boolean {
  const code = slackErrorCode(error);
  return code !== undefined && PERMANENT_SLACK_ERRORS.has(code);
}

/** Retry-After of a 429 in ms (at least 1 s), or null for any other error. */
export function rateLimitedMs(error: unknown): number | null {
  const e = error as { code?: unknown; retryAfter?: unknown } | undefined;
  if (e?.code !== ErrorCode.RateLimitedError) return null;
  const seconds = typeof e.retryAfter === 'number' && Number.isFinite(e.retryAfter) ? e.retryAfter : 1;
  return Math.max(1, seconds) * 1_000;
}

/** Slack answered, and the answer was not ok: the message does not exist. (A network error or 5xx proves nothing.) */
export function definitelyNotPosted(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === ErrorCode.RateLimitedError || code === ErrorCode.PlatformError;
}
