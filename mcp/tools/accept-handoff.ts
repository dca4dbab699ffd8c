// accept_handoff: the recipient takes on a pending handoff.
import { randomUUID } from 'node:crypto';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { RelayClient } from '../relay-client';
import { toolResult } from './tool-result';

export const acceptHandoffInput = z.object({
  thread_id: z.uuid().describe('A pending handoff you received (see check_inbox)'),
});

export const acceptHandoffOutput = z.object({
  accepted: z.literal(true),
  thread_id: z.string(),
  status: z.string(),
  accepted_at: z.string(),
});

export function registerAcceptHandoff(server: McpServer, relay: RelayClient): void {
  server.registerTool(
    'accept_handoff',
    {
      title: 'Accept a handoff',
      description:
        'Accept a pending handoff you received: it moves to "accepted" and the sender sees that you took it on. ' +
        'Recipient only. Finish it later with complete_handoff.',
      inputSchema: acceptHandoffInput,
      outputSchema: acceptHandoffOutput,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    },
    async ({ thread_id }) => {
      const idempotencyKey = randomUUID();
      const answer = await relay.call<{ thread_id: string; status: string; accepted_at: string }>(
        'tasks/update',
        { task_id: thread_id, transition: 'accept', metadata: { client_idempotency_key: idempotencyKey } },
        { idempotencyKey },
      );
      return toolResult({ accepted: true as const, thread_id: answer.thread_id, status: answer.status, accepted_at: answer.accepted_at });
    },
  );
}
