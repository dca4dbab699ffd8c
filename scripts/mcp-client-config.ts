// Paste-ready MCP client configuration for a newly registered teammate.

export function mcpClientConfig(opts: { relayUrl: string; apiKey: string; handle: string }): string {
  const json = JSON.stringify(
    { mcpServers: { 'handoff-relay': { command: 'npx', args: ['handoff-mcp'], env: { RELAY_URL: opts.relayUrl, RELAY_API_KEY: opts.apiKey } } } },
    null,
    2,
  );
  const indent = (text: string) => text.split('\n').map((l) => `    ${l}`).join('\n');
  return (
    `MCP client configuration for ${opts.handle} (stdio server; run from the handoff-relay checkout):\n\n` +
    `  Claude Code:\n    claude mcp add handoff-relay --env RELAY_URL=${opts.relayUrl} --env RELAY_API_KEY=${opts.apiKey} -- npx handoff-mcp\n\n` +
    `  Cursor (.cursor/mcp.json) or any client reading .mcp.json:\n${indent(json)}\n`
  );
}
