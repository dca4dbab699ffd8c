// Paste-ready MCP client configuration for a new teammate, printed by `register` and shown by `/handoff link`.

// Claude Code, Cursor, Codex and a generic .mcp.json, each for the stdio server (`handoff-mcp`) and for Streamable
// HTTP at the relay's own /mcp.

export interface McpClientConfigOptions {
  relayUrl: string;
  apiKey: string;
  handle: string;
  /** How a client starts the stdio server; an absolute script path works from any working directory. */
  stdio?: { command: string; args: string[] };
}

export interface McpClientSnippet {
  /** One line naming the client, file and transport. */
  title: string;
  kind: 'shell' | 'json' | 'toml';
  text: string;
}

/** Environment variable the Codex HTTP entry reads the bearer key from (Codex refuses an inline token). */
export const CODEX_TOKEN_ENV = 'HANDOFF_RELAY_API_KEY';

const SERVER = 'handoff-relay';

/** Quotes one shell word only when it needs it. */
function sh(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** A TOML basic string; JSON string escapes are valid TOML escapes. */
const tomlString = (value: string) => JSON.stringify(value);

export function mcpClientSnippets(opts: McpClientConfigOptions): McpClientSnippet[] {
  const { command, args } = opts.stdio ?? { command: 'npx', args: ['handoff-mcp'] };
  const httpUrl = `${opts.relayUrl.replace(/\/+$/, '')}/mcp`;
  const env = { RELAY_URL: opts.relayUrl, RELAY_API_KEY: opts.apiKey };
  const headers = { Authorization: `Bearer ${opts.apiKey}` };
  const json = (entry: Record<string, unknown>) => JSON.stringify({ mcpServers: { [SERVER]: entry } }, null, 2);

  return [
    {
      title: 'Claude Code, stdio:',
      kind: 'shell',
      text: `claude mcp add ${SERVER} --env RELAY_URL=${sh(opts.relayUrl)} --env RELAY_API_KEY=${sh(opts.apiKey)} -- ${[command, ...args].map(sh).join(' ')}`,
    },
    {
      title: 'Claude Code, Streamable HTTP:',
      kind: 'shell',
      text: `claude mcp add --transport http ${SERVER} ${sh(httpUrl)} --header ${JSON.stringify(`Authorization: Bearer ${opts.apiKey}`)}`,
    },
    { title: 'Cursor (.cursor/mcp.json), stdio:', kind: 'json', text: json({ command, args, env }) },
    { title: 'Cursor (.cursor/mcp.json), Streamable HTTP:', kind: 'json', text: json({ url: httpUrl, headers }) },
    {
      title: 'Codex (~/.codex/config.toml), stdio:',
      kind: 'toml',
      text: [
        `[mcp_servers.${SERVER}]`,
        `command = ${tomlString(command)}`,
        `args = [${args.map(tomlString).join(', ')}]`,
        `env = { RELAY_URL = ${tomlString(opts.relayUrl)}, RELAY_API_KEY = ${tomlString(opts.apiKey)} }`,
      ].join('\n'),
    },
    {
      title: `Codex (~/.codex/config.toml), Streamable HTTP (the key comes from ${CODEX_TOKEN_ENV} in Codex's environment):`,
      kind: 'toml',
      text: [
        `[mcp_servers.${SERVER}]`,
        `url = ${tomlString(httpUrl)}`,
        `bearer_token_env_var = ${tomlString(CODEX_TOKEN_ENV)}`,
      ].join('\n'),
    },
    {
      title: `Codex, before starting it (shell profile):`,
      kind: 'shell',
      text: `export ${CODEX_TOKEN_ENV}=${sh(opts.apiKey)}`,
    },
    { title: 'Any client reading .mcp.json, stdio:', kind: 'json', text: json({ type: 'stdio', command, args, env }) },
    {
      title: 'Any client reading .mcp.json, Streamable HTTP:',
      kind: 'json',
      text: json({ type: 'http', url: httpUrl, headers }),
    },
  ];
}

/**
 * The text `register` prints: one section per snippet, separated by blank lines; each section is its title
 * line (two spaces in) and the snippet (four spaces in). Pick stdio or HTTP per client, not both.
 */
export function mcpClientConfig(opts: McpClientConfigOptions): string {
  const indent = (text: string) =>
    text
      .split('\n')
      .map((l) => `    ${l}`)
      .join('\n');
  const sections = mcpClientSnippets(opts).map((s) => `  ${s.title}\n${indent(s.text)}`);
  return (
    `MCP client configuration for ${opts.handle} — use one entry per client, stdio or Streamable HTTP (${opts.relayUrl.replace(/\/+$/, '')}/mcp):\n\n` +
    `${sections.join('\n\n')}\n`
  );
}
