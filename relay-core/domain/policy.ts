// The policy document: ordered rules a team writes in YAML, validated with zod, errors naming the line and field.
import { LineCounter, parseDocument, isNode, type Node } from 'yaml';
import { z } from 'zod';
import { canonicalHash } from './canonical-json';
import { durationSchema } from './duration';
import { isKnownZone } from './local-time';
import { intentSchema } from './schemas';
import { teamSettingsSchema, WEEKDAYS, type TeamSettings } from './team-settings';

/** What a rule can be about; every MCP tool, JSON-RPC method, REST route and Slack action maps onto one. */
export const POLICY_ACTIONS = [
  'handoff.create',
  'handoff.accept',
  'handoff.decline',
  'handoff.complete',
  'handoff.cancel',
  'message.append',
  'draft.attach',
  /** Handing an accepted handoff to the recipient's own agent (a runner); see docs/agent-runner.md. */
  'handoff.run',
] as const;
export type PolicyAction = (typeof POLICY_ACTIONS)[number];

/** The surfaces a rule's `via` names; `rest` is the REST API (recorded as `api` in a thread's history). */
export const POLICY_SURFACES = ['mcp', 'a2a', 'slack', 'rest', 'web'] as const;

export type Weekday = (typeof WEEKDAYS)[number];

/** A rule's `window`: `30s`, `10m`, `4h`, `2d` (at most 90 days; a unit is required). */
const duration = durationSchema({
  min: 1,
  max: 90 * 86_400_000,
  message: (value) => `must be a duration such as 30s, 10m, 4h or 2d (at most 90d), got "${value}"`,
});

const word = z.string().min(1).max(200);
/** A scalar matcher: one value, any of a list, or `{ not: … }` (none of them). */
const oneOf = <T extends z.ZodType<string>>(value: T) =>
  z.union([
    value.transform((v) => ({ any: [v] as string[], not: false })),
    z
      .array(value)
      .min(1)
      .max(100)
      .transform((v) => ({ any: v as string[], not: false })),
    z
      .strictObject({ not: z.union([value.transform((v) => [v] as string[]), z.array(value).min(1).max(100)]) })
      .transform((v) => ({ any: v.not as string[], not: true })),
  ]);
export type OneOf = { any: string[]; not: boolean };

const partyMatcher = z
  .strictObject({
    handle: oneOf(word).optional(),
    team: oneOf(word).optional(),
    role: oneOf(word).optional(),
    skill: oneOf(word).optional(),
  })
  .refine((m) => Object.keys(m).length > 0, 'must name at least one of handle, team, role, skill');

const clockTime = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be a time of day as HH:MM (24 h)');

const timeMatcher = z
  .strictObject({
    days: z.array(z.enum(WEEKDAYS)).min(1).max(7).optional(),
    from: clockTime.optional(),
    to: clockTime.optional(),
    zone: z
      .string()
      .default('UTC')
      .refine((zone) => isKnownZone(zone), 'must be an IANA time zone such as UTC or Europe/Berlin'),
  })
  .refine((t) => (t.from === undefined) === (t.to === undefined), 'from and to go together')
  .refine((t) => t.days !== undefined || t.from !== undefined, 'must name days, or from and to');

const countRange = z
  .strictObject({ min: z.number().int().min(0).optional(), max: z.number().int().min(0).optional() })
  .refine((r) => r.min !== undefined || r.max !== undefined, 'must name min or max');

const matchSchema = z.strictObject({
  action: oneOf(z.enum(POLICY_ACTIONS)).optional(),
  sender: partyMatcher.optional(),
  recipient: partyMatcher.optional(),
  actor: partyMatcher.optional(),
  intent: oneOf(intentSchema).optional(),
  /** Any of these artifact types present. */
  artifact_types: z.array(word).min(1).max(50).optional(),
  /** The proposed action's target files: how many, and whether any lies under one of these path prefixes. */
  target_files: z
    .strictObject({ count: countRange.optional(), under: z.array(word).min(1).max(100).optional() })
    .refine((t) => t.count !== undefined || t.under !== undefined, 'must name count or under')
    .optional(),
  via: oneOf(z.enum(POLICY_SURFACES)).optional(),
  time: timeMatcher.optional(),
});
export type PolicyMatch = z.infer<typeof matchSchema>;

/** Who may approve: a Slack user id, a teammate handle, `role:NAME`, or the sender's / recipient's lead. */
const approverSchema = z
  .string()
  .regex(
    /^(U[A-Z0-9]{2,}|W[A-Z0-9]{2,}|[A-Za-z0-9._-]+@[A-Za-z0-9._-]+|role:[A-Za-z0-9._-]+|recipient_lead|sender_lead)$/,
    'must be a Slack user id (U…), a teammate handle (name@team), role:NAME, recipient_lead or sender_lead',
  );
export type Approver = z.infer<typeof approverSchema>;

const ruleBase = {
  id: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1–64 letters, digits, ".", "_" or "-"'),
  match: matchSchema.default({}),
  description: z.string().max(500).optional(),
};

const ruleSchema = z.discriminatedUnion(
  'effect',
  [
    z.strictObject({ ...ruleBase, effect: z.literal('allow') }),
    z.strictObject({ ...ruleBase, effect: z.literal('deny'), reason: z.string().min(1).max(500) }),
    z.strictObject({
      ...ruleBase,
      effect: z.literal('rate_limit'),
      max: z.number().int().min(1).max(1_000_000),
      window: duration,
      per: z.enum(['teammate', 'pair', 'session']).default('teammate'),
    }),
    z.strictObject({
      ...ruleBase,
      effect: z.literal('require_approval'),
      approvers: z.array(approverSchema).min(1).max(50),
      quorum: z.number().int().min(1).max(50).default(1),
      remind_after: duration.optional(),
      escalate_to: z.array(approverSchema).min(1).max(50).optional(),
      timeout: duration.prefault('3d'),
      on_timeout: z.enum(['deny', 'escalate']).default('deny'),
    }),
  ],
  {
    error: (issue) =>
      issue.code === 'invalid_union' ? 'effect must be one of allow, deny, rate_limit, require_approval' : undefined,
  },
);
export type PolicyRule = z.infer<typeof ruleSchema>;
export type PolicyEffect = PolicyRule['effect'];

const policySchema = z
  .strictObject({
    default: z.enum(['allow', 'deny']).default('allow'),
    default_reason: z.string().min(1).max(500).optional(),
    rules: z.array(ruleSchema).max(1_000).default([]),
    team: teamSettingsSchema.optional(),
  })
  .superRefine((policy, ctx) => {
    const seen = new Set<string>();
    policy.rules.forEach((rule, i) => {
      if (seen.has(rule.id))
        ctx.addIssue({ code: 'custom', path: ['rules', i, 'id'], message: `duplicate rule id "${rule.id}"` });
      seen.add(rule.id);
      if (
        rule.effect === 'require_approval' &&
        rule.quorum > rule.approvers.length &&
        !rule.approvers.some((a) => a.startsWith('role:'))
      ) {
        ctx.addIssue({
          code: 'custom',
          path: ['rules', i, 'quorum'],
          message: `quorum ${rule.quorum} is more than the ${rule.approvers.length} approvers named`,
        });
      }
    });
  });

export interface Policy {
  default: 'allow' | 'deny';
  default_reason?: string;
  rules: PolicyRule[];
  /** Timer settings for the team (reminders, escalation, expiry, working hours) in place of the environment's. */
  team?: TeamSettings;
  /** The canonical hash of the document as parsed: recorded on every decision. */
  version: string;
  /** The YAML it was read from, for `policy show`. */
  source: string;
}

export class PolicyError extends Error {
  constructor(
    message: string,
    readonly line: number | null,
    readonly field: string,
  ) {
    super(message);
    this.name = 'PolicyError';
  }
}

/** The policy in force when none is configured: everything allowed. */
export function defaultPolicy(): Policy {
  return {
    default: 'allow',
    rules: [],
    version: canonicalHash({ default: 'allow', rules: [] }),
    source: 'default: allow\nrules: []\n',
  };
}

/** Parses and validates a policy; a PolicyError names the file, line and field of the first problem. */
export function parsePolicy(source: string, fileName = 'policy'): Policy {
  const lines = new LineCounter();
  const doc = parseDocument(source, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const yamlError = doc.errors[0];
  if (yamlError) {
    const line = lines.linePos(yamlError.pos[0]).line;
    throw new PolicyError(
      `${fileName}${line ? `:${line}` : ''}: not valid YAML: ${yamlError.message.split('\n')[0]}`,
      line,
      '',
    );
  }
  const raw = doc.toJS({ maxAliasCount: 50 }) ?? {};
  const parsed = policySchema.safeParse(raw);
  if (!parsed.success) {
    // A misspelt key explains the missing one next to it: name the misspelling first.
    const issue = parsed.error.issues.find((i) => i.code === 'unrecognized_keys') ?? parsed.error.issues[0]!;
    const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
    const field = fieldName(path);
    const line = lineOf(doc, lines, path);
    throw new PolicyError(
      `${fileName}${line ? `:${line}` : ''}: ${field || 'the document'}: ${issue.message}`,
      line,
      field,
    );
  }
  const { default: fallback, default_reason, rules, team } = parsed.data;
  return {
    default: fallback,
    ...(default_reason ? { default_reason } : {}),
    rules,
    ...(team ? { team } : {}),
    version: canonicalHash(raw).slice(0, 16),
    source,
  };
}

/** `rules[2].match.sender.team` */
function fieldName(path: ReadonlyArray<string | number>): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/** The line of the deepest node on the path that exists (a missing field points at its parent). */
function lineOf(
  doc: ReturnType<typeof parseDocument>,
  lines: LineCounter,
  path: ReadonlyArray<string | number>,
): number | null {
  for (let depth = path.length; depth >= 0; depth -= 1) {
    const node = depth === 0 ? doc.contents : doc.getIn(path.slice(0, depth), true);
    if (isNode(node) && (node as Node).range) return lines.linePos((node as Node).range![0]).line;
  }
  return null;
}
