// check_inbox: list the handoffs you received (or sent), newest first, with unread counts; it changes nothing.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { LIMITS, THREAD_STATUSES, threadStatusSchema } from '../../relay-core/domain/schemas';
import { PROVENANCE_NOTE, ProvenanceMarks, provenanceNonceField } from '../provenance';
import type { EventsPage, RelayClient } from '../relay-client';
import { CURSOR_PATTERN } from '../../relay-core/service/event-feed';
import { toolResult } from './tool-result';
import { markParty } from './view-thread';

export const MAX_WAIT_SECONDS = 60;
/** The longest the tool waits: under the 60 s an MCP client gives a request by default, with room for the list. */
export const HELD_SECONDS = 50;

export const checkInboxInput = z.object({
  box: z
    .enum(['received', 'sent'])
    .default('received')
    .describe('received: handoffs sent to you (default); sent: handoffs you sent'),
  status: z
    .array(threadStatusSchema)
    .max(THREAD_STATUSES.length)
    .optional()
    .describe(
      'Only threads in these statuses, e.g. ["pending", "accepted"]; "unclaimed": sent to a role, skill or owner you match, yours if you claim it (accept_handoff)',
    ),
  limit: z
    .number()
    .int()
    .min(1)
    .max(LIMITS.pageLimit)
    .optional()
    .describe(`Page size, 1–${LIMITS.pageLimit} (default ${LIMITS.pageDefault})`),
  cursor: z.string().min(1).max(200).optional().describe('next_cursor of the previous page'),
  wait_seconds: z
    .number()
    .int()
    .min(0)
    .max(MAX_WAIT_SECONDS)
    .optional()
    .describe(
      `Wait up to this many seconds (0–${MAX_WAIT_SECONDS}) for something new after \`since\` before answering; it answers as soon as ` +
        `anything changes (a new handoff, a message, an accept, decline, completion or cancel, in either box). At most ${HELD_SECONDS} s ` +
        'is spent waiting, so a client with a 60 s tool timeout always gets its answer.',
    ),
  since: z
    .string()
    .regex(CURSOR_PATTERN, 'must be the events_cursor of an earlier check_inbox answer')
    .optional()
    .describe(
      'events_cursor of your previous check_inbox answer: what changed after it comes back in `changes`. Without it, from now',
    ),
});

/** Events one answer lists at most; the rest come with the next call (its cursor is the last one listed). */
const MAX_CHANGES = 100;

/** An event's relay-owned fields (handles, ids, types, times): none of it is teammate text. */
function changeOf(event: EventsPage['events'][number]): z.infer<typeof change> {
  return {
    cursor: event.cursor,
    thread_id: event.thread_id,
    type: event.type,
    at: event.at,
    ...(event.by !== undefined ? { by: event.by } : {}),
    ...(event.via !== undefined ? { via: event.via } : {}),
  };
}

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
  /** Only on an ask_question handoff its recipient answered. */
  answered_at: z.string().optional(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Item = z.infer<typeof item>;
const change = z.object({
  cursor: z.string(),
  thread_id: z.string(),
  type: z.string(),
  at: z.string(),
  by: z.string().optional(),
  via: z.string().optional(),
});
export const checkInboxOutput = z.object({
  ...provenanceNonceField,
  items: z.array(item),
  next_cursor: z.string().nullable(),
  /** With wait_seconds or since: where to pass `since` next time, and the events after the old cursor. */
  events_cursor: z.string().optional(),
  changes: z.array(change).optional(),
});

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
    ...(i.answered_at ? { answered_at: i.answered_at } : {}),
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
        'Read-only; open one with view_thread. Pass next_cursor back as cursor for the next page. ' +
        'To wait for work instead of asking again and again: call it with wait_seconds (e.g. 50) and, from the second call on, ' +
        'since = the events_cursor of the previous answer. It answers as soon as anything changes after that cursor (or when the ' +
        'time is up, with changes: []) and lists the events in `changes` (thread_id, type such as thread.created or thread.message, ' +
        'who, when); nothing that happens between two calls is missed. ' +
        PROVENANCE_NOTE,
      inputSchema: checkInboxInput,
      outputSchema: checkInboxOutput,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    async (input) => {
      const waiting = input.wait_seconds !== undefined || input.since !== undefined;
      const page = waiting
        ? await relay.events({
            ...(input.since !== undefined ? { since: input.since } : {}),
            wait_seconds: Math.min(input.wait_seconds ?? 0, HELD_SECONDS),
            limit: MAX_CHANGES,
          })
        : undefined;
      const answer = await relay.call<{ items: Item[]; next_cursor?: string | null }>('tasks/list', {
        filter: {
          role: input.box === 'sent' ? 'sender' : 'recipient',
          ...(input.status ? { status: input.status } : {}),
        },
        page: {
          ...(input.limit !== undefined ? { limit: input.limit } : {}),
          ...(input.cursor ? { cursor: input.cursor } : {}),
        },
      });
      const marks = new ProvenanceMarks();
      return toolResult({
        provenance_nonce: marks.nonce,
        items: answer.items.map((i) => markItem(marks, i)),
        next_cursor: answer.next_cursor ?? null,
        ...(page ? { events_cursor: page.cursor, changes: page.events.map(changeOf) } : {}),
      });
    },
  );
}
