// list_teammates: discover who to hand work to, by role, skill or owned repository path (public card fields only).
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { markedSchema, PROVENANCE_NOTE, ProvenanceMarks, provenanceNonceField } from '../provenance';
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
export const listTeammatesOutput = z.object({ ...provenanceNonceField, teammates: z.array(teammate) });

export function markTeammate(marks: ProvenanceMarks, raw: unknown): z.infer<typeof teammate> {
  const t = card.parse(raw);
  return {
    handle: t.handle,
    name: marks.text(t.handle, t.name),
    role: marks.text(t.handle, t.role),
    skills: marks.structured(t.handle, t.skills),
    repos_owned: marks.structured(t.handle, t.repos_owned),
  };
}

export function registerListTeammates(server: McpServer, relay: RelayClient): void {
  server.registerTool(
    'list_teammates',
    {
      title: 'List teammates',
      description:
        'Find registered teammates by role, skill or owned repository path; pass a returned handle as `to` of handoff_to_teammate. ' +
        'When any of several would do, pass role:<role>, skill:<skill> or owner:<path> as `to` instead (e.g. role:frontend, owner:apps/web/): ' +
        'one match gets it directly, several see it "unclaimed" and the first to claim it owns it. ' +
        PROVENANCE_NOTE,
      inputSchema: listTeammatesInput,
      outputSchema: listTeammatesOutput,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    async (input) => {
      const answer = await relay.call<{ teammates: unknown[] }>('agents/list', input);
      const marks = new ProvenanceMarks();
      return toolResult({
        provenance_nonce: marks.nonce,
        teammates: answer.teammates.map((t) => markTeammate(marks, t)),
      });
    },
  );
}
