// complete_handoff: the recipient finishes an accepted handoff, with a result summary and artifacts.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { LIMITS, artifactSchema } from '../../relay-core/domain/schemas';
import type { RelayClient } from '../relay-client';
import { toolResult } from './tool-result';

export const completeHandoffInput = z.object({
  thread_id: z.uuid().describe('An accepted handoff you received'),
  result_summary: z.string().min(1).max(LIMITS.summary).optional().describe('What you did, for the sender'),
  artifacts: z
    .array(artifactSchema)
    .max(LIMITS.artifacts)
    .optional()
    .describe('Results: file_diff, file_ref, test_command, api_contract, link'),
});

export const completeHandoffOutput = z.object({
  thread_id: z.string(),
  status: z.string(),
  completed_at: z.string(),
  completion_artifacts: z.array(z.record(z.string(), z.unknown())),
});

export function registerCompleteHandoff(server: McpServer, relay: RelayClient): void {
  server.registerTool(
    'complete_handoff',
    {
      title: 'Complete a handoff',
      description:
        'Mark a handoff you accepted as completed, optionally with a result summary and artifacts the sender will see. ' +
        'Recipient only; the handoff must be accepted first (accept_handoff). Safe to retry.',
      inputSchema: completeHandoffInput,
      outputSchema: completeHandoffOutput,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    },
    async (input) => {
      const answer = await relay.call<z.infer<typeof completeHandoffOutput>>('tasks/update', {
        task_id: input.thread_id,
        transition: 'complete',
        ...(input.result_summary !== undefined ? { result_summary: input.result_summary } : {}),
        ...(input.artifacts ? { artifacts: input.artifacts } : {}),
      });
      return toolResult(completeHandoffOutput.parse(answer));
    },
  );
}
