// Prompt hand_off: "hand this off to …": how to package the work for handoff_to_teammate, with the recipient's card.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import { ErrorCode, McpError, type GetPromptResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { LIMITS, recipientSchema } from '../../relay-core/domain/schemas';
import { teammateTargets } from '../completions';
import { PROVENANCE_NOTE, ProvenanceMarks } from '../provenance';
import type { RelayClient } from '../relay-client';
import { markTeammate } from '../tools/list-teammates';

export function registerHandOffPrompt(server: McpServer, relay: RelayClient): void {
  server.registerPrompt(
    'hand_off',
    {
      title: 'Hand this off to a teammate',
      description:
        'Package the work at hand for a teammate (a handle, or role:, skill: or owner:<path>; completion lists them) and send it with handoff_to_teammate.',
      argsSchema: {
        to: completable(
          recipientSchema.describe('A teammate handle, or role:<role>, skill:<skill>, owner:<path>'),
          teammateTargets(relay),
        ),
        work: z
          .string()
          .max(LIMITS.summary)
          .optional()
          .describe('What to hand off, in a few words (default: the work in this conversation)'),
      },
    },
    async ({ to, work }): Promise<GetPromptResult> => {
      const marks = new ProvenanceMarks();
      let recipient = `the target ${to}: the relay picks the teammate(s) it names; several see it as "unclaimed" and the first to claim it owns it.`;
      if (!to.includes(':')) {
        const { teammates } = await relay.call<{ teammates: Array<{ handle: string }> }>('agents/list', {});
        const card = teammates.find((t) => t.handle === to);
        if (!card)
          throw new McpError(
            ErrorCode.InvalidParams,
            `to: no teammate ${to}; completion of \`to\` lists the handles and targets`,
          );
        recipient = `${to}, whose card (provenance_nonce ${marks.nonce}) is ${JSON.stringify(markTeammate(marks, card))}. ${PROVENANCE_NOTE}`;
      }
      const text = [
        `Hand ${work ? `this work: ${work}` : 'the work we have been doing'} to ${recipient}`,
        '',
        'Call handoff_to_teammate once, with:',
        `- to: "${to}"`,
        '- summary: one or two paragraphs a teammate who was not here can act on: what changed, why, what is left, and what you need from them.',
        '- intent: inform (they only need to know), ask_question (set question, the one thing you need answered) or propose_action ' +
          '(set proposed_action: description, target_files, rationale, and suggested_diff when you have one).',
        '- artifacts: file_diff for changes they must see, file_ref (path and lines) for code to read, test_command for how to check it, link for tickets or PRs.',
        'Ask me before sending if anything in the summary is a guess. Afterwards tell me the thread_id and its status ' +
          '(awaiting_approval is normal: a policy holds it for a person; do not send it again).',
      ].join('\n');
      return { description: `Hand off to ${to}`, messages: [{ role: 'user', content: { type: 'text', text } }] };
    },
  );
}
