// Domain schemas: the single source of the relay's types (zod first, types inferred).
import { z } from 'zod';

export const HANDLE_PATTERN = /^[A-Za-z0-9._-]+@[A-Za-z0-9._-]+$/;

/** Documented size limits; past them a request is invalid_params naming the field. */
export const LIMITS = {
  handle: 128,
  name: 200,
  role: 64,
  summary: 8_000,
  question: 4_000,
  artifacts: 50,
  path: 1_024,
  diff: 100_000,
  command: 4_000,
  url: 2_048,
  title: 500,
  inlineContract: 50_000,
  description: 4_000,
  rationale: 8_000,
  targetFiles: 100,
  metadataBytes: 16_384,
  reason: 4_000,
  skills: 100,
  skill: 100,
  bodyBytes: 1_048_576,
} as const;

export const handleSchema = z
  .string()
  .max(LIMITS.handle)
  .regex(HANDLE_PATTERN, 'must be a handle like name@team (letters, digits, ".", "_", "-")');

export const intentSchema = z.enum(['inform', 'ask_question', 'propose_action']);
export type Intent = z.infer<typeof intentSchema>;

export const THREAD_STATUSES = ['pending', 'accepted', 'completed', 'declined', 'cancelled'] as const;
export const threadStatusSchema = z.enum(THREAD_STATUSES);
export type ThreadStatus = z.infer<typeof threadStatusSchema>;
export const TERMINAL_STATUSES: readonly ThreadStatus[] = ['completed', 'declined', 'cancelled'];

export const surfaceSchema = z.enum(['mcp', 'a2a', 'slack', 'web', 'api']);
export type Surface = z.infer<typeof surfaceSchema>;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function isWellFormedText(value: string): boolean {
  return !LONE_SURROGATE.test(value);
}

/** Text as stored and shown: bounded, and well-formed Unicode (a lone surrogate would be silently altered). */
const text = (max: number) =>
  z
    .string()
    .max(max, `must be at most ${max} characters`)
    .refine((value) => !LONE_SURROGATE.test(value), 'must be well-formed Unicode (no lone surrogates)');
const url = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).max(LIMITS.url);

export const artifactSchema = z.discriminatedUnion(
  'type',
  [
    z.object({ type: z.literal('file_diff'), path: text(LIMITS.path).min(1), diff: text(LIMITS.diff).min(1) }).strict(),
    z
      .object({
        type: z.literal('file_ref'),
        path: text(LIMITS.path).min(1),
        git_sha: z.string().regex(/^[0-9a-f]{4,64}$/i, 'must be a hex git sha').optional(),
        lines: z
          .string()
          .regex(/^\d+(-\d+)?$/, 'must look like "10" or "10-20"')
          .optional(),
      })
      .strict(),
    z.object({ type: z.literal('test_command'), command: text(LIMITS.command).min(1), cwd: text(LIMITS.path).optional() }).strict(),
    z
      .object({
        type: z.literal('api_contract'),
        schema_url: url.optional(),
        inline: text(LIMITS.inlineContract).optional(),
      })
      .strict()
      .refine((a) => a.schema_url !== undefined || a.inline !== undefined, 'needs schema_url or inline'),
    z.object({ type: z.literal('link'), url, title: text(LIMITS.title).optional() }).strict(),
  ],
  { error: 'must be one of file_diff, file_ref, test_command, api_contract, link' },
);
export type Artifact = z.infer<typeof artifactSchema>;

export const artifactsSchema = z.array(artifactSchema).max(LIMITS.artifacts, `at most ${LIMITS.artifacts} artifacts`);

export const proposedActionSchema = z
  .object({
    description: text(LIMITS.description).min(1),
    target_files: z.array(text(LIMITS.path).min(1)).max(LIMITS.targetFiles),
    rationale: text(LIMITS.rationale).min(1),
    suggested_diff: text(LIMITS.diff).optional(),
  })
  .strict();
export type ProposedAction = z.infer<typeof proposedActionSchema>;

/** Free-form JSON a client attaches (metadata, payload): bounded in size and depth, storable on any MongoDB. */
export const metadataSchema = z.record(z.string().max(100, 'keys must be at most 100 characters'), z.unknown()).superRefine((value, ctx) => {
  const problem = jsonProblem(value);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

const MAX_JSON_DEPTH = 20;

/** Walks a JSON value without recursion: depth, key spelling MongoDB refuses, strings, then total size. */
function jsonProblem(root: unknown): string | undefined {
  const stack: Array<[unknown, number]> = [[root, 0]];
  while (stack.length) {
    const [value, depth] = stack.pop()!;
    if (depth > MAX_JSON_DEPTH) return `must nest at most ${MAX_JSON_DEPTH} levels deep`;
    if (typeof value === 'string' && LONE_SURROGATE.test(value)) return 'must be well-formed Unicode (no lone surrogates)';
    if (Array.isArray(value)) for (const item of value) stack.push([item, depth + 1]);
    else if (value && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        if (key.startsWith('$') || key.includes('.')) return `keys must not start with "$" or contain "." (got "${key.slice(0, 50)}")`;
        stack.push([item, depth + 1]);
      }
    }
  }
  return JSON.stringify(root).length > LIMITS.metadataBytes ? `must be at most ${LIMITS.metadataBytes} bytes as JSON` : undefined;
}

/** A new handoff as the service takes it, whatever surface it came from. */
export const newHandoffSchema = z.object({
  to: handleSchema,
  intent: intentSchema,
  summary: text(LIMITS.summary).min(1, 'must not be empty'),
  question: text(LIMITS.question).min(1).optional(),
  artifacts: artifactsSchema.default([]),
  proposed_action: proposedActionSchema.nullish(),
  metadata: metadataSchema.default({}),
  idempotency_key: z.string().min(1).max(200).optional(),
});
export type NewHandoff = z.infer<typeof newHandoffSchema>;

export const agentCardInputSchema = z
  .object({
    handle: handleSchema,
    name: text(LIMITS.name).min(1),
    role: text(LIMITS.role).min(1),
    skills: z.array(text(LIMITS.skill).min(1)).max(LIMITS.skills).default([]),
    repos_owned: z.array(text(LIMITS.path).min(1)).max(LIMITS.skills).default([]),
    tools: z.array(text(LIMITS.skill).min(1)).max(LIMITS.skills).default([]),
    slack_user_id: z
      .string()
      .regex(/^[UW][A-Z0-9]{2,20}$/, 'must be a Slack user id like U0123456')
      .optional(),
  })
  .strict();
export type AgentCardInput = z.infer<typeof agentCardInputSchema>;

export type TransitionName = 'accept' | 'complete' | 'decline' | 'cancel';

export const EVENT_TYPES = [
  'thread.created',
  'thread.message',
  'thread.accepted',
  'thread.declined',
  'thread.completed',
  'thread.cancelled',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** PUT /agents/me/card: every field optional; notification_url null removes the webhook. */
export const cardUpdateSchema = z
  .object({
    name: text(LIMITS.name).min(1).optional(),
    role: text(LIMITS.role).min(1).optional(),
    skills: z.array(text(LIMITS.skill).min(1)).max(LIMITS.skills).optional(),
    repos_owned: z.array(text(LIMITS.path).min(1)).max(LIMITS.skills).optional(),
    tools: z.array(text(LIMITS.skill).min(1)).max(LIMITS.skills).optional(),
    notification_url: url.nullable().optional(),
  })
  .strict();
export type CardUpdate = z.infer<typeof cardUpdateSchema>;
