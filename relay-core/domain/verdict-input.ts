// The acceptance-verdict inputs of an accept, as every surface parses them (JSON-RPC params, MCP input).
import { z } from 'zod';
import { LIMITS } from './schemas';

const toolNames = z.array(z.string().min(1).max(200)).max(200);

/** Every input optional: an omitted check is skipped, never failed (acceptance-verdict.ts). */
export const verdictInputSchema = z.object({
  goal_token: z.string().min(1).max(200).optional(),
  presented_body: z.unknown().optional(),
  project_id: z.string().min(1).max(200).optional(),
  expected_repo_path: z.string().min(1).max(LIMITS.path).optional(),
  required_tools: toolNames.optional(),
  available_tools: toolNames.optional(),
  expected_required_tools_hash: z.string().min(1).max(200).optional(),
  live_items: z
    .array(z.object({ id: z.union([z.string().max(200), z.number()]), tool_requirements: toolNames.nullish() }).passthrough())
    .max(1000)
    .optional(),
  expected_board_revision: z.string().min(1).max(200).optional(),
  session_id: z.string().max(200).optional(),
  delivery_source: z.string().min(1).max(200).optional(),
});

export type VerdictInput = z.infer<typeof verdictInputSchema>;

/** One of the caller's live board items. */
export type LiveItem = NonNullable<VerdictInput['live_items']>[number];
