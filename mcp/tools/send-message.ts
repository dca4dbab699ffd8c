// send_message: add a message (and optional artifacts) to a thread you are part of.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { LIMITS, artifactSchema, metadataSchema } from '../../relay-core/domain/schemas';
import type { RelayClient } from '../relay-client';
import { toolResult } from './tool-result';

export const sendMessageInput = z.object({
  thread_id: z.uuid().describe('The thread to write in (from check_inbox, view_thread or handoff_to_teammate)'),
  body: z.string().min(1).max(LIMITS.summary).describe('The message text'),
  artifacts: z
    .array(artifactSchema)
    .max(LIMITS.artifacts)
    .optional()
    .describe('Structured payloads: file_diff, file_ref, test_command, api_contract, link'),
  payload: metadataSchema.optional().describe('Free-form structured data attached to the message'),
});

export const sendMessageOutput = z.object({
  thread_id: z.string(),
  message_id: z.string(),
  sequence_no: z.number(),
  created_at: z.string(),
});

export function registerSendMessage(server: McpServer, relay: RelayClient): void {
  server.registerTool(
    'send_message',
    {
      title: 'Send a message in a handoff thread',
      description:
        'Reply in a handoff thread you sent or received (while it is not finished): answer a question, ask for details, attach artifacts. ' +
        'Safe to retry: a retry never adds a second message.',
      inputSchema: sendMessageInput,
      outputSchema: sendMessageOutput,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    async (input) => {
      const answer = await relay.call<z.infer<typeof sendMessageOutput>>('message/send', {
        task_id: input.thread_id,
        message: { role: 'user', parts: [{ type: 'text', text: input.body }] },
        payload: input.payload ?? {},
        artifacts: input.artifacts ?? [],
      });
      return toolResult(sendMessageOutput.parse(answer));
    },
  );
}
