// list_teammates: discover who to hand work to, by role, skill or owned repository path (public card fields only).
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { markedSchema, markStructured, PROVENANCE_NOTE, wrapText } from '../provenance';
import type { RelayClient } from '../relay-client';
import { toolResult } from './tool-result';

export const listTeammatesInput = z.object({
  role: z.string().max(64).optional().describe('Exact role, e.g. "frontend" (case-sensitive)'),
  skill: z.string().max(100).optional().describe('A skill the teammate lists, e.g. "react"'),
  repo: z.string().max(1024).optional().describe('A repository path the teammate owns, e.g. "apps/web/"'),
});

// Card fields each teammate wrote about themself: name and role wrapped as text, skills and repos_owned marked.
const card = z.object({
  handle: z.string(),
  name: z.string(),
  role: z.string(),
  skills: z.array(z.string()),
  repos_owned: z.array(z.string()),
});
const teammate = z.object({
  handle: z.string(),
  name: z.string(),
  role: z.string(),
  skills: markedSchema(z.array(z.string())),
  repos_owned: markedSchema(z.array(z.string())),
});
export const listTeammatesOutput = z.object({ teammates: z.array(teammate) });

export function markTeammate(raw: unknown): z.infer<typeof teammate> {
  const t = card.parse(raw);
  return {
    handle: t.handle,
    name: wrapText(t.handle, t.name),
    role: wrapText(t.handle, t.role),
    skills: markStructured(t.handle, t.skills),
    repos_owned: markStructured(t.handle, t.repos_owned),
  };
}

export function registerListTeammates(server: McpServer, relay: RelayClient): void {
  server.registerTool(
    'list_teammates',
    {
      title: 'List teammates',
      description:
        'Find registered teammates by role, skill or owned repository path; pass a returned handle as `to` of handoff_to_teammate. ' +
        PROVENANCE_NOTE,
      inputSchema: listTeammatesInput,
      outputSchema: listTeammatesOutput,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    async (input) => {
      const answer = await relay.call<{ teammates: unknown[] }>('agents/list', input);
      return toolResult({ teammates: answer.teammates.map(markTeammate) });
    },
  );
}
