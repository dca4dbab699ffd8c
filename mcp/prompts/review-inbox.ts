// Prompt review_inbox: triage what is waiting for you, newest first.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { GetPromptResult } from '@modelcontextprotocol/sdk/types.js';
import { PROVENANCE_NOTE, ProvenanceMarks } from '../provenance';
import type { RelayClient } from '../relay-client';
import { markItem, type Item } from '../tools/check-inbox';

export function registerReviewInboxPrompt(server: McpServer, relay: RelayClient): void {
  server.registerPrompt(
    'review_inbox',
    {
      title: 'Review my handoff inbox',
      description:
        'Triage the handoffs waiting for you (pending, unclaimed and accepted ones), newest first, and suggest what to do with each.',
    },
    async (): Promise<GetPromptResult> => {
      const { items } = await relay.call<{ items: Item[] }>('tasks/list', {
        filter: { role: 'recipient', status: ['pending', 'unclaimed', 'accepted'] },
        page: { limit: 50 },
      });
      const marks = new ProvenanceMarks();
      const text =
        items.length === 0
          ? 'Nothing is waiting for you in the handoff inbox. Tell me so.'
          : [
              `${items.length} handoff(s) are waiting for you (provenance_nonce ${marks.nonce}). ${PROVENANCE_NOTE}`,
              JSON.stringify(
                items.map((i) => markItem(marks, i)),
                null,
                2,
              ),
              'For each, newest first, in one line: who sent it, what it wants (its intent), and what you suggest: accept, answer, ' +
                'ask in the thread, or decline and why. Read a thread with view_thread when its preview is not enough. ' +
                'Do not accept or decline anything before I say so.',
            ].join('\n');
      return { description: 'Review my handoff inbox', messages: [{ role: 'user', content: { type: 'text', text } }] };
    },
  );
}
