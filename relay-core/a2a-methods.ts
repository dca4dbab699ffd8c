// The JSON-RPC methods of POST /a2a (WIRE.md): params parsed once here, then handed to the relay service.
import { z } from 'zod';
import type { AgentDoc } from './documents';
import { RelayError, invalidParams } from './errors';
import type { RelayService } from './relay-service';
import {
  LIMITS,
  artifactsSchema,
  handleSchema,
  intentSchema,
  metadataSchema,
  proposedActionSchema,
  type Surface,
} from './schemas';
import { transitionView } from './wire-views';

export interface MethodContext {
  caller: AgentDoc;
  relay: RelayService;
  /** The Idempotency-Key header, when the client sent one. */
  idempotencyKey?: string;
  via: Surface;
}

const textPart = z.object({ type: z.literal('text').optional(), kind: z.literal('text').optional(), text: z.string() }).passthrough();

const messageSchema = z.object({
  role: z.string().optional(),
  parts: z.array(textPart).min(1, 'must hold at least one text part'),
}).passthrough();

const sendNewSchema = z.object({
  task_id: z.null().optional(),
  recipient: handleSchema,
  intent: intentSchema,
  message: messageSchema,
  artifacts: artifactsSchema.default([]),
  proposed_action: proposedActionSchema.nullish(),
  metadata: metadataSchema
    .and(
      z.object({
        client_idempotency_key: z.string().min(1).max(200).optional(),
        question: z.string().min(1).max(LIMITS.question).optional(),
      }),
    )
    .default({}),
});

const taskIdSchema = z.uuid('must be a thread id (UUID)');

const getSchema = z.object({ task_id: taskIdSchema });

const updateSchema = z.object({
  task_id: taskIdSchema,
  transition: z.enum(['accept', 'complete', 'decline']),
  result_summary: z.string().min(1).max(LIMITS.summary).optional(),
  artifacts: artifactsSchema.optional(),
  reason: z.string().min(1).max(LIMITS.reason).optional(),
  session_id: z.string().max(200).optional(),
});

const agentsListSchema = z.object({
  role: z.string().max(LIMITS.role).optional(),
  skill: z.string().max(LIMITS.skill).optional(),
  repo: z.string().max(LIMITS.path).optional(),
});

function parse<T extends z.ZodType>(schema: T, params: unknown): z.infer<T> {
  const result = schema.safeParse(params ?? {});
  if (!result.success) throw invalidParams(result.error.issues);
  return result.data;
}

type Method = (ctx: MethodContext, params: unknown) => Promise<unknown>;

async function messageSend(ctx: MethodContext, params: unknown): Promise<unknown> {
  const raw = params as { task_id?: unknown } | undefined;
  if (raw && typeof raw === 'object' && raw.task_id !== undefined && raw.task_id !== null) {
    throw new RelayError('invalid_params', 'params.task_id: appending to an existing thread is not supported by this relay yet');
  }
  const p = parse(sendNewSchema, params);
  const { client_idempotency_key, question, ...metadata } = p.metadata;
  const summary = p.message.parts.map((part) => part.text).join('\n\n').trim();
  if (summary.length === 0) throw new RelayError('invalid_params', 'params.message.parts: the summary text must not be empty');
  if (summary.length > LIMITS.summary) {
    throw new RelayError('invalid_params', `params.message.parts: the summary must be at most ${LIMITS.summary} characters`);
  }
  const idempotencyKey = client_idempotency_key ?? ctx.idempotencyKey;
  if (client_idempotency_key && ctx.idempotencyKey && client_idempotency_key !== ctx.idempotencyKey) {
    throw new RelayError('invalid_params', 'params.metadata.client_idempotency_key: differs from the Idempotency-Key header');
  }
  return ctx.relay.createHandoff(
    ctx.caller,
    {
      to: p.recipient,
      intent: p.intent,
      summary,
      question,
      artifacts: p.artifacts,
      proposed_action: p.proposed_action,
      metadata,
      idempotency_key: idempotencyKey,
    },
    ctx.via,
  );
}

async function tasksGet(ctx: MethodContext, params: unknown): Promise<unknown> {
  const p = parse(getSchema, params);
  return ctx.relay.threadViewFor(ctx.caller, p.task_id);
}

async function tasksUpdate(ctx: MethodContext, params: unknown): Promise<unknown> {
  const p = parse(updateSchema, params);
  const doc = await ctx.relay.transition(
    ctx.caller,
    { thread_id: p.task_id, transition: p.transition, result_summary: p.result_summary, artifacts: p.artifacts, reason: p.reason },
    ctx.via,
  );
  return transitionView(doc);
}

async function agentsList(ctx: MethodContext, params: unknown): Promise<unknown> {
  const p = parse(agentsListSchema, params);
  return { teammates: await ctx.relay.listAgents(p) };
}

export const A2A_METHODS: Record<string, Method> = {
  'message/send': messageSend,
  'tasks/get': tasksGet,
  'tasks/update': tasksUpdate,
  'agents/list': agentsList,
};
