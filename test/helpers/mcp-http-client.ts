// A real MCP SDK client over Streamable HTTP to a test relay's POST /mcp, and the two ways a tool call is read.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export type CallResult = Awaited<ReturnType<Client['callTool']>>;

export async function connectMcpHttp(relayUrl: string, apiKey: string, name = 'test-agent'): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${relayUrl}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${apiKey}` } },
    }),
  );
  return client;
}

/** The structured answer of a call that must have succeeded. */
export function toolOk(result: CallResult): Record<string, any> {
  if (result.isError) throw new Error(`tool failed: ${JSON.stringify(result.content)}`);
  return result.structuredContent as Record<string, any>;
}

/** The text of a call that must have failed. */
export function toolErrorText(result: CallResult): string {
  expect(result.isError).toBe(true);
  return JSON.stringify(result.content);
}
