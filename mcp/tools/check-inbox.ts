// check_inbox: list the handoffs you received (or sent), newest first, with unread counts; it changes nothing.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { LIMITS, threadStatusSchema } from '../../relay-core/domain/schemas';
import { PROVENANCE_NOTE, ProvenanceMarks, provenanceNonceField } from '../provenance';
import type { RelayClient } from '../relay-client';
import { toolResult } from './tool-result';
import { markParty } from './view-thread';

export const checkInboxInput = z.object({
  box: z.enum(['received', 'sent']).default('received').describe('received: handoffs sent to you (default); sent: handoffs you sent'),
  status: z
    .array(threadStatusSchema)
    .max(10)
    .optional()
    .describe('Only threads in these statuses, e.g. ["pending", "accepted"]; "unclaimed": sent to a role, skill or owner you match, yours if you claim it (accept_handoff)'),
  limit: z.number().int().min(1).max(LIMITS.pageLimit).optional().describe(`Page size, 1–${LIMITS.pageLimit} (default ${LIMITS.pageDefault})`),
  cursor: z.string().min(1).max(200).optional().describe('next_cursor of the previous page'),
});

// sender/recipient name and role are wrapped as their own card text; summary_preview as the sender's text.
const party = z.object({ handle: z.string(), name: z.string(), role: z.string() });
const item = z.object({
  thread_id: z.string(),
  sender: party,
  recipient: party,
  summary_preview: z.string(),
  intent: z.string(),
  status: z.string(),
  unread_messages: z.number(),
  created_at: z.string(),
  updated_at: z.string(),
});
type Item = z.infer<typeof item>;
export const checkInboxOutput = z.object({ ...provenanceNonceField, items: z.array(item), next_cursor: z.string().nullable() });

/** Only the known fields, teammate-authored ones wrapped. */
export function markItem(marks: ProvenanceMarks, i: Item): Item {
  return {
    thread_id: i.thread_id,
    sender: markParty(marks, i.sender),
    recipient: markParty(marks, i.recipient),
    summary_preview: marks.text(i.sender.handle, i.summary_preview),
    intent: i.intent,
    status: i.status,
    unread_messages: i.unread_messages,
    created_at: i.created_at,
    updated_at: i.updated_at,
  };
}

export function registerCheckInbox(server: McpServer, relay: RelayClient): void {
  server.registerTool(
    'check_inbox',
    {
      title: 'Check your handoff inbox',
      description:
        'List handoff threads you received (box "received", default) or sent (box "sent"), newest first, with status and unread message counts. ' +
        'Read-only; open one with view_thread. Pass next_cursor back as cursor for the next page. ' + PROVENANCE_NOTE,
      inputSchema: checkInboxInput,
      outputSchema: checkInboxOutput,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    async (input) => {
      const answer = await relay.call<{ items: Item[]; next_cursor?: string | null }>('tasks/list', {
        filter: { role: input.box === 'sent' ? 'sender' : 'recipient', ...(input.status ? { status: input.status } : {}) },
        page: { ...(input.limit !== undefined ? { limit: input.limit } : {}), ...(input.cursor ? { cursor: input.cursor } : {}) },
      });
      const marks = new ProvenanceMarks();
      return toolResult({ provenance_nonce: marks.nonce, items: answer.items.map((i) => markItem(marks, i)), next_cursor: answer.next_cursor ?? null });
    },
  );
}
