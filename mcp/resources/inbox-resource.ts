// handoff://inbox: the caller's newest threads, received and sent, as one JSON resource (check_inbox's items).
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { LIMITS } from '../../relay-core/domain/schemas';
import { asMcpError } from '../mcp-errors';
import { PROVENANCE_NOTE, ProvenanceMarks } from '../provenance';
import type { RelayClient } from '../relay-client';
import { markItem, type Item } from '../tools/check-inbox';
import { threadUri } from './thread-resource';

export const INBOX_URI = 'handoff://inbox';

export function registerInboxResource(server: McpServer, relay: RelayClient): void {
  server.registerResource(
    'inbox',
    INBOX_URI,
    {
      title: 'Your handoff inbox',
      description:
        `The ${LIMITS.pageDefault} newest threads you received and sent, newest first, each with its status, unread count and its ` +
        `resource URI (${threadUri('<thread id>')}). ` +
        PROVENANCE_NOTE,
      mimeType: 'application/json',
    },
    async (uri): Promise<ReadResourceResult> => {
      const [received, sent] = await Promise.all(
        (['recipient', 'sender'] as const).map((role) =>
          asMcpError('Inbox', () => relay.call<{ items: Item[] }>('tasks/list', { filter: { role } })),
        ),
      );
      const marks = new ProvenanceMarks();
      const box = (items: Item[]) => items.map((i) => ({ uri: threadUri(i.thread_id), ...markItem(marks, i) }));
      const inbox = { provenance_nonce: marks.nonce, received: box(received!.items), sent: box(sent!.items) };
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(inbox, null, 2) }] };
    },
  );
}
