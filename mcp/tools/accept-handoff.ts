// accept_handoff: the recipient takes on a pending handoff, after the acceptance verdict (relay-core/domain/acceptance-verdict.ts).
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { verdictInputSchema } from '../../relay-core/domain/verdict-input';
import type { RelayClient } from '../relay-client';
import { toolResult } from './tool-result';

export const acceptHandoffInput = z.object({
  thread_id: z
    .uuid()
    .describe('A pending handoff you received, or an unclaimed one you are a candidate for (see check_inbox)'),
  goal_token: verdictInputSchema.shape.goal_token.describe(
    'The handoff_token from view_thread: single use, bound to this handoff',
  ),
  presented_body: verdictInputSchema.shape.presented_body.describe(
    'The handoff body you were given; its canonical SHA-256 must match the stored body hash',
  ),
  project_id: verdictInputSchema.shape.project_id.describe(
    'Your project id; must match the project the handoff declared',
  ),
  expected_repo_path: verdictInputSchema.shape.expected_repo_path.describe(
    'Your repo; must match the repo the handoff declared',
  ),
  required_tools: verdictInputSchema.shape.required_tools.describe(
    "Tools the work needs (default: the handoff's required_tools)",
  ),
  available_tools: verdictInputSchema.shape.available_tools.describe(
    "Tools you have (default: your teammate card's tools)",
  ),
  expected_required_tools_hash: verdictInputSchema.shape.expected_required_tools_hash.describe(
    'sha256 of the canonical JSON of the sorted unique tool_requirements of live_items',
  ),
  live_items: verdictInputSchema.shape.live_items.describe(
    'Your own live board items ({id, tool_requirements, …}); the relay never queries a board',
  ),
  expected_board_revision: verdictInputSchema.shape.expected_board_revision.describe(
    'sha256 of the canonical JSON of live_items sorted by id',
  ),
  session_id: verdictInputSchema.shape.session_id.describe('Your session id (informational)'),
  delivery_source: verdictInputSchema.shape.delivery_source.describe(
    'How the handoff reached you (echoed in the verdict)',
  ),
  run: z
    .boolean()
    .optional()
    .describe(
      'Also hand it to your own agent runner (`handoff-relay agent`): once accepted, a run is queued and your runner picks it up; its progress shows in Slack',
    ),
});

const check = z.record(z.string(), z.unknown());

export const acceptHandoffOutput = z.object({
  accepted: z.boolean(),
  thread_id: z.string(),
  status: z.string(),
  accepted_at: z.string().nullable(),
  result: z.string().optional(),
  reasons: z.array(z.string()).optional(),
  token_check: check.optional(),
  identity_check: check.optional(),
  capability_check: check.optional(),
  tool_manifest_check: check.optional(),
  board_check: check.optional(),
  is_trusted_channel: z.literal(false).optional(),
  delivery_source: z.string().optional(),
  run: z.object({ run_id: z.string(), status: z.string() }).passthrough().optional(),
});

type Answer = z.infer<typeof acceptHandoffOutput>;

export function registerAcceptHandoff(server: McpServer, relay: RelayClient): void {
  server.registerTool(
    'accept_handoff',
    {
      title: 'Accept a handoff',
      description:
        'Accept a pending handoff you received: it moves to "accepted" and the sender sees that you took it on. ' +
        'Recipient only; on an "unclaimed" handoff (sent to a role, skill or owner) that lists you as a candidate, this claims it first ' +
        '(the first claim wins; you become the recipient) and then accepts it. Finish it later with complete_handoff. Runs the acceptance verdict first: every input besides thread_id is optional ' +
        'and gates one check (token, project identity, capability, tool-manifest drift, board revision); when a check fails nothing changes ' +
        'and the answer has accepted:false with the result code and reasons. With run: true an accepted handoff is also queued for your own agent runner (handoff-relay agent); the answer carries the run.',
      inputSchema: acceptHandoffInput,
      outputSchema: acceptHandoffOutput,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    },
    async ({ thread_id, run, ...inputs }) => {
      const verdict = Object.fromEntries(Object.entries(inputs).filter(([, v]) => v !== undefined));
      const answer = await relay.call<Answer>('tasks/update', {
        task_id: thread_id,
        transition: 'accept',
        ...(Object.keys(verdict).length ? { verdict } : {}),
        ...(run ? { run: true } : {}),
      });
      const base = {
        accepted: answer.accepted ?? true,
        thread_id: answer.thread_id,
        status: answer.status,
        accepted_at: answer.accepted_at ?? null,
        ...(answer.run ? { run: answer.run } : {}),
      };
      // Without verdict inputs an accept answers as it always did; otherwise (or when refused) the verdict comes alongside.
      if (answer.result === undefined) return toolResult(base);
      return toolResult({
        ...base,
        result: answer.result,
        reasons: answer.reasons,
        token_check: answer.token_check,
        identity_check: answer.identity_check,
        capability_check: answer.capability_check,
        tool_manifest_check: answer.tool_manifest_check,
        board_check: answer.board_check,
        is_trusted_channel: false as const,
        delivery_source: answer.delivery_source,
      });
    },
  );
}
