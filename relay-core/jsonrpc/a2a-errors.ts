// The A2A v1.0 methods answer A2A's own JSON-RPC error codes (A2A spec §5.4); the wire methods keep the relay's (WIRE.md).
// Not @a2a-js/sdk's JsonRpcTransportHandler (nor its express jsonRpcHandler): its errors carry data: [google.rpc.ErrorInfo] or none (toJsonRpcError drops an error's own data and is called by class name, so no subclass changes it), never WIRE.md's data: { code, request_id }, and jsonRpcHandler reads a request without A2A-Version as v0.3 where this relay tells v0.3 by its params' shape.
import type { RelayError } from '../domain/errors';
import { A2A_STANDARD_METHODS } from './a2a-methods';
import { A2A_PUSH_METHODS } from './a2a-push';
import { A2A_STREAMING_METHODS } from './a2a-streaming';

/** A2A v1.0's error codes (spec §5.4, Error Code Mappings), as @a2a-js/sdk maps them back to its error classes. */
export const A2A_ERROR_CODES = {
  TaskNotFoundError: -32001,
  TaskNotCancelableError: -32002,
  PushNotificationNotSupportedError: -32003,
  UnsupportedOperationError: -32004,
  ContentTypeNotSupportedError: -32005,
  InvalidAgentResponseError: -32006,
  ExtendedAgentCardNotConfiguredError: -32007,
  ExtensionSupportRequiredError: -32008,
  VersionNotSupportedError: -32009,
} as const;

/** JSON-RPC's own codes an A2A client knows (InvalidParams, InternalError) and its generic implementation-defined server error. */
const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;
const SERVER_ERROR = -32000;

const A2A_V1_METHODS: ReadonlySet<string> = new Set([
  ...Object.keys(A2A_STANDARD_METHODS),
  ...Object.keys(A2A_STREAMING_METHODS),
  ...Object.keys(A2A_PUSH_METHODS),
]);

/** True for a method of the A2A v1.0 JSON-RPC binding (PascalCase names); the wire's and v0.3's slash names are not. */
export function isA2AV1Method(method: unknown): method is string {
  return typeof method === 'string' && A2A_V1_METHODS.has(method);
}

/**
 * The code an A2A v1.0 method answers `error` with. The relay's symbol stays in `data.code` either way; only the
 * number changes, so that an A2A client (the SDK turns codes into its error classes) reads what A2A means by it:
 * - a task that does not exist or that the caller may not see is TaskNotFoundError;
 * - cancelling a finished task, or one the caller may not cancel, is TaskNotCancelableError;
 * - following or writing to a finished task, and a capability this relay runs without, is UnsupportedOperationError;
 * - a recipient or intent payload the relay cannot take is InvalidParams, a bug InternalError;
 * - any other relay code that A2A gives a meaning of its own (-32001…-32009) becomes the generic server error
 *   -32000, so that `unauthenticated` (-32001) is never read as TaskNotFoundError; the rest keep their numbers.
 */
export function a2aErrorCode(method: string, error: RelayError): number {
  switch (error.code) {
    case 'thread_not_found':
    case 'not_a_participant':
      return A2A_ERROR_CODES.TaskNotFoundError;
    case 'thread_terminal':
    case 'invalid_transition':
    case 'not_authorized_transition':
      if (method === 'CancelTask') return A2A_ERROR_CODES.TaskNotCancelableError;
      return error.code === 'thread_terminal' ? A2A_ERROR_CODES.UnsupportedOperationError : SERVER_ERROR;
    case 'method_not_found':
      // The method exists in A2A v1.0 (the endpoint answers unknown names itself): this relay runs without it.
      return A2A_ERROR_CODES.UnsupportedOperationError;
    case 'recipient_not_found':
    case 'invalid_intent_payload':
      return INVALID_PARAMS;
    case 'internal':
      return INTERNAL_ERROR;
    default: {
      const code = error.numericCode;
      return code <= A2A_ERROR_CODES.TaskNotFoundError && code >= A2A_ERROR_CODES.VersionNotSupportedError
        ? SERVER_ERROR
        : code;
    }
  }
}
