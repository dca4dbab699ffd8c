// handoff_to_teammate: package a summary, intent and artifacts into message/send and open a thread.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import {
  LIMITS,
  artifactSchema,
  recipientSchema,
  intentSchema,
  metadataSchema,
  proposedActionSchema,
} from '../../relay-core/domain/schemas';
import { intentProblems } from '../../relay-core/domain/thread-lifecycle';
import type { RelayClient } from '../relay-client';
import { toolResult } from './tool-result';

export const handoffToTeammateInput = z
  .object({
    to: recipientSchema.describe(
      'Who gets it: a teammate handle (name@team, e.g. frank@acme; see list_teammates), or, when you know the kind of owner but not the person, ' +
        'role:<role> (role:frontend), skill:<skill> (skill:react) or owner:<path> (owner:apps/web/: whoever owns the longest prefix of that path). ' +
        'A target that names one teammate goes to them; several make the handoff "unclaimed" until one of them claims it; none is recipient_not_found listing the roles that exist.',
    ),
    intent: intentSchema.describe(
      'inform: share context; ask_question: expect a reply (set question); propose_action: ask their agent to act (set proposed_action)',
    ),
    summary: z
      .string()
      .min(1)
      .max(LIMITS.summary)
      .describe('A 1–2 paragraph human-readable summary of what you are handing off'),
    artifacts: z
      .array(artifactSchema)
      .max(LIMITS.artifacts)
      .optional()
      .describe(
        'Structured payloads: file_diff, file_ref, test_command, api_contract, link (other types and extra fields are kept as data)',
      ),
    question: z.string().min(1).max(LIMITS.question).optional().describe('The question, when intent is ask_question'),
    proposed_action: proposedActionSchema
      .optional()
      .describe('Required when intent is propose_action; must be omitted otherwise'),
    metadata: metadataSchema.optional().describe('Free-form tags (sprint, ticket, …) stored with the handoff'),
    project: z
      .object({
        project_id: z.string().min(1).max(200).optional(),
        repo: z.string().min(1).max(LIMITS.path).optional(),
      })
      .optional()
      .describe(
        "The project this handoff belongs to (stored as metadata.project); accept_handoff checks it against the recipient's project_id / expected_repo_path",
      ),
    required_tools: z
      .array(z.string().min(1).max(200))
      .max(200)
      .optional()
      .describe(
        'Tools the recipient needs (stored as metadata.required_tools); accepting without them is CAPABILITY_UNAVAILABLE',
      ),
  })
  .superRefine((input, ctx) => {
    // The relay's own intent rules, in its words, before any network call.
    for (const problem of intentProblems(input))
      ctx.addIssue({ code: 'custom', path: [problem.field], message: problem.message });
  });

export const handoffToTeammateOutput = z.object({
  thread_id: z.string(),
  /** unclaimed: a role/skill/owner target named several teammates; the first to claim it becomes the recipient.
   *  awaiting_approval: a policy holds it until a person approves; nothing reaches the recipient before. */
  status: z.enum(['pending', 'unclaimed', 'awaiting_approval']),
  recipient: z.string(),
  candidates: z.array(z.string()).optional(),
  created_at: z.string(),
  inbox_url: z.string(),
  approval_id: z.string().optional(),
  approvers: z.array(z.string()).optional(),
});

interface CreateAnswer {
  task_id: string;
  status: { state: 'pending' | 'unclaimed' | 'awaiting_approval' };
  created_at: string;
  inbox_url?: string;
  recipient: string;
  candidates?: string[];
  approval?: { approval_id: string; approvers: string[] };
}

export function registerHandoffToTeammate(server: McpServer, relay: RelayClient): void {
  server.registerTool(
    'handoff_to_teammate',
    {
      title: 'Hand work to a teammate',
      description:
        'Send a structured handoff (summary, intent, artifacts) to a teammate; it lands in their Slack DM and their agent inbox. ' +
        'Use a handle when you know the person; use role:, skill: or owner:<path> when you only know what kind of owner the work needs ' +
        '(e.g. owner:apps/web/ for a change under apps/web): with several matches it goes to their team channel or their DMs as "unclaimed" and the first to claim it owns it. ' +
        'Returns the thread_id to follow it with view_thread. Safe to retry: a retry never creates a second thread. ' +
        'A team policy may hold a handoff for a person to approve: then status is "awaiting_approval" with the approvers; that is normal, ' +
        'nothing is wrong — it is delivered once approved (check_approval tells where it stands), so do not send it again.',
      inputSchema: handoffToTeammateInput,
      outputSchema: handoffToTeammateOutput,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    async (input) => {
      const metadata: Record<string, unknown> = { ...(input.metadata ?? {}) };
      if (input.question !== undefined) metadata.question = input.question;
      if (input.project !== undefined) metadata.project = input.project;
      if (input.required_tools !== undefined) metadata.required_tools = input.required_tools;
      const answer = await relay.call<CreateAnswer>('message/send', {
        task_id: null,
        recipient: input.to,
        intent: input.intent,
        message: { role: 'user', parts: [{ type: 'text', text: input.summary }] },
        artifacts: input.artifacts ?? [],
        proposed_action: input.proposed_action ?? null,
        metadata,
      });
      return toolResult({
        thread_id: answer.task_id,
        status: answer.status.state,
        recipient: answer.recipient,
        ...(answer.candidates ? { candidates: answer.candidates } : {}),
        created_at: answer.created_at,
        inbox_url: answer.inbox_url ?? `/inbox/${answer.task_id}`,
        ...(answer.approval ? { approval_id: answer.approval.approval_id, approvers: answer.approval.approvers } : {}),
      });
    },
  );
}
