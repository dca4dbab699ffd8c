// A real MCP SDK client connected over InMemoryTransport to the server mcp/server.ts builds, for the fast tier.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createServer, type ServerOptions } from '../../mcp/server';
import type { RelayClient } from '../../mcp/relay-client';

export async function connectInMemory(
  relay: RelayClient,
  opts: ServerOptions = {},
): Promise<{ client: Client; close: () => Promise<void> }> {
  const { server, cleanup } = createServer(relay, opts);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'mcp-fast-test', version: '1.0.0' });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  return {
    client,
    close: async () => {
      await client.close();
      await cleanup();
    },
  };
}
