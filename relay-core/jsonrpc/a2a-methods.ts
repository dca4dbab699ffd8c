// Standard A2A on POST /a2a: v1.0 SendMessage / GetTask / CancelTask and their v0.3 twins, mapped onto handoffs (docs/a2a.md).
// Not @a2a-js/sdk's DefaultRequestHandler: its sendMessage answers an AgentExecutor's error as a TASK_STATE_FAILED task (not invalid_params with nothing stored), its cancelTask saves a CANCELED copy through TaskStore.save (no sender check, reason or idempotency key), and its getTask, TaskStore.load plus the same historyLength rule, would call readTask below and delete nothing.
import { z } from 'zod';
import { canonicalJson } from '../domain/canonical-json';
import { RelayError, invalidParams } from '../domain/errors';
import {
  LIMITS,
  artifactSchema,
  artifactsSchema,
  recipientSchema,
  intentSchema,
  metadataSchema,
  proposedActionSchema,
  text,
  type Artifact,
  type Intent,
  type ProposedAction,
} from '../domain/schemas';
import type { ThreadView } from '../service/wire-views';
import { listTasks } from './a2a-list-tasks';
import { v03DraftTask, v03Task, v1DraftTask, v1Task } from './a2a-task';
import { DRAFT_NOTES_MAX, type DraftDoc } from '../store/a2a-drafts';
import { idempotentId } from '../service/idempotency';
import { ENVELOPE, envelopeMetadataSchema } from './envelope';
import type { Method, MethodContext } from './method';
import { idempotencyKey, parseParams, taskIdSchema } from './params';

// ── parsing ─────────────────────────────────────────────────────────────────────────────────────

function fieldError(path: PropertyKey[], message: string): RelayError {
  return invalidParams([{ path, message }]);
}

const record = z.record(z.string(), z.unknown());
const historyLengthSchema = z.number().int().min(0).optional();
const optionalId = z
  .string()
  .optional()
  .transform((v) => (v === '' ? undefined : v));
const messageIdSchema = z
  .string()
  .min(1, 'required: a unique id for this message (it is the idempotency key)')
  .max(200);

const HANDOFF_KEYS = ['recipient', 'intent', 'question', 'proposed_action', 'artifacts'] as const;
const METADATA_KEYS = [...HANDOFF_KEYS, 'client_idempotency_key'] as const;

const handoffFields = z.object({
  recipient: recipientSchema.optional(),
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

export interface SendInput {
  message: InMessage;
  metadata?: Record<string, unknown>;
  historyLength?: number;
}

/**
 * The SendMessage params of one A2A version, with `readPart` turning its part shape into an InPart and
 * `userRole` the role a sender's message must have (or omit). Both versions share everything else.
 */
function sendMessageParams<P extends z.ZodType>(spec: {
  version: '1.0' | '0.3';
  part: P;
  userRole: string;
  /** What a sender whose role is not userRole is told. */
  roleError: string;
  readPart(part: z.infer<P>, path: PropertyKey[]): InPart;
}): (params: unknown) => SendInput {
  const schema = z
    .object({
      message: z
        .object({
          // v0.3 tags the message; v1.0 has no such field (passed through like any other).
          kind: spec.version === '0.3' ? z.literal('message') : z.unknown().optional(),
          messageId: messageIdSchema,
          role: z.string().optional(),
          contextId: optionalId,
          taskId: optionalId,
          parts: z.array(spec.part).min(1, 'must hold at least one text part (the summary)'),
          metadata: record.optional(),
        })
        .passthrough(),
      configuration: z.object({ historyLength: historyLengthSchema }).passthrough().optional(),
      metadata: record.optional(),
      tenant: spec.version === '1.0' ? z.string().optional() : z.unknown().optional(),
    })
    // The request's own keys are the spec's (the message inside may carry extensions): a typo is invalid_params.
    .strict();
  return (params) => {
    const p = parseParams(schema, params);
    const { message } = p;
    const parts = message.parts.map((part, i) => spec.readPart(part, ['message', 'parts', i]));
    if (message.role !== undefined && message.role !== spec.userRole) {
      throw fieldError(['message', 'role'], spec.roleError);
    }
    return { message: { ...message, parts }, metadata: p.metadata, historyLength: p.configuration?.historyLength };
  };
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

export const v1SendInput = sendMessageParams({
  version: '1.0',
  part: v1Part,
  userRole: 'ROLE_USER',
  roleError: 'must be ROLE_USER: a handoff is sent from the user side',
  readPart(part, path): InPart {
    if (part.text !== undefined) return { kind: 'text', text: part.text };
    if (part.data !== undefined && part.data !== null)
      return { kind: 'data', data: part.data, path: [...path, 'data'] };
    if (part.url !== undefined) return { kind: 'url', url: part.url, name: part.filename, path: [...path, 'url'] };
    if (part.raw !== undefined) return { kind: 'bytes', path: [...path, 'raw'] };
    throw fieldError(path, 'must hold one of text, data, url or raw');
  },
});

// v0.3 (LegacyJsonRpcTransport from @a2a-js/sdk/compat/v0_3/client): `kind`-tagged message and parts.
const v03Part = z.discriminatedUnion(
  'kind',
  [
    z.object({ kind: z.literal('text'), text: z.string() }).passthrough(),
    z.object({ kind: z.literal('data'), data: z.unknown() }).passthrough(),
    z
      .object({
        kind: z.literal('file'),
        file: z
          .object({ uri: z.string().optional(), bytes: z.string().optional(), name: z.string().optional() })
          .passthrough(),
      })
      .passthrough(),
  ],
  { error: 'must be a text, data or file part ("kind")' },
);

const v03SendInput = sendMessageParams({
  version: '0.3',
  part: v03Part,
  userRole: 'user',
  roleError: 'must be "user": a handoff is sent from the user side',
  readPart(part, path): InPart {
    if (part.kind === 'text') return { kind: 'text', text: part.text };
    if (part.kind === 'data') return { kind: 'data', data: part.data, path: [...path, 'data'] };
    if (part.file.uri !== undefined)
      return { kind: 'url', url: part.file.uri, name: part.file.name, path: [...path, 'file', 'uri'] };
    if (part.file.bytes !== undefined) return { kind: 'bytes', path: [...path, 'file', 'bytes'] };
    throw fieldError([...path, 'file'], 'needs uri or bytes');
  },
});

// ── message → handoff ───────────────────────────────────────────────────────────────────────────

interface Source {
  path: PropertyKey[];
  fields: HandoffFields;
}

/** `params.message.parts[1].data`, as invalidParams spells a path. */
function pathText(path: PropertyKey[]): string {
  return ['params', ...path]
    .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
    .join('')
    .slice(1);
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

function splitMetadata(metadata: Record<string, unknown> | undefined): {
  known: Record<string, unknown>;
  rest: Record<string, unknown>;
} {
  const known: Record<string, unknown> = {};
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(metadata ?? {})) {
    if ((METADATA_KEYS as readonly string[]).includes(key)) known[key] = value;
    else rest[key] = value;
  }
  return { known, rest };
}

/** What a message's parts and metadata say: its text, the handoff fields wherever given, and its URL parts as link artifacts. */
interface ReadMessage {
  text: string[];
  sources: Source[];
  linkArtifacts: Artifact[];
  fromMessage: z.infer<typeof metadataFields>;
  fromRequest: z.infer<typeof metadataFields>;
  /** The metadata keys that are no handoff field: a new thread's own metadata. */
  rest: Record<string, unknown>;
}

function readMessage(input: SendInput): ReadMessage {
  const { message } = input;
  const messageMeta = splitMetadata(message.metadata);
  const requestMeta = splitMetadata(input.metadata);
  const fromMessage = parseParams(metadataFields, messageMeta.known, ['message', 'metadata']);
  const fromRequest = parseParams(metadataFields, requestMeta.known, ['metadata']);
  const sources: Source[] = [];
  const linkArtifacts: Artifact[] = [];
  const text: string[] = [];
  for (const part of message.parts) {
    if (part.kind === 'text') text.push(part.text);
    else if (part.kind === 'data') {
      if (!part.data || typeof part.data !== 'object' || Array.isArray(part.data)) {
        throw fieldError(part.path, `must be an object with handoff fields (${HANDOFF_KEYS.join(', ')})`);
      }
      sources.push({ path: part.path, fields: parseParams(dataPartFields, part.data, part.path) });
    } else if (part.kind === 'url') {
      const link = {
        type: 'link' as const,
        url: part.url,
        ...(part.name ? { title: part.name.slice(0, LIMITS.title) } : {}),
      };
      const parsed = artifactSchema.safeParse(link);
      if (!parsed.success) throw fieldError(part.path, parsed.error.issues[0]?.message ?? 'must be an http(s) URL');
      linkArtifacts.push(parsed.data);
    } else {
      throw fieldError(
        part.path,
        'file bytes are not supported; send a URL (a link artifact) or the content as an artifact in a data part',
      );
    }
  }
  sources.push({ path: ['message', 'metadata'], fields: fromMessage }, { path: ['metadata'], fields: fromRequest });
  return { text, sources, linkArtifacts, fromMessage, fromRequest, rest: { ...requestMeta.rest, ...messageMeta.rest } };
}

/** The task a message continues (its taskId, or its contextId, which is the same thread id), if it names one. */
function continuedTask(message: InMessage): string | undefined {
  if (message.taskId !== undefined && message.contextId !== undefined && message.taskId !== message.contextId) {
    throw fieldError(
      ['message', 'contextId'],
      `must be the task's own context (${message.taskId}: a task's contextId is its id), or be left out`,
    );
  }
  return message.taskId ?? message.contextId;
}

/**
 * A message in an existing task (multi-turn): the thread's next message from the caller, either participant, while it
 * is not finished. Its text is the body, its data parts' and URL parts' artifacts its artifacts; who the handoff is for
 * and why were settled when it was made. `messageId` is the idempotency key, as on a new handoff.
 */
async function continueTask(ctx: MethodContext, input: SendInput, taskId: string): Promise<SentTask> {
  const read = readMessage(input);
  const draft = await ownDraft(ctx, taskId);
  if (draft && draft.status !== 'handed') return completeDraft(ctx, draft, read, input.message.messageId);
  // The reply that named the recipient, sent again: the task as it is, nothing appended.
  if (draft?.reply_message_id === input.message.messageId)
    return { view: await ctx.reads.threadViewFor(ctx.caller, draft._id) };
  for (const source of read.sources) {
    const settled = HANDOFF_KEYS.find((key) => key !== 'artifacts' && source.fields[key] !== undefined);
    if (settled)
      throw fieldError(
        [...source.path, settled],
        'is set when the handoff is made; a message in an existing task carries text and artifacts',
      );
  }
  const artifacts = [...(pick(read.sources, 'artifacts') ?? []), ...read.linkArtifacts];
  if (artifacts.length > LIMITS.artifacts)
    throw fieldError(['message', 'parts'], `at most ${LIMITS.artifacts} artifacts in all`);
  const body = read.text.join('\n\n').trim();
  if (body.length === 0) throw fieldError(['message', 'parts'], 'needs a text part with the message');
  if (body.length > LIMITS.summary)
    throw fieldError(['message', 'parts'], `the message must be at most ${LIMITS.summary} characters`);
  const clientKey = idempotencyKey(
    ctx,
    read.fromMessage.client_idempotency_key ?? read.fromRequest.client_idempotency_key,
    ['message', 'metadata', 'client_idempotency_key'],
  );
  const threadId = taskIdOf(taskId);
  await ctx.messages.append(
    ctx.caller,
    { thread_id: threadId, body, payload: {}, artifacts },
    ctx.via,
    clientKey ?? input.message.messageId,
    ctx.sessionId,
  );
  return { view: await ctx.reads.threadViewFor(ctx.caller, threadId) };
}

/** What a SendMessage made or continued: a handoff's thread, or a task still waiting for its recipient. */
export type SentTask = { view: ThreadView } | { draft: DraftDoc };

export function v1SentTask(sent: SentTask, historyLength?: number): Record<string, unknown> {
  return 'view' in sent ? v1Task(sent.view, historyLength) : v1DraftTask(sent.draft, historyLength);
}

function v03SentTask(sent: SentTask, historyLength?: number): Record<string, unknown> {
  return 'view' in sent ? v03Task(sent.view, historyLength) : v03DraftTask(sent.draft, historyLength);
}

export async function sendHandoff(ctx: MethodContext, input: SendInput): Promise<SentTask> {
  const { message } = input;
  const continued = continuedTask(message);
  if (continued !== undefined && message.taskId !== undefined) return continueTask(ctx, input, continued);
  if (continued !== undefined) {
    try {
      return await continueTask(ctx, input, continued);
    } catch (error) {
      // A contextId alone that names no task: most likely one the client made up (A2A §3.4.1 lets an agent refuse it).
      if (error instanceof RelayError && error.code === 'thread_not_found')
        throw new RelayError(
          'thread_not_found',
          `No context ${continued}: a contextId here is the id of one task (its handoff thread), so a client cannot choose a new one; leave contextId out to start a task`,
        );
      throw error;
    }
  }

  const { text, sources, linkArtifacts, fromMessage, fromRequest, rest } = readMessage(input);
  const artifacts = [...(pick(sources, 'artifacts') ?? []), ...linkArtifacts];
  if (artifacts.length > LIMITS.artifacts)
    throw fieldError(['message', 'parts'], `at most ${LIMITS.artifacts} artifacts in all`);

  const summary = text.join('\n\n').trim();
  if (summary.length === 0) throw fieldError(['message', 'parts'], 'needs a text part with the summary');
  if (summary.length > LIMITS.summary)
    throw fieldError(['message', 'parts'], `the summary must be at most ${LIMITS.summary} characters`);

  const metadata = parseParams(metadataSchema, rest, ['message', 'metadata']);
  const clientKey = idempotencyKey(ctx, fromMessage.client_idempotency_key ?? fromRequest.client_idempotency_key, [
    'message',
    'metadata',
    'client_idempotency_key',
  ]);
  const key = clientKey ?? message.messageId;
  const fields = {
    summary,
    artifacts,
    metadata,
    question: pick(sources, 'question'),
    proposed_action: pick(sources, 'proposed_action'),
  };

  const recipient = pick(sources, 'recipient');
  // No recipient: the task waits for the next message in its context to name one (input required).
  if (recipient === undefined)
    return startDraft(ctx, { ...fields, intent: pick(sources, 'intent'), key, messageId: message.messageId });
  const intent = pick(sources, 'intent');
  if (intent === undefined) {
    throw fieldError(
      ['message', 'metadata', 'intent'],
      'required: one of inform, ask_question, propose_action (in message metadata or a data part)',
    );
  }
  const created = await ctx.creates.create(
    ctx.caller,
    { ...fields, to: recipient, intent, idempotency_key: key },
    ctx.via,
    ctx.sessionId,
  );
  return { view: await ctx.reads.threadViewFor(ctx.caller, created.task_id) };
}

// ── tasks waiting for their recipient ───────────────────────────────────────────────────────────

/**
 * A task for a handoff whose recipient is not known yet, stored until a later message in its context names one. Its
 * id is the thread id the handoff will have (the create's idempotent id under the same key), so the task keeps its id;
 * sent again, the first message answers the draft, or the handoff once it exists.
 */
async function startDraft(
  ctx: MethodContext,
  d: {
    summary: string;
    artifacts: Artifact[];
    metadata: Record<string, unknown>;
    question?: string;
    proposed_action?: ProposedAction;
    intent?: Intent;
    key: string;
    messageId: string;
  },
): Promise<SentTask> {
  const id = idempotentId(ctx.caller.handle, 'create', d.key);
  if (await ctx.reads.threadById(id)) return { view: await ctx.reads.threadViewFor(ctx.caller, id) };
  const now = ctx.clock.now();
  const draft = await ctx.drafts.put({
    _id: id,
    from: ctx.caller.handle,
    key: d.key,
    message_id: d.messageId,
    summary: d.summary,
    ...(d.intent ? { intent: d.intent } : {}),
    ...(d.question ? { question: d.question } : {}),
    ...(d.proposed_action ? { proposed_action: d.proposed_action } : {}),
    artifacts: d.artifacts,
    metadata: d.metadata,
    status: 'input_required',
    created_at: now,
    updated_at: now,
  });
  return { draft };
}

/** The caller's own draft with this id, if the id names one (a draft is its sender's alone: anyone else finds no task). */
async function ownDraft(ctx: MethodContext, id: string): Promise<DraftDoc | null> {
  const draft = await ctx.drafts.get(id);
  return draft && draft.from === ctx.caller.handle ? draft : null;
}

/**
 * The next message in a waiting task names the recipient (metadata or a data part, or its whole text): the handoff is
 * created from the first message under its key, with the task's id, and any other text of this message follows as the
 * thread's first message. Nothing named: the message joins the task's history and the task keeps asking (noteDraft).
 */
async function completeDraft(
  ctx: MethodContext,
  draft: DraftDoc,
  read: ReadMessage,
  replyMessageId: string,
): Promise<SentTask> {
  if (draft.status === 'cancelled')
    throw new RelayError('thread_terminal', `Task ${draft._id} was cancelled before it named a recipient`);
  const text = read.text.join('\n\n').trim();
  let recipient = pick(read.sources, 'recipient');
  let rest = text;
  if (recipient === undefined) {
    const asText = recipientSchema.safeParse(text);
    // Names nobody: the task keeps asking (input required), and what the message says joins its history.
    if (!asText.success) return noteDraft(ctx, draft, read, text, replyMessageId);
    recipient = asText.data;
    rest = '';
  }
  const artifacts = [...draft.artifacts, ...(pick(read.sources, 'artifacts') ?? []), ...read.linkArtifacts];
  if (artifacts.length > LIMITS.artifacts)
    throw fieldError(['message', 'parts'], `at most ${LIMITS.artifacts} artifacts in all, with the first message's`);
  if (rest.length > LIMITS.summary)
    throw fieldError(['message', 'parts'], `the message must be at most ${LIMITS.summary} characters`);
  await ctx.creates.create(
    ctx.caller,
    {
      to: recipient,
      // A generic A2A client knows no intents: a task begun without one informs.
      intent: pick(read.sources, 'intent') ?? draft.intent ?? 'inform',
      summary: draft.summary,
      question: pick(read.sources, 'question') ?? draft.question,
      proposed_action: pick(read.sources, 'proposed_action') ?? draft.proposed_action,
      artifacts,
      metadata: draft.metadata,
      idempotency_key: draft.key,
    },
    ctx.via,
    ctx.sessionId,
  );
  // Each step is safe to run again (the create and the append under their keys), so a reply retried after a failure
  // part-way finishes the work; marked handed last, the draft then answers the same reply sent again.
  // What the sender said before naming the recipient, then the rest of this reply: the thread's first messages.
  const said = [...(draft.notes ?? []).map((n) => ({ text: n.text, key: n.message_id }))];
  if (rest) said.push({ text: rest, key: replyMessageId });
  for (const { text: body, key } of said)
    await ctx.messages.append(
      ctx.caller,
      { thread_id: draft._id, body, payload: {}, artifacts: [] },
      ctx.via,
      key,
      ctx.sessionId,
    );
  await ctx.drafts.handed(draft._id, replyMessageId, ctx.clock.now());
  return { view: await ctx.reads.threadViewFor(ctx.caller, draft._id) };
}

/**
 * A message in a waiting task that names no recipient: kept as the task's next history entry (and the handoff's first
 * messages once one is named); the task stays input required, its status message asking again.
 */
async function noteDraft(
  ctx: MethodContext,
  draft: DraftDoc,
  read: ReadMessage,
  text: string,
  messageId: string,
): Promise<SentTask> {
  if (text.length === 0)
    throw fieldError(
      ['message'],
      'names no recipient: put a teammate handle (name@team) or role:<role>, skill:<skill>, owner:<path> in message.metadata.recipient or as the whole text',
    );
  if (text.length > LIMITS.summary)
    throw fieldError(['message', 'parts'], `the message must be at most ${LIMITS.summary} characters`);
  if (pick(read.sources, 'artifacts') !== undefined || read.linkArtifacts.length > 0)
    throw fieldError(['message', 'parts'], 'artifacts go with the first message or the one that names the recipient');
  if ((draft.notes ?? []).some((n) => n.message_id === messageId)) return { draft }; // sent again
  if ((draft.notes ?? []).length >= DRAFT_NOTES_MAX)
    throw fieldError(
      ['message'],
      `names no recipient, and this task already holds ${DRAFT_NOTES_MAX} messages: name the recipient (name@team or role:/skill:/owner:)`,
    );
  const noted = await ctx.drafts.addNote(draft._id, { message_id: messageId, text }, ctx.clock.now());
  if (!noted) throw new RelayError('thread_not_found', `No task ${draft._id}`);
  return { draft: noted };
}

/** The task with this id as the caller sees it: the thread, or their own task still waiting for its recipient. */
async function readTask(ctx: MethodContext, id: string): Promise<SentTask> {
  try {
    return { view: await ctx.reads.threadViewFor(ctx.caller, taskIdOf(id)) };
  } catch (error) {
    const draft = error instanceof RelayError && error.code === 'thread_not_found' ? await ownDraft(ctx, id) : null;
    if (!draft) throw error;
    return { draft };
  }
}

// The A2A request params (TaskQueryParams / GetTaskRequest, TaskIdParams / CancelTaskRequest), strict like the wire's;
// their metadata is the envelope (envelope.ts), of which a cancel reads its reason and idempotency key. v0.3 keeps the
// wire's UUID check (invalid_params); in v1.0 any id is a task id, and one that is no UUID names no task.
const v1TaskIdSchema = z.string().min(1, 'required: the task id').max(200, 'must be at most 200 characters');
export const v03GetParams = z
  .object({ id: taskIdSchema, historyLength: historyLengthSchema, ...ENVELOPE, tenant: z.string().optional() })
  .strict();
export const getParams = v03GetParams.extend({ id: v1TaskIdSchema }).strict();
const v03CancelParams = z
  .object({
    id: taskIdSchema,
    metadata: envelopeMetadataSchema
      .pipe(
        z
          .object({
            reason: text(LIMITS.reason).min(1).optional(),
            client_idempotency_key: z.string().min(1).max(200).optional(),
          })
          .passthrough(),
      )
      .optional(),
    tenant: z.string().optional(),
  })
  .strict();
const cancelParams = v03CancelParams.extend({ id: v1TaskIdSchema }).strict();

/** A v1.0 task id as the relay's thread id: one that cannot be a thread id is TaskNotFoundError like any unknown one. */
export function taskIdOf(id: string): string {
  if (!taskIdSchema.safeParse(id).success)
    throw new RelayError('thread_not_found', `No task ${id} (task ids are the UUIDs SendMessage answers)`);
  return id;
}

/** Cancels as the sender (metadata.reason is the reason), then reads the task back. */
async function cancelHandoff(ctx: MethodContext, params: unknown, version: '1.0' | '0.3'): Promise<SentTask> {
  const p = version === '1.0' ? parseParams(cancelParams, params) : parseParams(v03CancelParams, params);
  // A task still waiting for its recipient is its sender's to cancel; cancelled, it takes no more messages.
  const draft = await ownDraft(ctx, p.id);
  if (draft && draft.status !== 'handed' && !(await ctx.reads.threadById(draft._id))) {
    return { draft: (await ctx.drafts.cancel(draft._id, ctx.clock.now())) ?? draft };
  }
  if (version === '1.0') taskIdOf(p.id);
  const key = idempotencyKey(ctx, p.metadata?.client_idempotency_key);
  await ctx.transitions.transition(
    ctx.caller,
    { thread_id: p.id, transition: 'cancel', reason: p.metadata?.reason },
    ctx.via,
    key,
    ctx.sessionId,
  );
  return { view: await ctx.reads.threadViewFor(ctx.caller, p.id) };
}

// ── methods ─────────────────────────────────────────────────────────────────────────────────────

export const A2A_STANDARD_METHODS: Record<string, Method> = {
  /** → `{ task }` (SendMessageResponse). */
  async SendMessage(ctx, params) {
    const input = v1SendInput(params);
    return { task: v1SentTask(await sendHandoff(ctx, input), input.historyLength) };
  },
  async GetTask(ctx, params) {
    const p = parseParams(getParams, params);
    return v1SentTask(await readTask(ctx, p.id), p.historyLength);
  },
  async CancelTask(ctx, params) {
    return v1SentTask(await cancelHandoff(ctx, params, '1.0'));
  },
  ListTasks: listTasks,
};

export const A2A_V03_METHODS: Record<string, Method> = {
  /** → the Task itself (`kind: "task"`). */
  async 'message/send'(ctx, params) {
    const input = v03SendInput(params);
    return v03SentTask(await sendHandoff(ctx, input), input.historyLength);
  },
  async 'tasks/get'(ctx, params) {
    const p = parseParams(v03GetParams, params);
    return v03SentTask(await readTask(ctx, p.id), p.historyLength);
  },
  async 'tasks/cancel'(ctx, params) {
    return v03SentTask(await cancelHandoff(ctx, params, '0.3'));
  },
};
