// Approvals over REST: the admin listing and decisions on an approver's behalf (the CLI; each recorded as the admin
// key's, in the approval's history and the policy audit), and an approver's own decisions with their API key. A
// refused decision changes nothing and answers why.
import express, { type Request } from 'express';
import { z } from 'zod';
import { APPROVAL_ID_PATTERN, type Voter } from '../domain/approval';
import type { AgentDoc } from '../domain/documents';
import { RelayError, invalidParams } from '../domain/errors';
import { handleSchema, LIMITS, text } from '../domain/schemas';
import type { DecisionAnswer } from '../service/approvals';
import type { Relay } from '../service/relay-service';
import { approvalView } from '../service/wire-views';

const identity = z.union([handleSchema, z.string().regex(/^[UW][A-Z0-9]{2,20}$/)], {
  error: 'must be the approver: a teammate handle (name@team) or a Slack user id (U…)',
});
const listQuery = z.strictObject({
  status: z.enum(['pending', 'approved', 'rejected', 'timed_out']).optional(),
  approver: identity.optional(),
  limit: z.coerce.number().int().min(1).max(1_000).default(200),
});
const adminApprove = z.strictObject({ as: identity });
const adminReject = z.strictObject({ as: identity, reason: text(LIMITS.reason).min(1, 'must not be empty') });
const ownReject = z.strictObject({ reason: text(LIMITS.reason).min(1, 'must not be empty') });

export interface ApprovalRouteDeps {
  uses: Pick<Relay, 'approvalDecisions' | 'approvalRecords' | 'approvalViews' | 'approvers'>;
  requireAdmin(req: Request): void;
  authenticate(req: Request): Promise<AgentDoc>;
}

function parse<T extends z.ZodType>(schema: T, value: unknown, source: string): z.infer<T> {
  const parsed = schema.safeParse(value ?? {});
  if (!parsed.success) throw invalidParams(parsed.error.issues, source);
  return parsed.data;
}

function approvalIdParam(req: Request): string {
  const id = String(req.params.id);
  if (!APPROVAL_ID_PATTERN.test(id))
    throw new RelayError('invalid_params', `path.id: not an approval id this relay issues (got "${id.slice(0, 100)}")`);
  return id;
}

/** A refused vote is an error with the words the vote gave: forbidden for a non-approver, conflict otherwise. */
function answered(answer: DecisionAnswer): DecisionAnswer {
  if (answer.changed || !answer.refusal) return answer;
  throw new RelayError(
    answer.refusal === 'not_approver' ? 'forbidden' : answer.refusal === 'no_reason' ? 'invalid_params' : 'conflict',
    answer.message,
    {
      approval_id: answer.approval.approval_id,
      status: answer.approval.status,
    },
  );
}

export function mountApprovalRoutes(app: express.Express, deps: ApprovalRouteDeps): void {
  const { requireAdmin, authenticate } = deps;
  const { approvalDecisions, approvalRecords, approvalViews, approvers } = deps.uses;
  const json = express.json({ limit: '64kb' });

  app.get('/admin/approvals', async (req, res) => {
    requireAdmin(req);
    const q = parse(listQuery, req.query, 'query');
    res.json({ approvals: await approvalViews.list({ status: q.status, approver: q.approver }, q.limit) });
  });

  app.get('/admin/approvals/:id', async (req, res) => {
    requireAdmin(req);
    const { thread, record } = await approvalRecords.get(approvalIdParam(req));
    res.json(approvalView(thread._id, record));
  });

  app.post('/admin/approvals/:id/approve', json, async (req, res) => {
    requireAdmin(req);
    const id = approvalIdParam(req);
    const b = parse(adminApprove, req.body, 'body');
    res.json(
      answered(
        await approvalDecisions.decide(id, { ...(await approvers.voterFor(b.as)), admin: true }, 'approve', 'api'),
      ),
    );
  });

  app.post('/admin/approvals/:id/reject', json, async (req, res) => {
    requireAdmin(req);
    const id = approvalIdParam(req);
    const b = parse(adminReject, req.body, 'body');
    res.json(
      answered(
        await approvalDecisions.decide(
          id,
          { ...(await approvers.voterFor(b.as)), admin: true },
          'reject',
          'api',
          b.reason,
        ),
      ),
    );
  });

  const self = (agent: AgentDoc): Voter => ({
    handle: agent.handle,
    slack_user_id: agent.slack_user_id,
    label: agent.handle,
  });

  app.get('/approvals/:id', async (req, res) => {
    const agent = await authenticate(req);
    res.json(await approvalViews.viewFor(agent, approvalIdParam(req)));
  });

  app.post('/approvals/:id/approve', json, async (req, res) => {
    const agent = await authenticate(req);
    res.json(answered(await approvalDecisions.decide(approvalIdParam(req), self(agent), 'approve', 'api')));
  });

  app.post('/approvals/:id/reject', json, async (req, res) => {
    const agent = await authenticate(req);
    const b = parse(ownReject, req.body, 'body');
    res.json(answered(await approvalDecisions.decide(approvalIdParam(req), self(agent), 'reject', 'api', b.reason)));
  });
}
