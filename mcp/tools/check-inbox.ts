// check_inbox: list the handoffs you received (or sent), newest first, with unread counts; it changes nothing.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { threadStatusSchema } from '../../relay-core/schemas';
import type { RelayClient } from '../relay-client';
import { toolResult } from './tool-result';

export const checkInboxInput = z.object({
  box: z.enum(['received', 'sent']).default('received').describe('received: handoffs sent to you (default); sent: handoffs you sent'),
  status: z.array(threadStatusSchema).max(5).optional().describe('Only threads in these statuses, e.g. ["pending", "accepted"]'),
  limit: z.number().int().min(1).max(100).optional().describe('Page size, 1–100 (default 20)'),
  cursor: z.string().min(1).max(200).optional().describe('next_cursor of the previous page'),
});

const party = z.object({ handle: z.string(), name: z.string(), role: z.string() }).passthrough();
const item = z
  .object({
    thread_id: z.string(),
    sender: party,
    recipient: party,
    summary_preview: z.string(),
    intent: z.string(),
    status: z.string(),
    unread_messages: z.number(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .passthrough();
export const checkInboxOutput = z.object({ items: z.array(item), next_cursor: z.string().nullable() });

export function registerCheckInbox(server: McpServer, relay: RelayClient): void {
  server.registerTool(
    'check_inbox',
    {
      title: 'Check your handoff inbox',
      description:
        'List handoff threads you received (box "received", default) or sent (box "sent"), newest first, with status and unread message counts. ' +
        'Read-only; open one with view_thread. Pass next_cursor back as cursor for the next page.',
      inputSchema: checkInboxInput,
      outputSchema: checkInboxOutput,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    async (input) => {
      const answer = await relay.call<z.infer<typeof checkInboxOutput>>('tasks/list', {
        filter: { role: input.box === 'sent' ? 'sender' : 'recipient', ...(input.status ? { status: input.status } : {}) },
        page: { ...(input.limit !== undefined ? { limit: input.limit } : {}), ...(input.cursor ? { cursor: input.cursor } : {}) },
      });
      return toolResult({ items: answer.items, next_cursor: answer.next_cursor ?? null });
    },
  );
}
