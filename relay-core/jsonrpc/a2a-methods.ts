// Standard A2A on the same POST /a2a: v1.0 SendMessage / GetTask / CancelTask, their v0.3 twins
// (message/send, tasks/get, tasks/cancel in the A2A shape), and the agent card, all mapped onto handoffs.
//
// ── How an A2A message becomes a handoff ──────────────────────────────────────────────────────────
// A handoff needs a recipient, an intent and a summary. A standard A2A client carries them as:
//   • message.metadata: { recipient, intent, question?, proposed_action?, artifacts?,
//     client_idempotency_key? }, and/or
//   • one or more data parts whose data is { recipient?, intent?, question?, proposed_action?,
//     artifacts? } (v1.0 `{ data, mediaType }`, v0.3 `{ kind: "data", data }`); other keys are refused,
//   • (also read, lowest precedence: the request-level params.metadata, same keys).
//   A field given in several places must have the same value everywhere (else invalid_params).
//   • text parts (v1.0 `{ text }`, v0.3 `{ kind: "text", text }`), joined by a blank line: the summary.
//   • file parts by URL (v1.0 `{ url, filename? }`, v0.3 `{ kind: "file", file: { uri, name? } }`):
//     `link` artifacts after the others. File bytes are refused (link to the file instead).
//   • Any other message.metadata / params.metadata keys: the thread's free-form metadata.
//   • Idempotency: metadata.client_idempotency_key, else the Idempotency-Key header, else
//     message.messageId (same namespace as the wire's client_idempotency_key), so an SDK retry with the
//     same messageId answers the same task and never creates a second thread.
//   • message.taskId / message.contextId (continuing a task) are refused: a handoff is a new task.
// ── How a handoff reads back as an A2A Task ───────────────────────────────────────────────────────
//   id = contextId = thread id. status.state: pending → submitted, accepted → working,
//   completed → completed, declined → rejected, cancelled → canceled (v1.0 spells them
//   TASK_STATE_SUBMITTED …, v0.3 `submitted` …); status.timestamp = the last status change;
//   status.message = the completion summary or decline reason (role agent) when there is one.
//   history[0] = the handoff as the sender's message (text summary + a data part with recipient,
//   intent, question, proposed_action, artifacts); later thread messages follow (sender → user,
//   recipient → agent). artifacts = one "handoff-result" artifact once completed (summary text +
//   { artifacts: completion_artifacts }). metadata.handoff = { thread_id, status, intent, sender,
//   recipient, inbox_url, created_at, updated_at }. The relay answers SendMessage at once (state
//   submitted) whatever `returnImmediately` / `blocking` asks: a person acts on a handoff, so poll GetTask.
// ── Dispatch ───────────────────────────────────────────────────────────────────────────────────────
//   message/send, tasks/get and tasks/cancel are also handoff-relay wire methods (WIRE.md); legacyA2A
//   tells the A2A v0.3 shape apart (message.kind "message" without the wire's top-level fields; `id`
//   without `task_id`), and resolveMethod picks the handler for any method name.
import { z } from 'zod';
import { A2A_METHODS, type MethodContext } from './wire-methods';
import { assertCleanParams } from './params-hygiene';
import { canonicalJson } from '../domain/canonical-json';
import { RelayError, invalidParams } from '../domain/errors';
import {
  LIMITS,
  artifactSchema,
  artifactsSchema,
  handleSchema,
  intentSchema,
  metadataSchema,
  proposedActionSchema,
  text,
  type Artifact,
  type ThreadStatus,
} from '../domain/schemas';
import type { ThreadView } from '../service/wire-views';

type Method = (ctx: MethodContext, params: unknown) => Promise<unknown>;

// ── parsing ─────────────────────────────────────────────────────────────────────────────────────

/** Parses `value` found at `path` under params; issues name the full field path. */
function parseAt<T extends z.ZodType>(schema: T, value: unknown, path: PropertyKey[]): z.infer<T> {
  const result = schema.safeParse(value);
  if (!result.success) throw invalidParams(result.error.issues.map((issue) => ({ path: [...path, ...issue.path], message: issue.message })));
  return result.data;
}

function fieldError(path: PropertyKey[], message: string): RelayError {
  return invalidParams([{ path, message }]);
}

const record = z.record(z.string(), z.unknown());
const taskIdSchema = z.uuid('must be a task id (the handoff thread id, a UUID)');
const historyLengthSchema = z.number().int().min(0).optional();
const optionalId = z
  .string()
  .optional()
  .transform((v) => (v === '' ? undefined : v));
const messageIdSchema = z.string().min(1, 'required: a unique id for this message (it is the idempotency key)').max(200);

const HANDOFF_KEYS = ['recipient', 'intent', 'question', 'proposed_action', 'artifacts'] as const;
const METADATA_KEYS = [...HANDOFF_KEYS, 'client_idempotency_key'] as const;

const handoffFields = z.object({
  recipient: handleSchema.optional(),
  intent: intentSchema.optional(),
  question: text(LIMITS.question).min(1).optional(),
  proposed_action: proposedActionSchema.optional(),
  artifacts: artifactsSchema.optional(),
});
type HandoffFields = z.infer<typeof handoffFields>;

const metadataFields = handoffFields.extend({ client_idempotency_key: z.string().min(1).max(200).optional() });
const dataPartFields = handoffFields.strict();

/** One message part, whatever version it came in, with where it sits for error messages. */
type InPart =
  | { kind: 'text'; text: string }
  | { kind: 'data'; data: unknown; path: PropertyKey[] }
  | { kind: 'url'; url: string; name?: string; path: PropertyKey[] }
  | { kind: 'bytes'; path: PropertyKey[] };

interface InMessage {
  messageId: string;
  role?: string;
  contextId?: string;
  taskId?: string;
  parts: InPart[];
  metadata?: Record<string, unknown>;
}

interface SendInput {
  message: InMessage;
  metadata?: Record<string, unknown>;
  historyLength?: number;
}

// v1.0 (ClientFactory from @a2a-js/sdk/client): proto JSON, parts `{ text } | { data } | { url } | { raw }`.
const v1Part = z
  .object({
    text: z.string().optional(),
    data: z.unknown().optional(),
    url: z.string().optional(),
    raw: z.string().optional(),
    filename: z.string().optional(),
    mediaType: z.string().optional(),
    metadata: record.optional(),
  })
  .passthrough();

const v1Send = z
  .object({
    message: z
      .object({
        messageId: messageIdSchema,
        role: z.string().optional(),
        contextId: optionalId,
        taskId: optionalId,
        parts: z.array(v1Part).min(1, 'must hold at least one text part (the summary)'),
        metadata: record.optional(),
      })
      .passthrough(),
    configuration: z.object({ historyLength: historyLengthSchema }).passthrough().optional(),
    metadata: record.optional(),
    tenant: z.string().optional(),
  })
  .strict();

function v1SendInput(params: unknown): SendInput {
  const p = parseAt(v1Send, params ?? {}, []);
  const parts = p.message.parts.map((part, i): InPart => {
    const path = ['message', 'parts', i];
    if (part.text !== undefined) return { kind: 'text', text: part.text };
    if (part.data !== undefined && part.data !== null) return { kind: 'data', data: part.data, path: [...path, 'data'] };
    if (part.url !== undefined) return { kind: 'url', url: part.url, name: part.filename, path: [...path, 'url'] };
    if (part.raw !== undefined) return { kind: 'bytes', path: [...path, 'raw'] };
    throw fieldError(path, 'must hold one of text, data, url or raw');
  });
  if (p.message.role !== undefined && p.message.role !== 'ROLE_USER') {
    throw fieldError(['message', 'role'], 'must be ROLE_USER: a handoff is sent from the user side');
  }
  return {
    message: { ...p.message, parts },
    metadata: p.metadata,
    historyLength: p.configuration?.historyLength,
  };
}

// v0.3 (LegacyJsonRpcTransport from @a2a-js/sdk/compat/v0_3/client): `kind`-tagged message and parts.
const v03Part = z.discriminatedUnion(
  'kind',
  [
    z.object({ kind: z.literal('text'), text: z.string() }).passthrough(),
    z.object({ kind: z.literal('data'), data: z.unknown() }).passthrough(),
    z
      .object({
        kind: z.literal('file'),
        file: z.object({ uri: z.string().optional(), bytes: z.string().optional(), name: z.string().optional() }).passthrough(),
      })
      .passthrough(),
  ],
  { error: 'must be a text, data or file part ("kind")' },
);

const v03Send = z
  .object({
    message: z
      .object({
        kind: z.literal('message'),
        messageId: messageIdSchema,
        role: z.string().optional(),
        contextId: optionalId,
        taskId: optionalId,
        parts: z.array(v03Part).min(1, 'must hold at least one text part (the summary)'),
        metadata: record.optional(),
      })
      .passthrough(),
    configuration: z.object({ historyLength: historyLengthSchema }).passthrough().optional(),
    metadata: record.optional(),
  })
  .strict();

function v03SendInput(params: unknown): SendInput {
  const p = parseAt(v03Send, params ?? {}, []);
  const parts = p.message.parts.map((part, i): InPart => {
    const path = ['message', 'parts', i];
    if (part.kind === 'text') return { kind: 'text', text: part.text };
    if (part.kind === 'data') return { kind: 'data', data: part.data, path: [...path, 'data'] };
    if (part.file.uri !== undefined) return { kind: 'url', url: part.file.uri, name: part.file.name, path: [...path, 'file', 'uri'] };
    if (part.file.bytes !== undefined) return { kind: 'bytes', path: [...path, 'file', 'bytes'] };
    throw fieldError([...path, 'file'], 'needs uri or bytes');
  });
  if (p.message.role !== undefined && p.message.role !== 'user') {
    throw fieldError(['message', 'role'], 'must be "user": a handoff is sent from the user side');
  }
  return {
    message: { ...p.message, parts },
    metadata: p.metadata,
    historyLength: p.configuration?.historyLength,
  };
}

// ── message → handoff ───────────────────────────────────────────────────────────────────────────

interface Source {
  path: PropertyKey[];
  fields: HandoffFields;
}

/** `params.message.parts[1].data`, as invalidParams spells a path. */
function pathText(path: PropertyKey[]): string {
  return ['params', ...path].map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('').slice(1);
}

/** The one value of a handoff field across every place it may be given; two different values are an error. */
function pick<K extends keyof HandoffFields>(sources: Source[], key: K): HandoffFields[K] | undefined {
  let found: { path: PropertyKey[]; value: HandoffFields[K] } | undefined;
  for (const source of sources) {
    const value = source.fields[key];
    if (value === undefined) continue;
    if (!found) found = { path: source.path, value };
    else if (canonicalJson(found.value) !== canonicalJson(value)) {
      throw fieldError([...source.path, key], `conflicts with ${pathText([...found.path, key])}`);
    }
  }
  return found?.value;
}

function splitMetadata(metadata: Record<string, unknown> | undefined): { known: Record<string, unknown>; rest: Record<string, unknown> } {
  const known: Record<string, unknown> = {};
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(metadata ?? {})) {
    if ((METADATA_KEYS as readonly string[]).includes(key)) known[key] = value;
    else rest[key] = value;
  }
  return { known, rest };
}

async function sendHandoff(ctx: MethodContext, input: SendInput): Promise<ThreadView> {
  const { message } = input;
  if (message.taskId !== undefined) {
    throw fieldError(['message', 'taskId'], 'continuing an existing task is not supported by this relay yet; omit it to start a new handoff');
  }
  if (message.contextId !== undefined) {
    throw fieldError(['message', 'contextId'], 'a handoff starts its own context (contextId = thread id); continuing one is not supported yet');
  }

  const messageMeta = splitMetadata(message.metadata);
  const requestMeta = splitMetadata(input.metadata);
  const fromMessage = parseAt(metadataFields, messageMeta.known, ['message', 'metadata']);
  const fromRequest = parseAt(metadataFields, requestMeta.known, ['metadata']);
  const sources: Source[] = [];
  const linkArtifacts: Artifact[] = [];
  const text: string[] = [];
  for (const part of message.parts) {
    if (part.kind === 'text') text.push(part.text);
    else if (part.kind === 'data') {
      if (!part.data || typeof part.data !== 'object' || Array.isArray(part.data)) {
        throw fieldError(part.path, `must be an object with handoff fields (${HANDOFF_KEYS.join(', ')})`);
      }
      sources.push({ path: part.path, fields: parseAt(dataPartFields, part.data, part.path) });
    } else if (part.kind === 'url') {
      const link = { type: 'link' as const, url: part.url, ...(part.name ? { title: part.name.slice(0, LIMITS.title) } : {}) };
      const parsed = artifactSchema.safeParse(link);
      if (!parsed.success) throw fieldError(part.path, parsed.error.issues[0]?.message ?? 'must be an http(s) URL');
      linkArtifacts.push(parsed.data);
    } else {
      throw fieldError(part.path, 'file bytes are not supported; send a URL (a link artifact) or the content as an artifact in a data part');
    }
  }
  sources.push({ path: ['message', 'metadata'], fields: fromMessage }, { path: ['metadata'], fields: fromRequest });

  const recipient = pick(sources, 'recipient');
  if (recipient === undefined) {
    throw fieldError(['message', 'metadata', 'recipient'], 'required: the handle of the teammate to hand off to (in message metadata or a data part)');
  }
  const intent = pick(sources, 'intent');
  if (intent === undefined) {
    throw fieldError(['message', 'metadata', 'intent'], 'required: one of inform, ask_question, propose_action (in message metadata or a data part)');
  }
  const artifacts = [...(pick(sources, 'artifacts') ?? []), ...linkArtifacts];
  if (artifacts.length > LIMITS.artifacts) throw fieldError(['message', 'parts'], `at most ${LIMITS.artifacts} artifacts in all`);

  const summary = text.join('\n\n').trim();
  if (summary.length === 0) throw fieldError(['message', 'parts'], 'needs a text part with the summary');
  if (summary.length > LIMITS.summary) throw fieldError(['message', 'parts'], `the summary must be at most ${LIMITS.summary} characters`);

  const metadata = parseAt(metadataSchema, { ...requestMeta.rest, ...messageMeta.rest }, ['message', 'metadata']);
  const clientKey = fromMessage.client_idempotency_key ?? fromRequest.client_idempotency_key;
  if (clientKey && ctx.idempotencyKey && clientKey !== ctx.idempotencyKey) {
    throw fieldError(['message', 'metadata', 'client_idempotency_key'], 'differs from the Idempotency-Key header');
  }

  const created = await ctx.relay.createHandoff(
    ctx.caller,
    {
      to: recipient,
      intent,
      summary,
      question: pick(sources, 'question'),
      artifacts,
      proposed_action: pick(sources, 'proposed_action'),
      metadata,
      idempotency_key: clientKey ?? ctx.idempotencyKey ?? message.messageId,
    },
    ctx.via,
  );
  return ctx.relay.threadViewFor(ctx.caller, created.task_id);
}

// The A2A request params (TaskQueryParams / GetTaskRequest, TaskIdParams / CancelTaskRequest), strict like the wire's.
const getParams = z.object({ id: taskIdSchema, historyLength: historyLengthSchema, metadata: record.optional(), tenant: z.string().optional() }).strict();
const cancelParams = z
  .object({
    id: taskIdSchema,
    metadata: z
      .object({ reason: text(LIMITS.reason).min(1).optional(), client_idempotency_key: z.string().min(1).max(200).optional() })
      .passthrough()
      .optional(),
    tenant: z.string().optional(),
  })
  .strict();

/** Cancels as the sender (metadata.reason is the reason), then reads the task back. */
async function cancelHandoff(ctx: MethodContext, params: unknown): Promise<ThreadView> {
  const p = parseAt(cancelParams, params ?? {}, []);
  const clientKey = p.metadata?.client_idempotency_key;
  if (clientKey && ctx.idempotencyKey && clientKey !== ctx.idempotencyKey) {
    throw fieldError(['metadata', 'client_idempotency_key'], 'differs from the Idempotency-Key header');
  }
  await ctx.relay.transition(ctx.caller, { thread_id: p.id, transition: 'cancel', reason: p.metadata?.reason }, ctx.via, clientKey ?? ctx.idempotencyKey);
  return ctx.relay.threadViewFor(ctx.caller, p.id);
}

// ── handoff → task ──────────────────────────────────────────────────────────────────────────────

/** A version-neutral task; render() spells it for v1.0 or v0.3. */
type OutPart = { text: string } | { data: Record<string, unknown> };
interface OutMessage {
  messageId: string;
  role: 'user' | 'agent';
  parts: OutPart[];
}
interface OutTask {
  id: string;
  state: ThreadStatus;
  timestamp: string;
  statusMessage?: OutMessage;
  history: OutMessage[];
  artifacts: Array<{ artifactId: string; name: string; description: string; parts: OutPart[] }>;
  metadata: Record<string, unknown>;
}

const V1_STATE: Record<ThreadStatus, string> = {
  pending: 'TASK_STATE_SUBMITTED',
  accepted: 'TASK_STATE_WORKING',
  completed: 'TASK_STATE_COMPLETED',
  declined: 'TASK_STATE_REJECTED',
  cancelled: 'TASK_STATE_CANCELED',
};

const V03_STATE: Record<ThreadStatus, string> = {
  pending: 'submitted',
  accepted: 'working',
  completed: 'completed',
  declined: 'rejected',
  cancelled: 'canceled',
};

function outTask(view: ThreadView, historyLength: number | undefined): OutTask {
  const id = view.thread_id;
  const handoff: Record<string, unknown> = { recipient: view.recipient.handle, intent: view.intent, artifacts: view.artifacts };
  if (view.question !== null) handoff.question = view.question;
  if (view.proposed_action !== null) handoff.proposed_action = view.proposed_action;
  const opening: OutMessage = { messageId: `${id}:handoff`, role: 'user', parts: [{ text: view.summary }, { data: handoff }] };
  const history = [
    opening,
    ...view.messages.map(
      (m): OutMessage => ({
        messageId: m.id,
        role: m.from === view.sender.handle ? 'user' : 'agent',
        parts: [...(m.body ? [{ text: m.body }] : []), ...(m.artifacts.length ? [{ data: { artifacts: m.artifacts } }] : [])],
      }),
    ),
  ].filter((m) => m.parts.length > 0);

  let statusMessage: OutMessage | undefined;
  if (view.status === 'completed' && view.completed_summary) {
    statusMessage = { messageId: `${id}:completed`, role: 'agent', parts: [{ text: view.completed_summary }] };
  } else if (view.status === 'declined' && view.decline_reason) {
    statusMessage = { messageId: `${id}:declined`, role: 'agent', parts: [{ text: view.decline_reason }] };
  }

  const resultParts: OutPart[] = [];
  if (view.status === 'completed') {
    if (view.completed_summary) resultParts.push({ text: view.completed_summary });
    if (view.completion_artifacts.length) resultParts.push({ data: { artifacts: view.completion_artifacts } });
  }
  const last = view.status_history[view.status_history.length - 1];
  return {
    id,
    state: view.status,
    timestamp: last?.at ?? view.updated_at,
    statusMessage,
    history: historyLength === undefined ? history : historyLength === 0 ? [] : history.slice(-historyLength),
    artifacts: resultParts.length
      ? [{ artifactId: 'handoff-result', name: 'handoff-result', description: 'What the recipient handed back on completion', parts: resultParts }]
      : [],
    metadata: {
      handoff: {
        thread_id: id,
        status: view.status,
        intent: view.intent,
        sender: view.sender.handle,
        recipient: view.recipient.handle,
        inbox_url: view.inbox_url,
        created_at: view.created_at,
        updated_at: view.updated_at,
      },
    },
  };
}

/** v1.0 proto JSON: `{ text }` / `{ data, mediaType }` parts, ROLE_* roles, TASK_STATE_* states. */
export function v1Task(view: ThreadView, historyLength?: number): Record<string, unknown> {
  const t = outTask(view, historyLength);
  const part = (p: OutPart) => ('text' in p ? { text: p.text } : { data: p.data, mediaType: 'application/json' });
  const message = (m: OutMessage) => ({
    messageId: m.messageId,
    contextId: t.id,
    taskId: t.id,
    role: m.role === 'user' ? 'ROLE_USER' : 'ROLE_AGENT',
    parts: m.parts.map(part),
  });
  return {
    id: t.id,
    contextId: t.id,
    status: { state: V1_STATE[t.state], timestamp: t.timestamp, ...(t.statusMessage ? { message: message(t.statusMessage) } : {}) },
    ...(t.artifacts.length ? { artifacts: t.artifacts.map((a) => ({ ...a, parts: a.parts.map(part) })) } : {}),
    ...(t.history.length ? { history: t.history.map(message) } : {}),
    metadata: t.metadata,
  };
}

/** v0.3 JSON: `kind`-tagged task, messages and parts, lower-case states and roles. */
export function v03Task(view: ThreadView, historyLength?: number): Record<string, unknown> {
  const t = outTask(view, historyLength);
  const part = (p: OutPart) => ('text' in p ? { kind: 'text', text: p.text } : { kind: 'data', data: p.data });
  const message = (m: OutMessage) => ({
    kind: 'message',
    messageId: m.messageId,
    contextId: t.id,
    taskId: t.id,
    role: m.role,
    parts: m.parts.map(part),
  });
  return {
    kind: 'task',
    id: t.id,
    contextId: t.id,
    status: { state: V03_STATE[t.state], timestamp: t.timestamp, ...(t.statusMessage ? { message: message(t.statusMessage) } : {}) },
    ...(t.artifacts.length ? { artifacts: t.artifacts.map((a) => ({ ...a, parts: a.parts.map(part) })) } : {}),
    ...(t.history.length ? { history: t.history.map(message) } : {}),
    metadata: t.metadata,
  };
}

// ── methods ─────────────────────────────────────────────────────────────────────────────────────

export const A2A_STANDARD_METHODS: Record<string, Method> = {
  /** → `{ task }` (SendMessageResponse). */
  async SendMessage(ctx, params) {
    const input = v1SendInput(params);
    return { task: v1Task(await sendHandoff(ctx, input), input.historyLength) };
  },
  async GetTask(ctx, params) {
    const p = parseAt(getParams, params ?? {}, []);
    return v1Task(await ctx.relay.threadViewFor(ctx.caller, p.id), p.historyLength);
  },
  async CancelTask(ctx, params) {
    return v1Task(await cancelHandoff(ctx, params));
  },
};

export const A2A_V03_METHODS: Record<string, Method> = {
  /** → the Task itself (`kind: "task"`). */
  async 'message/send'(ctx, params) {
    const input = v03SendInput(params);
    return v03Task(await sendHandoff(ctx, input), input.historyLength);
  },
  async 'tasks/get'(ctx, params) {
    const p = parseAt(getParams, params ?? {}, []);
    return v03Task(await ctx.relay.threadViewFor(ctx.caller, p.id), p.historyLength);
  },
  async 'tasks/cancel'(ctx, params) {
    return v03Task(await cancelHandoff(ctx, params));
  },
};

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
      return !!message && typeof message === 'object' && message.kind === 'message' && WIRE_SEND_KEYS.every((k) => p[k] === undefined);
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
 * every one first refuses a NUL or a reserved key anywhere in its params (params-hygiene.ts).
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
  return Object.hasOwn(A2A_METHODS, name) ? A2A_METHODS[name] : undefined;
}

// ── agent card ──────────────────────────────────────────────────────────────────────────────────

const SKILL_DESCRIPTION = [
  'Hand work to a teammate (their agent and, in Slack, the person). Send one message:',
  'text parts = the summary;',
  'message.metadata (or a data part) = { recipient: "name@team", intent: "inform" | "ask_question" | "propose_action",',
  'question? (ask_question only), proposed_action? { description, target_files[], rationale, suggested_diff? } (required for propose_action),',
  'artifacts? [{ type: "file_diff" | "file_ref" | "test_command" | "api_contract" | "link", … }] };',
  'messageId is the idempotency key.',
  'The task stays submitted until the recipient accepts (working), completes (completed) or declines (rejected);',
  'the sender may cancel it. Poll GetTask (tasks/get in v0.3); contextId is the thread id.',
].join(' ');

/**
 * The card at /.well-known/agent-card.json, one document both SDK generations read: the v1.0 fields in proto
 * JSON (supportedInterfaces with a 1.0 and a 0.3 JSON-RPC entry, securityRequirements, httpAuthSecurityScheme)
 * plus the v0.3 fields (url, preferredTransport, protocolVersion, security, `type`-tagged scheme). A v1.0
 * reader takes supportedInterfaces first (the SDK's own "superset" card works the same way). No secrets.
 */
export function agentCard(opts: { publicUrl: string; version: string }): Record<string, unknown> {
  const url = `${opts.publicUrl.replace(/\/+$/, '')}/a2a`;
  const bearer = {
    description: 'The teammate API key handoff-relay issued (POST /admin/agents or `handoff-relay register`)',
    bearerFormat: 'hr_<key id>_<secret>',
  };
  const modes = ['text/plain', 'application/json'];
  return {
    name: 'handoff-relay',
    description:
      "Structured handoffs between developers' AI agents: send a teammate a summary, an intent and typed artifacts; " +
      'they get it in Slack and through their own agent, and accept, complete or decline it.',
    supportedInterfaces: [
      { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    ],
    version: opts.version,
    capabilities: { streaming: false, pushNotifications: false, extendedAgentCard: false },
    securitySchemes: {
      bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', ...bearer }, type: 'http', scheme: 'bearer', ...bearer },
    },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    defaultInputModes: modes,
    defaultOutputModes: modes,
    skills: [
      {
        id: 'handoff',
        name: 'Hand off to a teammate',
        description: SKILL_DESCRIPTION,
        tags: ['handoff', 'code-review', 'question', 'collaboration'],
        examples: [
          'metadata { "recipient": "web-dev@acme", "intent": "ask_question", "question": "Does the web client page through /users?" } ' +
            'with text "I refactored /users: it now returns { items, next_cursor }."',
        ],
        inputModes: modes,
        outputModes: modes,
      },
    ],
    // v0.3 readers
    url,
    preferredTransport: 'JSONRPC',
    protocolVersion: '0.3.0',
    security: [{ bearer: [] }],
  };
}
