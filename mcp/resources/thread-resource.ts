// handoff://thread/{thread_id}: each thread the caller sent or received as a resource, as text and as JSON.
import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError, type ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { threadIds } from '../completions';
import { asMcpError } from '../mcp-errors';
import { PROVENANCE_NOTE, ProvenanceMarks } from '../provenance';
import type { RelayClient } from '../relay-client';
import type { Item } from '../tools/check-inbox';
import { markThread, type RelayThread } from '../tools/view-thread';

export const THREAD_URI_PREFIX = 'handoff://thread/';
export const threadUri = (threadId: string) => `${THREAD_URI_PREFIX}${threadId}`;

const threadIdSchema = z.uuid();

/** The thread id a handoff://thread/ URI names, or null when it names none. */
export function threadIdOf(uri: string): string | null {
  if (!uri.startsWith(THREAD_URI_PREFIX)) return null;
  const id = uri.slice(THREAD_URI_PREFIX.length);
  return threadIdSchema.safeParse(id).success ? id : null;
}

/** How many of each box's newest threads resources/list shows (all of them are readable by URI). */
const LISTED_PER_BOX = 50;

/** A listing entry in the relay's words only (handles, intent, status): no teammate text reaches a list. */
function listed(item: Item) {
  return {
    uri: threadUri(item.thread_id),
    name: `thread-${item.thread_id}`,
    title: `${item.intent} from ${item.sender.handle} to ${item.recipient.handle} (${item.status})`,
    description: `Handoff thread ${item.thread_id}: ${item.status}, ${item.unread_messages} unread message(s), updated ${item.updated_at}`,
    mimeType: 'application/json',
  };
}

/** The thread as plain text for a model to read: every teammate-written field inside this answer's markers. */
export function threadText(view: ReturnType<typeof markThread>): string {
  const lines = [
    `Handoff thread ${view.thread_id} (${view.intent}, ${view.status}); provenance_nonce ${view.provenance_nonce}.`,
    PROVENANCE_NOTE,
    `From: ${view.sender.handle} (${view.sender.name}, ${view.sender.role})`,
    `To: ${view.recipient.handle} (${view.recipient.name}, ${view.recipient.role})`,
    `Summary: ${view.summary}`,
  ];
  if (view.question) lines.push(`Question: ${view.question}`);
  if (view.proposed_action) {
    const a = view.proposed_action;
    lines.push(
      `Proposed action: ${a.description}`,
      `Rationale: ${a.rationale}`,
      `Target files: ${JSON.stringify(a.target_files)}`,
    );
    if (a.suggested_diff) lines.push(`Suggested diff: ${a.suggested_diff}`);
  }
  if (view.artifacts.value.length > 0) lines.push(`Artifacts: ${JSON.stringify(view.artifacts)}`);
  lines.push(`Messages (${view.messages.length}):`);
  for (const m of view.messages) {
    lines.push(`  #${m.sequence_no} from ${m.from} at ${m.created_at}: ${m.body}`);
    if (m.artifacts.value.length > 0) lines.push(`    artifacts: ${JSON.stringify(m.artifacts)}`);
  }
  if (view.completed_summary) lines.push(`Completed: ${view.completed_summary}`);
  if (view.completion_artifacts.value.length > 0)
    lines.push(`Completion artifacts: ${JSON.stringify(view.completion_artifacts)}`);
  if (view.decline_reason) lines.push(`Declined: ${view.decline_reason}`);
  lines.push(`Status history: ${view.status_history.map((h) => `${h.status} by ${h.by} at ${h.at}`).join('; ')}`);
  return lines.join('\n');
}

/** The thread `threadId` marked for the caller (not found when it is not theirs). */
export async function readThread(relay: RelayClient, threadId: string): Promise<ReturnType<typeof markThread>> {
  const thread = await asMcpError(`Thread ${threadId}`, () =>
    relay.call<RelayThread>('tasks/get', { task_id: threadId }),
  );
  return markThread(new ProvenanceMarks(), thread);
}

export function registerThreadResource(server: McpServer, relay: RelayClient): void {
  const template = new ResourceTemplate(`${THREAD_URI_PREFIX}{thread_id}`, {
    list: async () => {
      const pages = await Promise.all(
        (['recipient', 'sender'] as const).map((role) =>
          asMcpError('Inbox', () =>
            relay.call<{ items: Item[] }>('tasks/list', { filter: { role }, page: { limit: LISTED_PER_BOX } }),
          ),
        ),
      );
      return { resources: pages.flatMap((p) => p.items).map(listed) };
    },
    complete: { thread_id: threadIds(relay) },
  });
  server.registerResource(
    'thread',
    template,
    {
      title: 'A handoff thread',
      description:
        'A handoff you sent or received, with its messages and artifacts: as text (text/plain) and as JSON (application/json, the view_thread answer). ' +
        PROVENANCE_NOTE,
      mimeType: 'application/json',
    },
    async (uri): Promise<ReadResourceResult> => {
      const threadId = threadIdOf(uri.href);
      if (!threadId)
        throw new McpError(
          ErrorCode.InvalidParams,
          `${uri.href}: a thread resource is ${THREAD_URI_PREFIX}<thread id, a UUID>`,
        );
      const view = await readThread(relay, threadId);
      return {
        contents: [
          { uri: uri.href, mimeType: 'text/plain', text: threadText(view) },
          { uri: uri.href, mimeType: 'application/json', text: JSON.stringify(view, null, 2) },
        ],
      };
    },
  );
}
