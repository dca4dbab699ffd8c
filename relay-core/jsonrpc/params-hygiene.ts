// Before any JSON-RPC method parses its params: text a store would refuse, and keys that name JavaScript's
// object machinery, are invalid_params naming where they are (zod would silently drop a `__proto__` key).
import { invalidParams } from '../domain/errors';
import { NUL_MESSAGE } from '../domain/schemas';

const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
/** Deeper than this the walk stops: every method's schema refuses JSON nested this deep anyway. */
const MAX_DEPTH = 64;

/** The first NUL (PostgreSQL cannot store U+0000, so no backend takes it) or reserved key, walked without recursion. */
export function paramsProblem(params: unknown): { path: PropertyKey[]; message: string } | undefined {
  const stack: Array<[unknown, PropertyKey[]]> = [[params, []]];
  while (stack.length) {
    const [value, path] = stack.pop()!;
    if (path.length > MAX_DEPTH) continue;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return { path, message: NUL_MESSAGE };
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i -= 1) stack.push([value[i], [...path, i]]);
    } else if (value && typeof value === 'object') {
      for (const [key, item] of Object.entries(value).reverse()) {
        if (RESERVED_KEYS.has(key)) return { path: [...path, key], message: `"${key}" is not allowed as a key` };
        if (key.includes('\u0000')) return { path: [...path, key], message: `keys ${NUL_MESSAGE}` };
        stack.push([item, [...path, key]]);
      }
    }
  }
  return undefined;
}

export function assertCleanParams(params: unknown): void {
  const problem = paramsProblem(params);
  if (problem) throw invalidParams([problem]);
}
