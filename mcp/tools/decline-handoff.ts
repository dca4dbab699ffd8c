// decline_handoff: the recipient turns down a pending handoff (final; the thread closes).
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { LIMITS } from '../../relay-core/domain/schemas';
import type { RelayClient } from '../relay-client';
import { toolResult } from './tool-result';

export const declineHandoffInput = z.object({
  thread_id: z.uuid().describe('A pending handoff you received'),
  reason: z.string().min(1).max(LIMITS.reason).optional().describe('Why, for the sender'),
});

export const declineHandoffOutput = z.object({
  thread_id: z.string(),
  status: z.string(),
  declined_at: z.string(),
});

export function registerDeclineHandoff(server: McpServer, relay: RelayClient): void {
  server.registerTool(
    'decline_handoff',
    {
      title: 'Decline a handoff',
      description:
        'Decline a pending handoff you received, optionally saying why. Recipient only. This closes the thread for good: ' +
        'it cannot be accepted afterwards.',
      inputSchema: declineHandoffInput,
      outputSchema: declineHandoffOutput,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
    },
    async (input) => {
      const answer = await relay.call<z.infer<typeof declineHandoffOutput>>('tasks/update', {
        task_id: input.thread_id,
        transition: 'decline',
        ...(input.reason !== undefined ? { reason: input.reason } : {}),
      });
      return toolResult(declineHandoffOutput.parse(answer));
    },
  );
}
