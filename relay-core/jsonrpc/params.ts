// JSON-RPC params are parsed once, here: a zod failure is invalid_params naming the field under `params`.
import { z } from 'zod';
import { invalidParams } from '../domain/errors';
import type { MethodContext } from './method';

/** Parses `value` found at `at` under params (params itself by default); issues name the full field path. */
export function parseParams<T extends z.ZodType>(schema: T, value: unknown, at: PropertyKey[] = []): z.infer<T> {
  const result = schema.safeParse(value ?? {});
  if (!result.success)
    throw invalidParams(result.error.issues.map((issue) => ({ path: [...at, ...issue.path], message: issue.message })));
  return result.data;
}

export const taskIdSchema = z.uuid('must be a task id (the handoff thread id, a UUID)');

/** The key in params (found `at`) wins; the Idempotency-Key header may repeat it but not contradict it. */
export function idempotencyKey(
  ctx: MethodContext,
  fromParams: string | undefined,
  at: PropertyKey[] = ['metadata', 'client_idempotency_key'],
): string | undefined {
  if (fromParams && ctx.idempotencyKey && fromParams !== ctx.idempotencyKey) {
    throw invalidParams([{ path: at, message: 'differs from the Idempotency-Key header' }]);
  }
  return fromParams ?? ctx.idempotencyKey;
}
