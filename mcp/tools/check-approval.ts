// check_approval: where an approval a policy asked for stands (it changes nothing).
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { RelayClient } from '../relay-client';
import { toolResult } from './tool-result';

export const checkApprovalInput = z
  .object({
    approval_id: z
      .string()
      .regex(
        /^[0-9a-f-]{36}_a\d{1,4}$/,
        'must be an approval id as handoff_to_teammate or an approval_pending error gave it',
      )
      .optional()
      .describe(
        'The approval_id from handoff_to_teammate (status awaiting_approval) or from an approval_pending error',
      ),
    thread_id: z.uuid().optional().describe('Or: a thread, for every approval asked on it'),
  })
  .refine(
    (input) => (input.approval_id === undefined) !== (input.thread_id === undefined),
    'give exactly one of approval_id or thread_id',
  );

const approval = z.object({
  approval_id: z.string(),
  thread_id: z.string(),
  action: z.string(),
  actor: z.string(),
  status: z.enum(['pending', 'approved', 'rejected', 'timed_out']),
  approvers: z.array(z.string()),
  quorum: z.number(),
  approved_by: z.array(z.string()),
  reason: z.string().nullable(),
  decided_by: z.string().nullable(),
  decided_at: z.string().nullable(),
  outcome: z.object({ applied: z.boolean(), message: z.string() }).nullable(),
  deadline: z.string(),
  on_timeout: z.string(),
});

export const checkApprovalOutput = z.object({ approvals: z.array(approval) });

type Approval = z.infer<typeof approval>;

export function registerCheckApproval(server: McpServer, relay: RelayClient): void {
  server.registerTool(
    'check_approval',
    {
      title: 'Check an approval',
      description:
        'Tell where an approval stands: pending (waiting for the people listed in approvers), approved (with whether it was applied), ' +
        'rejected (with the reason) or timed_out. Waiting for a person is normal and can take hours: carry on with other work and check ' +
        'again later; an approved call is applied for you, you do not repeat it. Read-only.',
      inputSchema: checkApprovalInput,
      outputSchema: checkApprovalOutput,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async (input) => {
      const answer = await relay.call<{ approvals: Array<Approval & Record<string, unknown>> }>(
        'approvals/get',
        input.approval_id ? { approval_id: input.approval_id } : { task_id: input.thread_id },
      );
      const approvals = answer.approvals.map((a) => ({
        approval_id: a.approval_id,
        thread_id: a.thread_id,
        action: a.action,
        actor: a.actor,
        status: a.status,
        approvers: a.approvers,
        quorum: a.quorum,
        approved_by: a.approved_by,
        reason: a.reason,
        decided_by: a.decided_by,
        decided_at: a.decided_at,
        outcome: a.outcome,
        deadline: a.deadline,
        on_timeout: a.on_timeout,
      }));
      return toolResult({ approvals });
    },
  );
}
