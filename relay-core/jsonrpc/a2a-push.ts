// A2A v1.0 push notification configs on POST /a2a: Create / Get / List / DeleteTaskPushNotificationConfig. A participant
// registers a URL per task; the webhooks worker POSTs each later event of the task to it (webhooks/push-delivery.ts),
// signed, SSRF-guarded, retried and dead-lettered like the card webhook.
// Not @a2a-js/sdk's push config handlers: Get of a config the caller does not own is TaskNotFoundError (-32001), not not_found; TaskPushNotificationConfig.toJSON drops signing_secret; DefaultPushNotificationSender posts once from the request's process, unsigned, unguarded and never retried.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { RelayError } from '../domain/errors';
import { LIMITS } from '../domain/schemas';
import { newPushSecret, type PushConfigEntry } from '../store/push-configs';
import { ENVELOPE } from './envelope';
import type { Method, MethodContext } from './method';
import { parseParams, taskIdSchema } from './params';

/** Configs one participant may keep on one task. */
export const MAX_PUSH_CONFIGS = 10;

const configIdSchema = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1–64 letters, digits, "_" or "-"');
const urlSchema = z
  .string()
  .max(LIMITS.url)
  .refine((u) => {
    try {
      return ['http:', 'https:'].includes(new URL(u).protocol);
    } catch {
      return false;
    }
  }, 'must be an http(s) URL');
const tenant = z.string().max(0, 'tenants are not used by this relay').optional();

const createParams = z
  .object({
    tenant,
    taskId: taskIdSchema,
    id: z.union([z.literal(''), configIdSchema]).optional(),
    url: urlSchema,
    token: z.string().max(512).optional(),
    authentication: z
      .object({ scheme: z.string().min(1).max(64), credentials: z.string().max(4096).optional() })
      .strict()
      .optional(),
    ...ENVELOPE,
  })
  .strict();
const oneParams = z.object({ tenant, taskId: taskIdSchema, id: configIdSchema, ...ENVELOPE }).strict();
const listParams = z
  .object({
    tenant,
    taskId: taskIdSchema,
    pageSize: z.number().int().min(0).optional(),
    pageToken: z.string().max(0, 'there is one page').optional(),
    ...ENVELOPE,
  })
  .strict();

/** TaskPushNotificationConfig as A2A 1.0 spells it (never the signing secret, which Create answers once). */
function configView(taskId: string, c: PushConfigEntry): Record<string, unknown> {
  return {
    id: c.id,
    taskId,
    url: c.url,
    ...(c.token ? { token: c.token } : {}),
    ...(c.authentication ? { authentication: { scheme: c.authentication.scheme } } : {}),
  };
}

/** Participants only: reading the task is the check (not_a_participant / thread_not_found otherwise). */
async function participantTask(ctx: MethodContext, taskId: string): Promise<void> {
  await ctx.reads.threadViewFor(ctx.caller, taskId);
}

async function ownConfig(ctx: MethodContext, taskId: string, id: string): Promise<PushConfigEntry> {
  const found = (await ctx.pushConfigs.of(taskId)).find((c) => c.id === id && c.owner === ctx.caller.handle);
  if (!found) throw new RelayError('not_found', `No push notification config ${id} of yours on task ${taskId}`);
  return found;
}

export const A2A_PUSH_METHODS: Record<string, Method> = {
  /** → the config, plus `signing_secret` (once): every call for it is signed with it (Standard Webhooks). */
  async CreateTaskPushNotificationConfig(ctx, params) {
    const p = parseParams(createParams, params);
    await participantTask(ctx, p.taskId);
    const entry: PushConfigEntry = {
      id: p.id || randomUUID(),
      owner: ctx.caller.handle,
      url: p.url,
      ...(p.token ? { token: p.token } : {}),
      ...(p.authentication ? { authentication: p.authentication } : {}),
      secret: newPushSecret(),
      created_at: new Date(),
    };
    let refusal: RelayError | undefined;
    // The task is marked first: an event published once the config is stored reads its configs.
    await ctx.pushConfigs.mark(p.taskId);
    await ctx.pushConfigs.change(p.taskId, (doc) => {
      refusal = undefined;
      const taken = doc.configs.find((c) => c.id === entry.id);
      if (taken) {
        refusal = new RelayError(
          'conflict',
          `params.id: task ${p.taskId} already has a push notification config ${entry.id}; delete it first or use another id`,
        );
        return undefined;
      }
      if (doc.configs.filter((c) => c.owner === entry.owner).length >= MAX_PUSH_CONFIGS) {
        refusal = new RelayError(
          'invalid_params',
          `params: at most ${MAX_PUSH_CONFIGS} push notification configs per task for each participant`,
        );
        return undefined;
      }
      return { ...doc, configs: [...doc.configs, entry] };
    });
    if (refusal) throw refusal;
    return { ...configView(p.taskId, entry), signing_secret: entry.secret };
  },
  async GetTaskPushNotificationConfig(ctx, params) {
    const p = parseParams(oneParams, params);
    await participantTask(ctx, p.taskId);
    return configView(p.taskId, await ownConfig(ctx, p.taskId, p.id));
  },
  async ListTaskPushNotificationConfigs(ctx, params) {
    const p = parseParams(listParams, params);
    await participantTask(ctx, p.taskId);
    const mine = (await ctx.pushConfigs.of(p.taskId)).filter((c) => c.owner === ctx.caller.handle);
    return { configs: mine.map((c) => configView(p.taskId, c)), nextPageToken: '' };
  },
  async DeleteTaskPushNotificationConfig(ctx, params) {
    const p = parseParams(oneParams, params);
    await participantTask(ctx, p.taskId);
    await ownConfig(ctx, p.taskId, p.id);
    await ctx.pushConfigs.change(p.taskId, (doc) => {
      const configs = doc.configs.filter((c) => !(c.id === p.id && c.owner === ctx.caller.handle));
      return configs.length === doc.configs.length ? undefined : { ...doc, configs };
    });
    return {};
  },
};
