// The tool list: every MCP tool the server offers, registered over one relay client.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RelayClient } from '../relay-client';
import { registerAcceptHandoff } from './accept-handoff';
import { registerCheckApproval } from './check-approval';
import { registerCheckInbox } from './check-inbox';
import { registerCompleteHandoff } from './complete-handoff';
import { registerDeclineHandoff } from './decline-handoff';
import { registerDraftProposedAction } from './draft-proposed-action';
import { registerHandoffToTeammate } from './handoff-to-teammate';
import { registerListTeammates } from './list-teammates';
import { registerSendMessage } from './send-message';
import { registerViewThread } from './view-thread';

export function registerTools(server: McpServer, relay: RelayClient): void {
  registerHandoffToTeammate(server, relay);
  registerListTeammates(server, relay);
  registerViewThread(server, relay);
  registerCheckInbox(server, relay);
  registerSendMessage(server, relay);
  registerAcceptHandoff(server, relay);
  registerCompleteHandoff(server, relay);
  registerDeclineHandoff(server, relay);
  registerDraftProposedAction(server, relay);
  registerCheckApproval(server, relay);
}
