// What a JSON-RPC method of /a2a is: a function of the caller's context and the request's raw params.
import type { AgentDoc } from '../domain/documents';
import type { Surface } from '../domain/schemas';
import type { RelayService } from '../service/relay-service';

export interface MethodContext {
  caller: AgentDoc;
  relay: RelayService;
  /** The Idempotency-Key header, when the client sent one. */
  idempotencyKey?: string;
  via: Surface;
  /** The agent session the call belongs to (X-Relay-Session; the MCP servers send one), for per-session policy limits. */
  sessionId?: string;
}

/** An agent session id as a client may send it; anything else is not a session. */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

export type Method = (ctx: MethodContext, params: unknown) => Promise<unknown>;

/** Mutating methods: rate limited per API key, and sent by clients under an idempotency key. */
export const MUTATING_METHODS: ReadonlySet<string> = new Set(['message/send', 'tasks/update', 'tasks/cancel', 'SendMessage', 'CancelTask', 'SendStreamingMessage', 'CreateTaskPushNotificationConfig', 'DeleteTaskPushNotificationConfig']);
