// The acceptance-verdict inputs of an accept, as every surface parses them (JSON-RPC params, MCP input).
import { z } from 'zod';
import { LIMITS, text } from './schemas';

const toolNames = z.array(text(200).min(1)).max(200);

/** Every input optional: an omitted check is skipped, never failed (acceptance-verdict.ts). */
export const verdictInputSchema = z.object({
  goal_token: text(200).min(1).optional(),
  presented_body: z.unknown().optional(),
  project_id: text(200).min(1).optional(),
  expected_repo_path: text(LIMITS.path).min(1).optional(),
  required_tools: toolNames.optional(),
  available_tools: toolNames.optional(),
  expected_required_tools_hash: z.string().min(1).max(200).optional(),
  live_items: z
    .array(
      z
        .object({ id: z.union([z.string().max(200), z.number()]), tool_requirements: toolNames.nullish() })
        .passthrough(),
    )
    .max(1000)
    .optional(),
  expected_board_revision: text(200).min(1).optional(),
  session_id: text(200).optional(),
  delivery_source: text(200).min(1).optional(),
});

export type VerdictInput = z.infer<typeof verdictInputSchema>;

/** One of the caller's live board items. */
export type LiveItem = NonNullable<VerdictInput['live_items']>[number];
