// What `register` and `join` print for a new teammate: its API key, once, and the MCP client configuration to paste.
import { resolve } from 'node:path';
import { mcpClientConfig } from '../mcp/client-config';

export function newTeammateText(
  relayUrl: string,
  teammate: { handle: string; api_key: string },
  verb = 'Registered',
): string {
  return (
    `${verb} ${teammate.handle}.\n\nAPI key (shown once, store it now):\n  ${teammate.api_key}\n\n` +
    mcpClientConfig({
      relayUrl,
      apiKey: teammate.api_key,
      handle: teammate.handle,
      // An absolute path to the built stdio server, so the entry works whatever directory the client starts it in.
      stdio: { command: 'node', args: [resolve(__dirname, '..', 'mcp', 'stdio.js')] },
    })
  );
}
