// Admin REST for the policy (behind the admin key): show, check, apply and test it, and read the refusals it audited.
import express, { type Request } from 'express';
import { z } from 'zod';
import { RelayError, invalidParams } from '../domain/errors';
import { POLICY_ACTIONS } from '../domain/policy';
import { artifactSchema, handleSchema, intentSchema, surfaceSchema } from '../domain/schemas';
import type { MongoStore } from '../store/mongo-store';
import { parsePolicyOrRefuse, type PolicyGate, type PolicyStore } from '../service/policy-gate';
import type { Teammates } from '../service/teammates';

const POLICY_SOURCE_BYTES = 256 * 1024;

const sourceBody = z.strictObject({ source: z.string().min(1).max(POLICY_SOURCE_BYTES) });

const testBody = z.strictObject({
  action: z.enum(POLICY_ACTIONS),
  from: handleSchema,
  to: handleSchema,
  /** Who acts; the sender for a create, else whoever the action's rule says (defaults to the sender). */
  actor: handleSchema.optional(),
  via: z.union([surfaceSchema, z.literal('rest')]).default('mcp'),
  intent: intentSchema.default('inform'),
  artifact_types: z.array(z.string().min(1).max(100)).max(50).default([]),
  target_files: z.array(z.string().min(1).max(1_024)).max(100).default([]),
  at: z.iso.datetime().optional(),
  /** A policy to try instead of the one in force. */
  source: z.string().min(1).max(POLICY_SOURCE_BYTES).optional(),
});

const auditQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(1_000).default(100) });

export interface PolicyAdminDeps {
  policies: PolicyStore;
  gate: PolicyGate;
  teammates: Teammates;
  store: MongoStore;
  requireAdmin(req: Request): void;
}

export function mountPolicyAdminRoutes(app: express.Express, deps: PolicyAdminDeps): void {
  const { policies, gate, teammates, store, requireAdmin } = deps;
  // JSON `{ "source": "…" }`, or the YAML itself as application/yaml or text/plain.
  const json = express.json({ limit: POLICY_SOURCE_BYTES * 2, type: 'application/json' });
  const yaml = express.text({
    limit: POLICY_SOURCE_BYTES,
    type: ['application/yaml', 'application/x-yaml', 'text/yaml', 'text/plain'],
  });

  function source(req: Request): string {
    const parsed = sourceBody.safeParse(typeof req.body === 'string' ? { source: req.body } : req.body);
    if (!parsed.success) throw invalidParams(parsed.error.issues, 'body');
    return parsed.data.source;
  }

  app.get('/admin/policy', async (req, res) => {
    requireAdmin(req);
    const policy = await policies.current();
    const stored = await store.policies.findOne({ _id: 'current' });
    res.json({
      version: policy.version,
      default: policy.default,
      rules: policy.rules.map((r) => ({ id: r.id, effect: r.effect })),
      source: policy.source,
      applied_at: stored?.applied_at.toISOString() ?? null,
      applied_by: stored?.applied_by ?? null,
    });
  });

  app.post('/admin/policy/check', json, yaml, async (req, res) => {
    requireAdmin(req);
    const policy = parsePolicyOrRefuse(source(req), 'policy');
    res.json({ valid: true, version: policy.version, rules: policy.rules.length });
  });

  app.put('/admin/policy', json, yaml, async (req, res) => {
    requireAdmin(req);
    const policy = await policies.apply(source(req), 'admin-api', 'policy', { checkApprovers: true });
    res.json({ version: policy.version, rules: policy.rules.length });
  });

  app.post('/admin/policy/test', json, async (req, res) => {
    requireAdmin(req);
    const parsed = testBody.safeParse(req.body);
    if (!parsed.success) throw invalidParams(parsed.error.issues, 'body');
    const t = parsed.data;
    const [sender, recipient, actor] = await Promise.all([
      teammates.get(t.from),
      teammates.get(t.to),
      teammates.get(t.actor ?? t.from),
    ]);
    const missing = !sender ? t.from : !recipient ? t.to : !actor ? t.actor : null;
    if (missing) throw new RelayError('recipient_not_found', `No teammate with handle ${missing}`);
    const artifacts = t.artifact_types.map((type) => ({ type }) as z.infer<typeof artifactSchema>);
    const decision = await gate.explain(
      {
        action: t.action,
        via: t.via === 'rest' ? 'api' : t.via,
        actor: actor!,
        sender: sender!,
        recipient: recipient!,
        intent: t.intent,
        artifacts,
        target_files: t.target_files,
        ...(t.at ? { at: new Date(t.at) } : {}),
      },
      t.source ? parsePolicyOrRefuse(t.source, 'policy') : undefined,
    );
    res.json(decision);
  });

  app.get('/admin/policy/audit', async (req, res) => {
    requireAdmin(req);
    const parsed = auditQuery.safeParse(req.query);
    if (!parsed.success) throw invalidParams(parsed.error.issues, 'query');
    // Admin-only and rare: the newest refusals first (ids start with their time).
    const docs = await store.policyAudit.find({}).sort({ _id: -1 }).limit(parsed.data.limit).toArray();
    res.json({ refusals: docs.map(({ _id, at, ...rest }) => ({ id: _id, at: at.toISOString(), ...rest })) });
  });
}
