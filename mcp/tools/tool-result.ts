// How every tool answers: structuredContent for programs, the same JSON as text for models.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export function toolResult<T extends Record<string, unknown>>(value: T): CallToolResult & { structuredContent: T } {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }], structuredContent: value };
}
