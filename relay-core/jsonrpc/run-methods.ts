// The runner's JSON-RPC methods of POST /a2a (docs/agent-runner.md): params parsed once here, then handed
// to the relay's runs (service/handoff-runs.ts). The caller is the teammate whose agent runs the handoff.
import { z } from 'zod';
import { RelayError } from '../domain/errors';
import { RUN_END_REASONS } from '../domain/run';
import { isWellFormedText, text } from '../domain/schemas';
import { ENVELOPE } from './envelope';
import type { Method } from './method';
import { parseParams, taskIdSchema } from './params';

const runIdSchema = z.uuid('must be a run id (as runs/claim or runs/request answered it)');
const leaseIdSchema = z.uuid('must be the lease_id runs/claim answered');

/** The longest a claim waits for a run (a runner asks again right away). */
export const CLAIM_MAX_WAIT_SECONDS = 20;

const requestSchema = z.object({ task_id: taskIdSchema, ...ENVELOPE }).strict();

const claimSchema = z
  .object({
    /** How the runner names itself in Slack ("Running on @bob's agent (laptop)"). */
    runner: text(100)
      .min(1)
      .regex(/^[\w .@:()/-]+$/, 'must be letters, digits, spaces and . @ : ( ) / - _')
      .default('runner'),
    wait_seconds: z
      .number()
      .int()
      .min(0)
      .max(CLAIM_MAX_WAIT_SECONDS, `must be at most ${CLAIM_MAX_WAIT_SECONDS}`)
      .default(0),
    ...ENVELOPE,
  })
  .strict();

const leaseSchema = z.object({ run_id: runIdSchema, lease_id: leaseIdSchema, ...ENVELOPE }).strict();

const progressSchema = z
  .object({
    run_id: runIdSchema,
    lease_id: leaseIdSchema,
    seq: z.number().int().min(1).max(1_000_000),
    text: z
      .string()
      .min(1, 'must not be empty')
      .refine(isWellFormedText, 'must be well-formed Unicode (no lone surrogates or NUL)'),
    ...ENVELOPE,
  })
  .strict();

const finishSchema = z
  .object({
    run_id: runIdSchema,
    lease_id: leaseIdSchema,
    outcome: z.enum(['succeeded', 'failed', 'stopped']),
    reason: z.enum(RUN_END_REASONS).default('exit'),
    exit_code: z.number().int().min(-1).max(255).nullable().default(null),
    report: text(8_000).nullable().default(null),
    ...ENVELOPE,
  })
  .strict();

const runRefSchema = z.object({ run_id: runIdSchema, ...ENVELOPE }).strict();

export const RUN_METHODS: Record<string, Method> = {
  /** The recipient hands an accepted handoff to their agent (tasks/update accept with run: true does both). */
  'runs/request': async (ctx, params) => {
    const p = parseParams(requestSchema, params);
    return ctx.runs.request(ctx.caller, p.task_id, ctx.via, ctx.sessionId);
  },
  /** The caller's next run, under a fresh lease; waits up to wait_seconds; `run: null` when none came. */
  'runs/claim': async (ctx, params) => {
    const p = parseParams(claimSchema, params);
    return { run: await ctx.runs.claim(ctx.caller, p.runner, p.wait_seconds * 1000, ctx.signal) };
  },
  'runs/heartbeat': async (ctx, params) => {
    const p = parseParams(leaseSchema, params);
    return ctx.runs.heartbeat(ctx.caller, p.run_id, p.lease_id);
  },
  'runs/progress': async (ctx, params) => {
    const p = parseParams(progressSchema, params);
    const max = ctx.runs.settings.progressMaxChars;
    if (p.text.length > max)
      throw new RelayError(
        'invalid_params',
        `params.text: must be at most ${max} characters (send the rest in the next batch)`,
      );
    return ctx.runs.progress(ctx.caller, p.run_id, p.lease_id, p.seq, p.text, ctx.via);
  },
  'runs/finish': async (ctx, params) => {
    const p = parseParams(finishSchema, params);
    return ctx.runs.finish(ctx.caller, p, ctx.via);
  },
  'runs/stop': async (ctx, params) => {
    const p = parseParams(runRefSchema, params);
    return ctx.runs.stop(ctx.caller, p.run_id, ctx.via);
  },
  'runs/get': async (ctx, params) => {
    const p = parseParams(runRefSchema, params);
    return ctx.runs.get(ctx.caller, p.run_id);
  },
};
