// What a JSON-RPC method of /a2a is: a function of the caller's context and the request's raw params.
import type { AgentDoc } from '../domain/documents';
import type { Surface } from '../domain/schemas';
import type { Relay } from '../service/relay-service';

/** The use cases the methods call. */
export type MethodUseCases = Pick<
  Relay,
  | 'teammates'
  | 'reads'
  | 'creates'
  | 'claims'
  | 'transitions'
  | 'messages'
  | 'runs'
  | 'approvalViews'
  | 'pushConfigs'
  | 'drafts'
  | 'feed'
  | 'clock'
  | 'webSessions'
>;

export interface MethodContext extends MethodUseCases {
  caller: AgentDoc;
  /** The Idempotency-Key header, when the client sent one. */
  idempotencyKey?: string;
  via: Surface;
  /** The agent session the call belongs to (X-Relay-Session; the MCP servers send one), for per-session policy limits. */
  sessionId?: string;
  /** Aborts when the client goes away or the relay shuts down (long-polling methods stop waiting). */
  signal?: AbortSignal;
}

/** An agent session id as a client may send it; anything else is not a session. */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

export type Method = (ctx: MethodContext, params: unknown) => Promise<unknown>;

/** Mutating methods: rate limited per API key, and sent by clients under an idempotency key. */
// A runner's claims, heartbeats and progress are not counted: their own rules bound them (one lease, the progress interval).
export const MUTATING_METHODS: ReadonlySet<string> = new Set([
  'message/send',
  'tasks/update',
  'tasks/cancel',
  'SendMessage',
  'CancelTask',
  'SendStreamingMessage',
  'CreateTaskPushNotificationConfig',
  'DeleteTaskPushNotificationConfig',
  'runs/request',
  'runs/finish',
  'runs/stop',
]);

/** Methods that may wait for something to happen before they answer: they get a signal that ends the wait. */
export const WAITING_METHODS: ReadonlySet<string> = new Set(['runs/claim']);
