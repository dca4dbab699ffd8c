// The tool list: every MCP tool the server offers, registered over one relay client.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RelayClient } from '../relay-client';
import { registerHandoffToTeammate } from './handoff-to-teammate';
import { registerListTeammates } from './list-teammates';
import { registerViewThread } from './view-thread';

export function registerTools(server: McpServer, relay: RelayClient): void {
  registerHandoffToTeammate(server, relay);
  registerListTeammates(server, relay);
  registerViewThread(server, relay);
}
