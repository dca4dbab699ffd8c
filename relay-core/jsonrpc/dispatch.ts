// Method dispatch for POST /a2a: which handler a method name (and, for the shared names, the params' shape) selects.
import { A2A_STANDARD_METHODS, A2A_V03_METHODS } from './a2a-methods';
import { A2A_PUSH_METHODS } from './a2a-push';
import type { Method } from './method';
import { assertCleanParams } from './params-hygiene';
import { RUN_METHODS } from './run-methods';
import { WIRE_METHODS } from './wire-methods';

const WIRE_SEND_KEYS = ['task_id', 'recipient', 'intent'];

/**
 * True when a message/send, tasks/get or tasks/cancel request is A2A v0.3 rather than the handoff-relay wire
 * shape: message.kind "message" and none of the wire's top-level task_id / recipient / intent; or an `id`
 * without `task_id`.
 */
export function legacyA2A(method: string, params: unknown): boolean {
  if (!params || typeof params !== 'object' || Array.isArray(params)) return false;
  const p = params as Record<string, unknown>;
  switch (method) {
    case 'message/send': {
      const message = p.message as { kind?: unknown } | null | undefined;
      return (
        !!message &&
        typeof message === 'object' &&
        message.kind === 'message' &&
        WIRE_SEND_KEYS.every((k) => p[k] === undefined)
      );
    }
    case 'tasks/get':
    case 'tasks/cancel':
      return p.id !== undefined && p.task_id === undefined;
    default:
      return false;
  }
}

/**
 * The handler for a JSON-RPC method: A2A v0.3 by shape, then A2A v1.0, then the handoff-relay wire methods;
 * each first refuses a NUL or a reserved key anywhere in its params (params-hygiene.ts).
 */
export function resolveMethod(name: string, params: unknown): Method | undefined {
  const method = findMethod(name, params);
  return (
    method &&
    ((ctx, p) => {
      assertCleanParams(p);
      return method(ctx, p);
    })
  );
}

function findMethod(name: string, params: unknown): Method | undefined {
  if (legacyA2A(name, params) && Object.hasOwn(A2A_V03_METHODS, name)) return A2A_V03_METHODS[name];
  if (Object.hasOwn(A2A_STANDARD_METHODS, name)) return A2A_STANDARD_METHODS[name];
  if (Object.hasOwn(A2A_PUSH_METHODS, name)) return A2A_PUSH_METHODS[name];
  if (Object.hasOwn(RUN_METHODS, name)) return RUN_METHODS[name];
  return Object.hasOwn(WIRE_METHODS, name) ? WIRE_METHODS[name] : undefined;
}
