// JSON-RPC params are parsed once, here: a zod failure is invalid_params naming the field under `params`.
import { z } from 'zod';
import { invalidParams } from '../domain/errors';
import type { MethodContext } from './method';

/**
 * Parses `value` found at `at` under params (params itself by default); issues name the full field path. A key the
 * method does not take where it was sent, but takes elsewhere (`limit` beside `page: { limit }`), says where.
 */
export function parseParams<T extends z.ZodType>(schema: T, value: unknown, at: PropertyKey[] = []): z.infer<T> {
  const result = schema.safeParse(value ?? {});
  if (!result.success)
    throw invalidParams(
      result.error.issues.map((issue) => ({
        path: [...at, ...issue.path],
        message:
          issue.message +
          (issue.code === 'unrecognized_keys' && issue.path.length === 0 ? elsewhere(schema, issue.keys, at) : ''),
      })),
    );
  return result.data;
}

/** " (the method takes it as params.page.limit)" for the keys the schema takes one level down, else nothing. */
function elsewhere(schema: z.ZodType, keys: readonly string[], at: PropertyKey[]): string {
  const nested = new Map<string, string>();
  for (const [name, field] of Object.entries(objectShape(schema) ?? {}))
    for (const key of Object.keys(objectShape(field) ?? {})) nested.set(key, [...at, name, key].join('.'));
  const hints = keys.filter((key) => nested.has(key)).map((key) => `params.${nested.get(key)!}`);
  if (hints.length === 0) return '';
  return ` (the method takes ${hints.length === 1 ? 'it' : 'them'} as ${hints.join(', ')})`;
}

/**
 * The fields of an object schema, through defaults, optionals, nullables, pipes (what comes out) and intersections
 * (both sides' fields: a new thread's `metadata`); undefined for anything else.
 */
function objectShape(schema: z.ZodType): Record<string, z.ZodType> | undefined {
  if (schema instanceof z.ZodObject) return schema.shape as Record<string, z.ZodType>;
  if (schema instanceof z.ZodDefault || schema instanceof z.ZodOptional || schema instanceof z.ZodNullable)
    return objectShape(schema.def.innerType as z.ZodType);
  if (schema instanceof z.ZodPipe) return objectShape(schema.def.out as z.ZodType);
  if (schema instanceof z.ZodIntersection) {
    const [left, right] = [objectShape(schema.def.left as z.ZodType), objectShape(schema.def.right as z.ZodType)];
    return left || right ? { ...left, ...right } : undefined;
  }
  return undefined;
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
