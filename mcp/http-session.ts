// One /mcp request: the tools on an McpServer over a stateless Streamable HTTP transport. http-mount.ts loads this
// module (and with it the MCP SDK's server side) on the first request a key lets through.
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Request, Response } from 'express';
import type { RelayClient } from './relay-client';
import { createServer } from './server';

export async function serveMcpRequest(relay: RelayClient, req: Request, res: Response): Promise<void> {
  const { server, cleanup } = createServer(relay);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on('close', () => {
    void transport.close();
    void cleanup();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, req.body);
}
