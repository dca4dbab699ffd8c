// The project's own JSON-RPC methods of POST /a2a: params parsed once here, then handed to the use case each calls.
import { z } from 'zod';
import { RelayError } from '../domain/errors';
import {
  LIMITS,
  artifactsSchema,
  recipientSchema,
  intentSchema,
  isWellFormedText,
  metadataSchema,
  proposedActionSchema,
  text,
  THREAD_STATUSES,
  threadStatusSchema,
} from '../domain/schemas';
import { verdictInputSchema } from '../domain/verdict-input';
import { ENVELOPE, keyedEnvelopeSchema } from './envelope';
import type { Method, MethodContext } from './method';
import { idempotencyKey, parseParams, taskIdSchema } from './params';

const textPart = z
  .object({ type: z.literal('text').optional(), kind: z.literal('text').optional(), text: text(LIMITS.summary) })
  .passthrough();

const messageSchema = z
  .object({
    role: z.string().max(20).optional(),
    parts: z.array(textPart).min(1, 'must hold at least one text part').max(20),
  })
  .passthrough();

const idempotencyMetadata = z.object({
  client_idempotency_key: text(200).min(1).optional(),
  question: text(LIMITS.question).min(1).optional(),
});

// Params are strict: an unknown key is invalid_params naming it, so a client's typo is never silently a different call.
// Beside them every method takes the envelope (envelope.ts), except that a new thread stores its metadata: there it
// is content, held to the rules of stored JSON.
const sendNewSchema = z
  .object({
    task_id: z.null().optional(),
    recipient: recipientSchema,
    intent: intentSchema,
    message: messageSchema,
    artifacts: artifactsSchema.default([]),
    proposed_action: proposedActionSchema.nullish(),
    metadata: metadataSchema.default({}).pipe(z.record(z.string(), z.unknown()).and(idempotencyMetadata)),
    /** A2A's MessageSendParams.configuration, which hybrid clients send beside the wire fields; not used. */
    configuration: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

const sendAppendSchema = z
  .object({
    task_id: taskIdSchema,
    message: messageSchema,
    payload: metadataSchema.default({}),
    artifacts: artifactsSchema.default([]),
    metadata: keyedEnvelopeSchema.default({}),
  })
  .strict();

const getSchema = z.object({ task_id: taskIdSchema, ...ENVELOPE }).strict();

const listSchema = z
  .object({
    filter: z
      .object({
        role: z.enum(['recipient', 'sender']).default('recipient'),
        status: z.array(threadStatusSchema).max(THREAD_STATUSES.length).optional(),
        since: z.iso.datetime({ offset: true, error: 'must be an ISO 8601 timestamp' }).optional(),
      })
      .strict()
      .default({ role: 'recipient' }),
    page: z
      .object({
        limit: z
          .number()
          .int()
          .min(1)
          .max(LIMITS.pageLimit, `must be at most ${LIMITS.pageLimit}`)
          .default(LIMITS.pageDefault),
        cursor: z.string().min(1).max(200).nullish(),
      })
      .strict()
      .default({ limit: LIMITS.pageDefault }),
    ...ENVELOPE,
  })
  .strict();

const updateSchema = z
  .object({
    task_id: taskIdSchema,
    /** claim: a candidate takes an unclaimed handoff (it becomes pending, with the claimer as recipient). */
    transition: z.enum(['accept', 'complete', 'decline', 'claim']),
    result_summary: text(LIMITS.summary).min(1).optional(),
    artifacts: artifactsSchema.optional(),
    reason: text(LIMITS.reason).min(1).optional(),
    session_id: text(200).optional(),
    verdict: verdictInputSchema.strict().optional(),
    /** accept only: also hand the handoff to the recipient's agent (runs/request), docs/agent-runner.md. */
    run: z.boolean().optional(),
    metadata: keyedEnvelopeSchema.optional(),
  })
  .strict();

const cancelSchema = z
  .object({
    task_id: taskIdSchema,
    reason: text(LIMITS.reason).min(1).optional(),
    metadata: keyedEnvelopeSchema.optional(),
  })
  .strict();

const agentsListSchema = z
  .object({
    role: text(LIMITS.role).optional(),
    skill: text(LIMITS.skill).optional(),
    repo: text(LIMITS.path).optional(),
    ...ENVELOPE,
  })
  .strict();

function summaryOf(parts: Array<{ text: string }>, field: string, max: number): string {
  const text = parts
    .map((part) => part.text)
    .join('\n\n')
    .trim();
  if (text.length === 0) throw new RelayError('invalid_params', `${field}: the text must not be empty`);
  if (text.length > max) throw new RelayError('invalid_params', `${field}: the text must be at most ${max} characters`);
  if (!isWellFormedText(text))
    throw new RelayError('invalid_params', `${field}: the text must be well-formed Unicode (no lone surrogates)`);
  return text;
}

async function messageSend(ctx: MethodContext, params: unknown): Promise<unknown> {
  const taskId = (params as { task_id?: unknown } | undefined)?.task_id;
  return taskId === undefined || taskId === null ? createThread(ctx, params) : appendMessage(ctx, params);
}

async function createThread(ctx: MethodContext, params: unknown): Promise<unknown> {
  const p = parseParams(sendNewSchema, params);
  const { client_idempotency_key, question, ...metadata } = p.metadata;
  return ctx.creates.create(
    ctx.caller,
    {
      to: p.recipient,
      intent: p.intent,
      summary: summaryOf(p.message.parts, 'params.message.parts', LIMITS.summary),
      question,
      artifacts: p.artifacts,
      proposed_action: p.proposed_action,
      metadata,
      idempotency_key: idempotencyKey(ctx, client_idempotency_key),
    },
    ctx.via,
    ctx.sessionId,
  );
}

async function appendMessage(ctx: MethodContext, params: unknown): Promise<unknown> {
  const p = parseParams(sendAppendSchema, params);
  return ctx.messages.append(
    ctx.caller,
    {
      thread_id: p.task_id,
      body: summaryOf(p.message.parts, 'params.message.parts', LIMITS.summary),
      payload: p.payload,
      artifacts: p.artifacts,
    },
    ctx.via,
    idempotencyKey(ctx, p.metadata.client_idempotency_key),
    ctx.sessionId,
  );
}

async function tasksGet(ctx: MethodContext, params: unknown): Promise<unknown> {
  const p = parseParams(getSchema, params);
  return ctx.reads.threadViewFor(ctx.caller, p.task_id);
}

async function tasksList(ctx: MethodContext, params: unknown): Promise<unknown> {
  const p = parseParams(listSchema, params);
  return ctx.reads.listThreads(ctx.caller, {
    role: p.filter.role,
    status: p.filter.status,
    since: p.filter.since ? new Date(p.filter.since) : undefined,
    limit: p.page.limit,
    cursor: p.page.cursor ?? undefined,
  });
}

async function tasksUpdate(ctx: MethodContext, params: unknown): Promise<unknown> {
  const p = parseParams(updateSchema, params);
  if (p.verdict && p.transition !== 'accept')
    throw new RelayError('invalid_params', 'params.verdict: only allowed with transition "accept"');
  if (p.run !== undefined && p.transition !== 'accept')
    throw new RelayError('invalid_params', 'params.run: only allowed with transition "accept"');
  if (p.transition === 'claim') return ctx.claims.claim(ctx.caller, p.task_id, ctx.via, ctx.sessionId);
  const transition = p.transition;
  const verdict = p.verdict
    ? {
        ...p.verdict,
        ...(p.verdict.session_id === undefined && p.session_id !== undefined ? { session_id: p.session_id } : {}),
      }
    : undefined;
  const answer = await ctx.transitions.transition(
    ctx.caller,
    {
      thread_id: p.task_id,
      transition,
      result_summary: p.result_summary,
      artifacts: p.artifacts,
      reason: p.reason,
      ...(verdict ? { verdict } : {}),
    },
    ctx.via,
    idempotencyKey(ctx, p.metadata?.client_idempotency_key),
    ctx.sessionId,
  );
  // The accept went through (not refused by the verdict): now the run. Asking again answers the run already queued.
  if (!p.run || ('accepted' in answer && answer.accepted === false)) return answer;
  return { ...answer, run: await ctx.runs.request(ctx.caller, p.task_id, ctx.via, ctx.sessionId) };
}

async function tasksCancel(ctx: MethodContext, params: unknown): Promise<unknown> {
  const p = parseParams(cancelSchema, params);
  return ctx.transitions.transition(
    ctx.caller,
    { thread_id: p.task_id, transition: 'cancel', reason: p.reason },
    ctx.via,
    idempotencyKey(ctx, p.metadata?.client_idempotency_key),
    ctx.sessionId,
  );
}

const approvalGetSchema = z
  .object({
    approval_id: z
      .string()
      .regex(/^[0-9a-f-]{36}_a\d{1,4}$/, 'must be an approval id (as approval_pending or the create answered it)')
      .optional(),
    task_id: taskIdSchema.optional(),
    ...ENVELOPE,
  })
  .strict()
  .refine(
    (p) => (p.approval_id === undefined) !== (p.task_id === undefined),
    'give exactly one of approval_id or task_id',
  );

/** Where approvals stand: one by id (its actor, the thread's sender or an approver), or every one of a thread. */
async function approvalsGet(ctx: MethodContext, params: unknown): Promise<unknown> {
  const p = parseParams(approvalGetSchema, params);
  if (p.approval_id) return { approvals: [await ctx.approvalViews.viewFor(ctx.caller, p.approval_id)] };
  const thread = await ctx.reads.readThread(ctx.caller, p.task_id!);
  return { approvals: await ctx.approvalViews.forThread(ctx.caller, thread) };
}

const signInLinkSchema = z.object({ ...ENVELOPE }).strict();

/** A one-time web inbox sign-in link for the caller (as POST /agents/me/web-link and `handoff-relay open`). */
async function inboxSignInLink(ctx: MethodContext, params: unknown): Promise<unknown> {
  parseParams(signInLinkSchema, params ?? {});
  return ctx.webSessions.issueLink(ctx.caller.handle, 'api');
}

async function agentsList(ctx: MethodContext, params: unknown): Promise<unknown> {
  const { metadata: _envelope, ...filters } = parseParams(agentsListSchema, params);
  return { teammates: await ctx.teammates.list(filters) };
}

export const WIRE_METHODS: Record<string, Method> = {
  'message/send': messageSend,
  'tasks/get': tasksGet,
  'tasks/list': tasksList,
  'tasks/update': tasksUpdate,
  'tasks/cancel': tasksCancel,
  'agents/list': agentsList,
  'approvals/get': approvalsGet,
  'inbox/sign_in_link': inboxSignInLink,
};
