// register's MCP client configuration: every JSON and TOML block parses and carries the relay URL and the key.
import { CODEX_TOKEN_ENV, mcpClientConfig, mcpClientSnippets } from '../../mcp/client-config';

const RELAY = 'http://127.0.0.1:3999';
const KEY = 'hr_0123456789ab_abcdefghijklmnopqrstuvwxyz';
const STDIO = { command: 'node', args: ['/opt/handoff relay/dist/mcp/stdio.js'] };
const opts = { relayUrl: RELAY, apiKey: KEY, handle: 'docs@acme', stdio: STDIO };

/** Just enough TOML for these blocks: one [table], `key = value` lines with strings, arrays and inline tables. */
function parseTomlTable(text: string): { table: string; values: Record<string, unknown> } {
  const [header, ...lines] = text.split('\n');
  const table = /^\[([A-Za-z0-9_.-]+)\]$/.exec(header)?.[1];
  if (!table) throw new Error(`bad table header: ${header}`);
  const values: Record<string, unknown> = {};
  for (const line of lines) {
    const m = /^([A-Za-z0-9_-]+) = (.+)$/.exec(line);
    if (!m) throw new Error(`bad TOML line: ${line}`);
    // Inline table `{ A = "x", B = "y" }` → JSON object; strings and arrays of strings are JSON already.
    const json = m[2].replace(/([{,]\s*)([A-Za-z0-9_-]+) = /g, '$1"$2": ');
    values[m[1]] = JSON.parse(json);
  }
  return { table, values };
}

/** The printed text: sections split by blank lines, a title line two spaces in and the block four spaces in. */
function printedSections(text: string): Array<{ title: string; body: string }> {
  return text
    .split('\n\n')
    .slice(1)
    .map((section) => {
      const [title, ...body] = section.replace(/\n$/, '').split('\n');
      for (const l of body) expect(l.startsWith('    ')).toBe(true);
      return { title: title.trim(), body: body.map((l) => l.slice(4)).join('\n') };
    });
}

test('every snippet is printed, paste-ready, in the order given', () => {
  const snippets = mcpClientSnippets(opts);
  const sections = printedSections(mcpClientConfig(opts));
  expect(sections).toEqual(snippets.map((s) => ({ title: s.title, body: s.text })));
  expect(snippets.map((s) => s.title).join('\n')).toMatch(/Claude Code[\s\S]*Cursor[\s\S]*Codex[\s\S]*\.mcp\.json/);
});

test('JSON blocks parse, with the stdio command and env or the /mcp URL and bearer header', () => {
  const json = mcpClientSnippets(opts).filter((s) => s.kind === 'json');
  expect(json).toHaveLength(4);
  for (const s of json) {
    expect(s.text).toContain(KEY);
    const entry = JSON.parse(s.text).mcpServers['handoff-relay'];
    if (/stdio/.test(s.title)) {
      expect(entry).toMatchObject({ ...STDIO, env: { RELAY_URL: RELAY, RELAY_API_KEY: KEY } });
    } else {
      expect(entry).toMatchObject({ url: `${RELAY}/mcp`, headers: { Authorization: `Bearer ${KEY}` } });
    }
    if (/\.mcp\.json/.test(s.title)) expect(entry.type).toBe(/stdio/.test(s.title) ? 'stdio' : 'http');
    if (/Cursor/.test(s.title)) expect(entry.type).toBeUndefined();
  }
});

test('Codex TOML blocks parse; HTTP reads the key from an exported variable', () => {
  const [stdio, http] = mcpClientSnippets(opts).filter((s) => s.kind === 'toml');
  const a = parseTomlTable(stdio.text);
  expect(a.table).toBe('mcp_servers.handoff-relay');
  expect(a.values).toEqual({ ...STDIO, env: { RELAY_URL: RELAY, RELAY_API_KEY: KEY } });
  const b = parseTomlTable(http.text);
  expect(b.table).toBe('mcp_servers.handoff-relay');
  expect(b.values).toEqual({ url: `${RELAY}/mcp`, bearer_token_env_var: CODEX_TOKEN_ENV });
  const exportLine = mcpClientSnippets(opts).find((s) => s.text.startsWith('export '))!;
  expect(exportLine.text).toBe(`export ${CODEX_TOKEN_ENV}=${KEY}`);
});

test('Claude Code commands carry the key and URL and quote a path with a space', () => {
  const [stdio, http] = mcpClientSnippets(opts).filter((s) => s.title.startsWith('Claude Code'));
  expect(stdio.text).toBe(
    `claude mcp add handoff-relay --env RELAY_URL=${RELAY} --env RELAY_API_KEY=${KEY} -- node '/opt/handoff relay/dist/mcp/stdio.js'`,
  );
  expect(http.text).toBe(
    `claude mcp add --transport http handoff-relay ${RELAY}/mcp --header "Authorization: Bearer ${KEY}"`,
  );
});

test('a trailing slash on the relay URL does not double the /mcp path; default stdio is npx handoff-mcp', () => {
  const snippets = mcpClientSnippets({ relayUrl: `${RELAY}/`, apiKey: KEY, handle: 'x@y' });
  expect(snippets.map((s) => s.text).join('\n')).not.toContain('//mcp');
  expect(JSON.parse(snippets.find((s) => s.kind === 'json')!.text).mcpServers['handoff-relay']).toMatchObject({
    command: 'npx',
    args: ['handoff-mcp'],
  });
});
