// What a client attaches to any JSON-RPC call beside the method's own params (docs/jsonrpc.md, "Envelope and content"):
// every method takes it, checks only that it is bounded, and never reads it.
import { z } from 'zod';
import { LIMITS, jsonProblem, text } from '../domain/schemas';

/**
 * `params.metadata` as the envelope: any JSON object within 16 KiB and 20 levels, whatever its keys (it is not
 * stored, so the storage key rules of a stored metadata do not apply; params-hygiene.ts still refuses NUL and
 * `__proto__` / `constructor` / `prototype` anywhere in params).
 */
export const envelopeMetadataSchema = z.preprocess(
  (value, ctx) => {
    const problem =
      value && typeof value === 'object' && !Array.isArray(value)
        ? jsonProblem(value, LIMITS.metadataBytes, 'bounds')
        : undefined;
    if (problem) ctx.addIssue({ code: 'custom', message: problem.message, path: problem.path.map(String) });
    return value;
  },
  z.record(z.string(), z.unknown()),
);

/** The envelope keys, spread into every method's strict params: `{ task_id, ...ENVELOPE }`. */
export const ENVELOPE = { metadata: envelopeMetadataSchema.optional() };

/**
 * The envelope of a call that may be retried under a key: the same object, where `client_idempotency_key`
 * is content (the method uses it) and so is held to its shape.
 */
export const keyedEnvelopeSchema = envelopeMetadataSchema.pipe(
  z.object({ client_idempotency_key: text(200).min(1).optional() }).passthrough(),
);
