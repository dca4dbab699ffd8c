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
  artifactExtraKeys: 16,
  artifactExtrasBytes: 16_384,
  description: 4_000,
  rationale: 8_000,
  targetFiles: 100,
  metadataBytes: 16_384,
  reason: 4_000,
  skills: 100,
  skill: 100,
  bodyBytes: 1_048_576,
  /** tasks/list and check_inbox: the default page and the largest one a client may ask for. */
  pageDefault: 20,
  pageLimit: 200,
} as const;

export const handleSchema = z
  .string()
  .max(LIMITS.handle)
  .regex(HANDLE_PATTERN, 'must be a handle like name@team (letters, digits, ".", "_", "-")');

// ── recipients: a handle, or a target resolved against the agent cards (domain/recipient-target.ts) ──────────

export type TargetKind = 'role' | 'skill' | 'owner';
export type Recipient = { kind: 'handle'; handle: string } | { kind: TargetKind; value: string; label: string };
export type RecipientTarget = Extract<Recipient, { kind: TargetKind }>;

export const TARGET_FORMS =
  'a handle like name@team, or role:<role>, skill:<skill> or owner:<path> (e.g. role:frontend, skill:react, owner:apps/web/)';
const TARGET = /^(role|skill|owner):(.*)$/s;

/** An owned path as compared: no leading "./" or "/" (so "./apps/web/" and "apps/web/" are one owner). */
export function normalizePath(path: string): string {
  return path.replace(/^(\.\/|\/)+/, '');
}

/** The recipient a `to` / `recipient` string names, or why it names none. */
export function parseRecipient(raw: string): Recipient | { error: string } {
  if (raw.length <= LIMITS.handle && HANDLE_PATTERN.test(raw)) return { kind: 'handle', handle: raw };
  const match = TARGET.exec(raw);
  if (!match) return { error: `must be ${TARGET_FORMS}` };
  const kind = match[1] as TargetKind;
  const value = kind === 'owner' ? normalizePath(match[2]!.trim()) : match[2]!.trim();
  const max = { role: LIMITS.role, skill: LIMITS.skill, owner: LIMITS.path }[kind];
  if (value === '') return { error: `${kind}: needs a value after "${kind}:" (${TARGET_FORMS})` };
  if (value.length > max) return { error: `${kind}: must be at most ${max} characters after "${kind}:"` };
  if ([...value].some((ch) => ch.charCodeAt(0) < 0x20))
    return { error: `${kind}: must not contain control characters` };
  if (kind !== 'owner' && /\s/.test(value)) return { error: `${kind}: must be one word (got "${value.slice(0, 50)}")` };
  return { kind, value, label: `${kind}:${value}` };
}

/** `to` of a new handoff: a handle or a target, checked once at the edge and stored in one spelling. */
export const recipientSchema = z
  .string()
  .max(LIMITS.path + 10, `must be ${TARGET_FORMS}`)
  .transform((raw, ctx) => {
    const parsed = parseRecipient(raw);
    if ('error' in parsed) {
      ctx.addIssue({ code: 'custom', message: parsed.error });
      return z.NEVER;
    }
    return parsed.kind === 'handle' ? parsed.handle : parsed.label;
  });

export const intentSchema = z.enum(['inform', 'ask_question', 'propose_action']);
export type Intent = z.infer<typeof intentSchema>;

/** `unclaimed`: sent to a role, skill or owner with several candidates, until one of them claims it (then `pending`).
 * `awaiting_approval`: a create a policy holds until people approve it (then `pending`; or `rejected`, final).
 * `expired`: nobody acted in time (service/handoff-timers.ts), a final state. */
export const THREAD_STATUSES = [
  'pending',
  'accepted',
  'completed',
  'declined',
  'cancelled',
  'unclaimed',
  'awaiting_approval',
  'rejected',
  'expired',
] as const;
export const threadStatusSchema = z.enum(THREAD_STATUSES);
export type ThreadStatus = z.infer<typeof threadStatusSchema>;
export const TERMINAL_STATUSES: readonly ThreadStatus[] = ['completed', 'declined', 'cancelled', 'rejected', 'expired'];

export const surfaceSchema = z.enum(['mcp', 'a2a', 'slack', 'web', 'api']);
export type Surface = z.infer<typeof surfaceSchema>;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** PostgreSQL-backed stores (jsonb, text) cannot hold U+0000, so no backend takes it. */
const NUL = '\u0000';
export const NUL_MESSAGE = 'must not contain a NUL character (\\u0000)';

export function isWellFormedText(value: string): boolean {
  return !LONE_SURROGATE.test(value);
}

/** Text as stored and shown: bounded, well-formed Unicode (a lone surrogate would be silently altered), no NUL. */
export const text = (max: number) =>
  z
    .string()
    .max(max, `must be at most ${max} characters`)
    .refine((value) => !LONE_SURROGATE.test(value), 'must be well-formed Unicode (no lone surrogates)')
    .refine((value) => !value.includes(NUL), NUL_MESSAGE);
const url = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).max(LIMITS.url);

// ── free-form JSON (metadata, payload, artifact extras, inline contracts) ──────────────────────────────────

const MAX_JSON_DEPTH = 20;
/** Keys that name JavaScript's object machinery; refused so no reader can mistake data for a prototype. */
const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export interface JsonProblem {
  path: PropertyKey[];
  message: string;
}

function keyProblem(key: string): string | undefined {
  if (RESERVED_KEYS.has(key)) return `"${key}" is not allowed as a key`;
  if (key.startsWith('$') || key.includes('.'))
    return `keys must not start with "$" or contain "." (got "${key.slice(0, 50)}")`;
  if (key.includes(NUL)) return `keys ${NUL_MESSAGE}`;
  if (LONE_SURROGATE.test(key)) return 'keys must be well-formed Unicode (no lone surrogates)';
  return undefined;
}

/**
 * Walks a raw JSON value without recursion (zod silently drops a `__proto__` key, so this runs before it):
 * depth, keys MongoDB or JavaScript treat specially, strings a store would alter, then the size as JSON.
 * `bounds` checks only depth and size: for JSON the relay accepts and never stores (an envelope).
 */
export function jsonProblem(
  root: unknown,
  maxBytes: number,
  check: 'storable' | 'bounds' = 'storable',
): JsonProblem | undefined {
  const stack: Array<[unknown, PropertyKey[]]> = [[root, []]];
  while (stack.length) {
    const [value, path] = stack.pop()!;
    if (path.length > MAX_JSON_DEPTH) return { path: [], message: `must nest at most ${MAX_JSON_DEPTH} levels deep` };
    if (check === 'bounds') {
      if (value && typeof value === 'object')
        Object.entries(value).forEach(([key, item]) => stack.push([item, [...path, key]]));
    } else if (typeof value === 'string') {
      if (LONE_SURROGATE.test(value)) return { path, message: 'must be well-formed Unicode (no lone surrogates)' };
      if (value.includes(NUL)) return { path, message: NUL_MESSAGE };
    } else if (Array.isArray(value)) value.forEach((item, i) => stack.push([item, [...path, i]]));
    else if (value && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        const problem = keyProblem(key);
        if (problem) return { path: [...path, key], message: problem };
        stack.push([item, [...path, key]]);
      }
    }
  }
  const bytes = JSON.stringify(root)?.length ?? 0;
  return bytes > maxBytes ? { path: [], message: `must be at most ${maxBytes} bytes as JSON` } : undefined;
}

/** Runs jsonProblem on the raw input of `schema`, reporting the problem at the path it names. */
function checkedJson<T extends z.ZodType>(schema: T, maxBytes: number) {
  return z.preprocess((value, ctx) => {
    const problem = jsonProblem(value, maxBytes);
    if (problem)
      ctx.addIssue({
        code: 'custom',
        message: problem.message,
        path: problem.path.map((p) => (typeof p === 'symbol' ? String(p) : p)),
      });
    return value;
  }, schema);
}

/** Free-form JSON a client attaches (metadata, payload): bounded in size and depth, storable on any backend. */
export const metadataSchema = checkedJson(
  z.record(z.string().max(100, 'keys must be at most 100 characters'), z.unknown()),
  LIMITS.metadataBytes,
);

// ── artifacts ────────────────────────────────────────────────────────────────────────────────────────────

/** A line range as a client sends it: "10-20" or "10", [10, 20] or [10]. */
export type LineRange = string | number[];

/** The first and last line of a range (a single line is both). */
export function lineRangeBounds(lines: LineRange): [number, number] {
  const [start, end = start] = typeof lines === 'string' ? lines.split('-').map(Number) : lines;
  return [start!, end!];
}

/** The one form of a range ("10-20", or "10" for one line) a request is hashed with, as earlier relays stored it. */
export function canonicalLines(lines: LineRange): string {
  const [start, end] = lineRangeBounds(lines);
  return start === end ? String(start) : `${start}-${end}`;
}

/**
 * `value` (a request body, or part of one) with every file_ref's line range in its one form: a request hashes the
 * same however it writes its ranges, as it did when ranges were stored in that form (idempotency keys, handoff tokens).
 */
export function withCanonicalLines(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withCanonicalLines);
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  const entries = Object.entries(value).map(([key, inner]) => [key, withCanonicalLines(inner)]);
  const object = Object.fromEntries(entries) as Record<string, unknown>;
  if (object.type === 'file_ref' && (typeof object.lines === 'string' || Array.isArray(object.lines)))
    object.lines = canonicalLines(object.lines as LineRange);
  return object;
}

const LINES_FORMS = 'must look like "10", "10-20", [10] or [10, 20]';

/**
 * A line range as "10-20", "10", [10, 20] or [10], kept in the form it came in (a client reads back what it
 * sent); lines count from 1 and a range may not run backwards. Readers show it through lineRangeText.
 */
export const lineRangeSchema = z
  .union(
    [z.string().regex(/^\d{1,9}(-\d{1,9})?$/, LINES_FORMS), z.array(z.number().int().max(999_999_999)).min(1).max(2)],
    { error: LINES_FORMS },
  )
  .superRefine((value, ctx) => {
    const [start, end] = lineRangeBounds(value);
    if (start < 1 || end < start)
      ctx.addIssue({ code: 'custom', message: 'must be a range of lines from 1, with the start not after the end' });
  });

const HEX_SHA = /^[0-9a-f]{4,64}$/i;

/** True for a (possibly abbreviated) commit sha; anything else `file_ref.git_sha` holds is a ref name. */
export function isCommitSha(value: string): boolean {
  return HEX_SHA.test(value);
}

/**
 * A ref name as `git check-ref-format` allows it (no space, control character, ~ ^ : ? * [ \, "..", "@{", "//",
 * component starting with "." or ending with ".lock", nor a trailing "/" or "."), and not starting with "-" or
 * "/", so a name copied into a git command can never read as an option.
 */
const REF_NAME = /^(?!-|\/|\.|@$)(?!.*(?:\.\.|@\{|\/\/|\/\.|\.lock(?:\/|$)|[/.]$))[^\s\p{Cc}~^:?*[\\]{1,255}$/u;

/** `file_ref.git_sha`: a commit sha, or a ref name (main, v1.2.0, origin/feature-x) kept as given. */
export const gitRevisionSchema = text(255).refine(
  (value) => isCommitSha(value) || REF_NAME.test(value),
  'must be a git sha or a ref name (like main, v1.2.0 or origin/feature-x)',
);

/** Fields the relay does not know, kept as data beside the known ones: bounded in number and size. */
function extrasProblem(artifact: Record<string, unknown>, known: readonly string[]): JsonProblem | undefined {
  const extras = Object.keys(artifact).filter((key) => !known.includes(key));
  if (extras.length > LIMITS.artifactExtraKeys) {
    return {
      path: [],
      message: `at most ${LIMITS.artifactExtraKeys} fields besides the known ones (got ${extras.length})`,
    };
  }
  for (const key of extras) {
    if (key.length > 100) return { path: [key], message: 'keys must be at most 100 characters' };
    if (key.startsWith('_'))
      return { path: [key], message: 'keys starting with "_" are the relay\'s (for example _provenance)' };
  }
  const problem = jsonProblem(
    Object.fromEntries(extras.map((key) => [key, artifact[key]])),
    LIMITS.artifactExtrasBytes,
  );
  return (
    problem && {
      ...problem,
      message: problem.path.length ? problem.message : `the fields besides the known ones ${problem.message}`,
    }
  );
}

function artifactType<T extends z.ZodRawShape>(shape: T) {
  const known = Object.keys(shape);
  return z
    .object(shape)
    .catchall(z.unknown())
    .superRefine((artifact, ctx) => {
      const problem = extrasProblem(artifact, known);
      if (problem) ctx.addIssue({ code: 'custom', message: problem.message, path: problem.path.map(String) });
    });
}

/** An API contract given inline: text, or any JSON value (an OpenAPI fragment) stored as given, within the same limit. */
const inlineContract = z.unknown().superRefine((value, ctx) => {
  if (value === undefined) return;
  const asText = typeof value === 'string' ? text(LIMITS.inlineContract).safeParse(value) : undefined;
  if (asText && !asText.success) return ctx.addIssue({ code: 'custom', message: asText.error.issues[0]!.message });
  const problem = typeof value === 'string' ? undefined : jsonProblem(value, LIMITS.inlineContract);
  if (problem) ctx.addIssue({ code: 'custom', message: problem.message, path: problem.path.map(String) });
});

export const KNOWN_ARTIFACT_TYPES = ['file_diff', 'file_ref', 'test_command', 'api_contract', 'link'] as const;

const knownArtifactSchema = z.discriminatedUnion(
  'type',
  [
    artifactType({ type: z.literal('file_diff'), path: text(LIMITS.path).min(1), diff: text(LIMITS.diff).min(1) }),
    artifactType({
      type: z.literal('file_ref'),
      path: text(LIMITS.path).min(1),
      git_sha: gitRevisionSchema.optional(),
      lines: lineRangeSchema.optional(),
    }),
    artifactType({
      type: z.literal('test_command'),
      command: text(LIMITS.command).min(1),
      cwd: text(LIMITS.path).optional(),
    }),
    artifactType({
      type: z.literal('api_contract'),
      schema_url: url.optional(),
      inline: inlineContract.optional(),
    }).refine(
      (a) => a.schema_url !== undefined || (a.inline !== undefined && a.inline !== null),
      'needs schema_url or inline',
    ),
    artifactType({ type: z.literal('link'), url, title: text(LIMITS.title).optional() }),
  ],
  { error: `must be one of ${KNOWN_ARTIFACT_TYPES.join(', ')}, or a lower-case type name of another kind of artifact` },
);
export type KnownArtifact = z.infer<typeof knownArtifactSchema>;

/** An artifact of a type this relay does not know: kept as data, shown as a generic artifact. */
const otherArtifactSchema = artifactType({
  type: z
    .string()
    .regex(
      /^[a-z][a-z0-9_]{0,63}$/,
      `must be one of ${KNOWN_ARTIFACT_TYPES.join(', ')}, or a lower-case type name of another kind of artifact`,
    ),
});
export type OtherArtifact = z.infer<typeof otherArtifactSchema>;
export type Artifact = KnownArtifact | OtherArtifact;

export function isKnownArtifact(artifact: Artifact): artifact is KnownArtifact {
  return (KNOWN_ARTIFACT_TYPES as readonly string[]).includes(artifact.type);
}

/** An artifact's fields beyond the ones its type defines (all of them but `type` for an unknown type). */
export function artifactExtras(artifact: Artifact): Record<string, unknown> {
  const known = isKnownArtifact(artifact)
    ? Object.keys(knownArtifactSchema.options.find((o) => o.shape.type.value === artifact.type)!.shape)
    : ['type'];
  return Object.fromEntries(Object.entries(artifact).filter(([key]) => !known.includes(key)));
}

const isKnownType = (value: unknown): boolean =>
  !!value &&
  typeof value === 'object' &&
  (KNOWN_ARTIFACT_TYPES as readonly unknown[]).includes((value as { type?: unknown }).type);

/**
 * One artifact: a known type is held to its own shape (plus bounded extra fields kept as data), any other
 * lower-case type is kept as data. Dispatched on `type` by hand so an error names the field of the type
 * that was meant; the JSON Schema (MCP tool listings) still shows every shape.
 */
export const artifactSchema = z
  .unknown()
  .transform((value, ctx): Artifact => {
    const problem =
      value && typeof value === 'object' && !Array.isArray(value)
        ? keysProblem(value as Record<string, unknown>)
        : undefined;
    if (problem) {
      ctx.addIssue({ code: 'custom', message: problem.message, path: problem.path.map(String) });
      return z.NEVER;
    }
    const parsed = (
      isKnownType(value) || !value || typeof value !== 'object' || !('type' in value)
        ? knownArtifactSchema
        : otherArtifactSchema
    ).safeParse(value);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues)
      ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path.map(String) });
    return z.NEVER;
  })
  .meta({
    anyOf: [knownArtifactSchema, otherArtifactSchema].map((s) => withoutDialect(z.toJSONSchema(s, { io: 'input' }))),
  });

/** The artifact's own keys, read before zod drops a `__proto__` (nested values reach extrasProblem raw). */
function keysProblem(artifact: Record<string, unknown>): JsonProblem | undefined {
  for (const key of Object.keys(artifact)) {
    const problem = keyProblem(key);
    if (problem) return { path: [key], message: problem };
  }
  return undefined;
}

function withoutDialect(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}

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

/** A new handoff as the service takes it, whatever surface it came from. */
export const newHandoffSchema = z.object({
  to: recipientSchema,
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
    /** The teammate's lead (a registered teammate's handle): who `recipient_lead` / `sender_lead` approvers resolve to. */
    lead: handleSchema.optional(),
  })
  .strict();
export type AgentCardInput = z.infer<typeof agentCardInputSchema>;

/**
 * POST /admin/agents: the card, where `display_name` may stand for `name` (the spelling of other relays'
 * onboarding commands) and an `email` is accepted as theirs send one (checked, not stored).
 */
export const agentRegistrationSchema = agentCardInputSchema
  .extend({
    name: text(LIMITS.name).min(1).optional(),
    display_name: text(LIMITS.name).min(1).optional(),
    email: z.email({ error: 'must be an email address' }).max(254).optional(),
  })
  .strict()
  .superRefine((body, ctx) => {
    if (body.name === undefined && body.display_name === undefined)
      ctx.addIssue({ code: 'custom', path: ['name'], message: 'required (or display_name)' });
    if (body.name !== undefined && body.display_name !== undefined && body.name !== body.display_name) {
      ctx.addIssue({ code: 'custom', path: ['display_name'], message: 'differs from name; send one of them' });
    }
  })
  .transform(({ display_name, email: _email, ...card }): AgentCardInput => ({
    ...card,
    name: (card.name ?? display_name)!,
  }));

export type TransitionName = 'accept' | 'complete' | 'decline' | 'cancel';

export const EVENT_TYPES = [
  'thread.created',
  'thread.message',
  'thread.accepted',
  'thread.declined',
  'thread.completed',
  'thread.cancelled',
  'thread.claimed',
  // Timers (service/handoff-timers.ts): a reminder or nudge went out, the handoff was escalated, reassigned, or expired.
  'thread.reminded',
  'thread.escalated',
  'thread.reassigned',
  'thread.expired',
  /** The recipient snoozed the reminders (web inbox or Slack's Snooze): open pages show until when. */
  'thread.snoozed',
  /** A create a policy holds for approval: the sender hears of it; the recipient hears nothing until it is approved. */
  'thread.awaiting_approval',
  /** An approver rejected the create: the sender hears why. */
  'thread.rejected',
  /** An approval was asked for: its approvers (with an endpoint) hear of it. */
  'approval.requested',
  /** One approver's vote counted toward a quorum that is not reached yet: every approver's DM shows it. */
  'approval.voted',
  /** An approval of a non-create action was decided (approved and applied, approved and not applicable, rejected, timed out). */
  'approval.decided',
  // Runs by the recipient's agent (service/handoff-runs.ts): asked for, taken by a runner, asked to stop, ended.
  'run.queued',
  'run.started',
  'run.stopping',
  'run.finished',
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
    /** A registered teammate's handle, or null to remove the lead. */
    lead: handleSchema.nullable().optional(),
  })
  .strict();
export type CardUpdate = z.infer<typeof cardUpdateSchema>;
