#!/usr/bin/env node
// `npx handoff-mcp`: the MCP server over stdio, talking to a relay at RELAY_URL with RELAY_API_KEY.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ConfigError, loadClientConfig } from '../relay-core/ops/config';
import { HttpRelayClient } from './relay-client';
import { createServer } from './server';

async function main(): Promise<void> {
  const config = loadClientConfig(process.env);
  if (!config.apiKey)
    throw new ConfigError('RELAY_API_KEY', 'is not set; use the key printed by `handoff-relay register`');
  const relay = new HttpRelayClient({ relayUrl: config.relayUrl, apiKey: config.apiKey });
  const { server, cleanup } = createServer(relay, { subscriptions: true });
  await server.connect(new StdioServerTransport());
  const stop = () =>
    void cleanup().finally(() => {
      relay.close();
      process.exit(0);
    });
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  process.stdin.on('close', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`handoff-mcp: ${(error as Error).message}\n`);
  process.exit(1);
});
