// The prompt list: what an agent's user can start from (hand off, answer, review an action, review the inbox).
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RelayClient } from '../relay-client';
import { registerAnswerHandoffPrompt } from './answer-handoff';
import { registerHandOffPrompt } from './hand-off';
import { registerReviewInboxPrompt } from './review-inbox';
import { registerReviewProposedActionPrompt } from './review-proposed-action';

export function registerPrompts(server: McpServer, relay: RelayClient): void {
  registerHandOffPrompt(server, relay);
  registerAnswerHandoffPrompt(server, relay);
  registerReviewProposedActionPrompt(server, relay);
  registerReviewInboxPrompt(server, relay);
}
