// The artifact shapes clients of the wire contract send, through JSON-RPC (/a2a) and MCP (/mcp) of one real relay
// (FerretDB + Redis): each accepted shape is stored as sent and read back the same way over both, inside the
// provenance wrapper over MCP and on the inbox page; each refused shape is invalid_params naming the field. Over
// MCP too: reserved keys and NUL refused, pages up to 200, an unknown recipient's message says what to do next.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connectMcpHttp, toolErrorText, toolOk } from '../helpers/mcp-http-client';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';

let relay: TestRelay;
let aliceKey: string;
let bobKey: string;
let mcp: Client;
let bobMcp: Client;

const openapi = {
  openapi: '3.1.0',
  paths: { '/users': { get: { responses: { '200': { description: 'a page of users' } } } } },
};

/** Accepted: what is sent, and what every reader gets back. */
const ACCEPTED: Array<{ name: string; sent: Record<string, unknown>; stored: Record<string, unknown>; inbox: string }> =
  [
    {
      name: 'file_ref lines "10-42"',
      sent: { type: 'file_ref', path: 'a.ts', lines: '10-42' },
      stored: { type: 'file_ref', path: 'a.ts', lines: '10-42' },
      inbox: 'lines 10-42',
    },
    {
      name: 'file_ref lines [10, 42]',
      sent: { type: 'file_ref', path: 'a.ts', lines: [10, 42] },
      stored: { type: 'file_ref', path: 'a.ts', lines: [10, 42] },
      inbox: 'lines 10-42',
    },
    {
      name: 'file_ref lines "10"',
      sent: { type: 'file_ref', path: 'b.ts', lines: '10' },
      stored: { type: 'file_ref', path: 'b.ts', lines: '10' },
      inbox: 'lines 10',
    },
    {
      name: 'file_ref lines [10]',
      sent: { type: 'file_ref', path: 'b.ts', lines: [10] },
      stored: { type: 'file_ref', path: 'b.ts', lines: [10] },
      inbox: 'lines 10',
    },
    {
      name: 'file_ref lines [7, 7]',
      sent: { type: 'file_ref', path: 'c.ts', lines: [7, 7] },
      stored: { type: 'file_ref', path: 'c.ts', lines: [7, 7] },
      inbox: 'lines 7<',
    },
    {
      name: 'file_ref lines "007-010"',
      sent: { type: 'file_ref', path: 'c.ts', lines: '007-010' },
      stored: { type: 'file_ref', path: 'c.ts', lines: '007-010' },
      inbox: 'lines 7-10',
    },
    {
      name: 'file_ref git_sha a ref name',
      sent: { type: 'file_ref', path: 'd.ts', git_sha: 'main' },
      stored: { type: 'file_ref', path: 'd.ts', git_sha: 'main' },
      inbox: 'at <code>main</code>',
    },
    {
      name: 'file_ref git_sha a remote branch, lines as an array',
      sent: { type: 'file_ref', path: 'd.ts', git_sha: 'origin/feature-x', lines: [3, 9] },
      stored: { type: 'file_ref', path: 'd.ts', git_sha: 'origin/feature-x', lines: [3, 9] },
      inbox: 'lines 3-9 at <code>origin/feature-x</code>',
    },
    {
      name: 'file_ref git_sha a hex sha',
      sent: { type: 'file_ref', path: 'd.ts', git_sha: 'DEADbeef1234' },
      stored: { type: 'file_ref', path: 'd.ts', git_sha: 'DEADbeef1234' },
      inbox: 'at <code>DEADbeef1234</code>',
    },
    {
      name: 'api_contract inline as text',
      sent: { type: 'api_contract', inline: 'GET /users -> 200' },
      stored: { type: 'api_contract', inline: 'GET /users -> 200' },
      inbox: 'GET /users -&gt; 200',
    },
    {
      name: 'api_contract inline as a JSON object',
      sent: { type: 'api_contract', inline: openapi },
      stored: { type: 'api_contract', inline: openapi },
      inbox: '&quot;openapi&quot;: &quot;3.1.0&quot;',
    },
    {
      name: 'api_contract inline as a JSON array',
      sent: { type: 'api_contract', inline: [1, 'two'] },
      stored: { type: 'api_contract', inline: [1, 'two'] },
      inbox: '&quot;two&quot;',
    },
    {
      name: 'api_contract inline as a number',
      sent: { type: 'api_contract', inline: 3 },
      stored: { type: 'api_contract', inline: 3 },
      inbox: '<pre>3</pre>',
    },
    {
      name: 'link with an extra description',
      sent: { type: 'link', url: 'https://example.com/pr/1', description: 'the PR' },
      stored: { type: 'link', url: 'https://example.com/pr/1', description: 'the PR' },
      inbox: '&quot;description&quot;: &quot;the PR&quot;',
    },
    {
      name: 'file_diff with 16 extra fields',
      sent: {
        type: 'file_diff',
        path: 'a.ts',
        diff: '+x',
        ...Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`x${i}`, { n: i }])),
      },
      stored: {
        type: 'file_diff',
        path: 'a.ts',
        diff: '+x',
        ...Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`x${i}`, { n: i }])),
      },
      inbox: '&quot;x15&quot;',
    },
    {
      name: 'an unknown artifact type',
      sent: { type: 'screenshot', url: 'https://example.com/s.png', width: 640, alt: '<b>hi</b>' },
      stored: { type: 'screenshot', url: 'https://example.com/s.png', width: 640, alt: '<b>hi</b>' },
      inbox: 'Artifact <code>screenshot</code>',
    },
  ];

/**
 * Refused: what is sent, the field the error names (after `params.artifacts[0]`, or `artifacts[0]` over MCP), and
 * for an error about the whole artifact what it says.
 */
const REFUSED: Array<{ name: string; sent: unknown; field: string; says?: string }> = [
  {
    name: 'file_ref lines [42, 10] (reversed)',
    sent: { type: 'file_ref', path: 'a.ts', lines: [42, 10] },
    field: 'lines',
  },
  {
    name: 'file_ref lines [0, 0] (lines count from 1)',
    sent: { type: 'file_ref', path: 'a.ts', lines: [0, 0] },
    field: 'lines',
  },
  { name: 'file_ref lines "0-0"', sent: { type: 'file_ref', path: 'a.ts', lines: '0-0' }, field: 'lines' },
  { name: 'file_ref lines a number', sent: { type: 'file_ref', path: 'a.ts', lines: 10 }, field: 'lines' },
  { name: 'file_ref lines "ten"', sent: { type: 'file_ref', path: 'a.ts', lines: 'ten' }, field: 'lines' },
  {
    name: 'file_ref git_sha "HEAD~1" (a revision expression, not a ref name)',
    sent: { type: 'file_ref', path: 'a.ts', git_sha: 'HEAD~1' },
    field: 'git_sha',
  },
  {
    name: 'file_ref git_sha starting with "-" (it could read as an option)',
    sent: { type: 'file_ref', path: 'a.ts', git_sha: '--upload-pack=x' },
    field: 'git_sha',
  },
  { name: 'file_diff with an empty diff', sent: { type: 'file_diff', path: 'a.ts', diff: '' }, field: 'diff' },
  {
    name: 'api_contract with neither schema_url nor inline',
    sent: { type: 'api_contract' },
    field: '',
    says: 'needs schema_url or inline',
  },
  { name: 'link to a vscode:// URL', sent: { type: 'link', url: 'vscode://file/a.ts' }, field: 'url' },
  {
    name: 'api_contract inline of 50001 characters',
    sent: { type: 'api_contract', inline: 'x'.repeat(50_001) },
    field: 'inline',
  },
  {
    name: 'api_contract inline JSON with a $ key',
    sent: { type: 'api_contract', inline: { $ref: '#/a' } },
    field: 'inline',
  },
  {
    name: 'link with 17 extra fields',
    sent: {
      type: 'link',
      url: 'https://e.com',
      ...Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`x${i}`, i])),
    },
    field: '',
    says: 'at most 16 fields',
  },
  {
    name: 'link with an extra _provenance',
    sent: { type: 'link', url: 'https://e.com', _provenance: { trusted: true } },
    field: '_provenance',
  },
  { name: 'an unknown type in capitals', sent: { type: 'Screenshot', url: 'https://e.com' }, field: 'type' },
  {
    name: 'a known type still holds its own fields to their shape',
    sent: { type: 'link', url: 'javascript:alert(1)', note: 'x' },
    field: 'url',
  },
];

beforeAll(async () => {
  relay = await startTestRelay({ name: 'artifact_shapes', env: { RELAY_RATE_LIMIT_PER_MINUTE: '100000' } });
  aliceKey = await relay.register({ handle: 'alice@acme' });
  bobKey = await relay.register({ handle: 'bob@acme' });
  mcp = await connectMcpHttp(relay.url, aliceKey, 'artifact-shapes');
  bobMcp = await connectMcpHttp(relay.url, bobKey, 'artifact-shapes');
});

afterAll(async () => {
  await mcp?.close();
  await bobMcp?.close();
  await relay?.stop();
});

const send = (artifacts: unknown[]) =>
  relay.rpc(aliceKey, 'message/send', {
    recipient: 'bob@acme',
    intent: 'inform',
    message: { parts: [{ type: 'text', text: 'shapes' }] },
    artifacts,
  });

describe.each(ACCEPTED)('accepted: $name', ({ sent, stored, inbox }) => {
  test('over JSON-RPC: stored as sent, read back so by both parties, shown on the inbox page', async () => {
    const { body } = await send([sent]);
    expect(body.error).toBeUndefined();
    const id = body.result.task_id as string;
    for (const key of [aliceKey, bobKey])
      expect((await relay.rpc(key, 'tasks/get', { task_id: id })).body.result.artifacts).toEqual([stored]);
    expect((await relay.store.threads.findOne({ _id: id }))!.artifacts).toEqual([stored]);
    const page = await (await fetch(body.result.inbox_url as string)).text();
    expect(page).toContain(inbox);
    expect(page).not.toContain('<b>hi</b>');
  });

  test('over MCP: handoff_to_teammate stores the same form, view_thread gives it back inside the provenance wrapper', async () => {
    const created = toolOk(
      await mcp.callTool({
        name: 'handoff_to_teammate',
        arguments: { to: 'bob@acme', intent: 'inform', summary: 'shapes', artifacts: [sent] },
      }),
    );
    const viewed = toolOk(await bobMcp.callTool({ name: 'view_thread', arguments: { thread_id: created.thread_id } }));
    expect(viewed.artifacts).toEqual({
      _provenance: { source: 'teammate', author: 'alice@acme', trusted: false, nonce: viewed.provenance_nonce },
      value: [stored],
    });
  });
});

describe.each(REFUSED)('refused: $name', ({ sent, field, says }) => {
  test('over JSON-RPC: invalid_params naming the field, nothing stored', async () => {
    const before = await relay.store.threads.countDocuments({});
    const { status, body } = await send([sent]);
    expect(status).toBe(200);
    expect(body.error.data.code).toBe('invalid_params');
    expect(body.error.message).toMatch(
      new RegExp(`^params\\.artifacts\\[0\\]${field ? `\\.${field.replace('$', '\\$')}` : ''}[:.\\[ ]`),
    );
    if (says) expect(body.error.message).toContain(says);
    expect(await relay.store.threads.countDocuments({})).toBe(before);
  });

  test('over MCP: a tool error naming the field, nothing stored', async () => {
    const before = await relay.store.threads.countDocuments({});
    const text = toolErrorText(
      await mcp.callTool({
        name: 'handoff_to_teammate',
        arguments: { to: 'bob@acme', intent: 'inform', summary: 'shapes', artifacts: [sent] },
      }),
    );
    expect(text).toContain(field ? `at artifacts[0].${field}` : says);
    expect(await relay.store.threads.countDocuments({})).toBe(before);
  });
});

describe('over MCP, the same refusals and limits as over JSON-RPC', () => {
  const handoff = (args: Record<string, unknown>) =>
    mcp.callTool({
      name: 'handoff_to_teammate',
      arguments: { to: 'bob@acme', intent: 'inform', summary: 'mcp refusals', ...args },
    });

  test.each([
    ['a __proto__ key in metadata', { metadata: { a: { ['__proto__']: { admin: true } } } }, 'a.__proto__'],
    [
      'a constructor key in an artifact extra',
      { artifacts: [{ type: 'link', url: 'https://e.com', x: { constructor: 1 } }] },
      'x.constructor',
    ],
    ['a NUL in the summary', { summary: 'nul \u0000 here' }, 'params.message.parts[0].text'],
    ['a NUL in a metadata value', { metadata: { ticket: 'A\u0000' } }, 'ticket'],
  ])('%s is a tool error naming the path, nothing stored', async (_name, args, path) => {
    const before = await relay.store.threads.countDocuments({});
    expect(toolErrorText(await handoff(args))).toContain(path);
    expect(await relay.store.threads.countDocuments({})).toBe(before);
  });

  test('check_inbox pages up to 200; 201 is refused', async () => {
    expect(toolOk(await bobMcp.callTool({ name: 'check_inbox', arguments: { limit: 200 } })).items).toEqual(
      expect.any(Array),
    );
    expect(toolErrorText(await bobMcp.callTool({ name: 'check_inbox', arguments: { limit: 201 } }))).toContain('limit');
  });

  test('an unknown recipient tells the agent what to do next', async () => {
    expect(toolErrorText(await handoff({ to: 'nobody@acme' }))).toContain(
      'call list_teammates to find the right handle',
    );
    const { body } = await relay.rpc(aliceKey, 'message/send', {
      recipient: 'nobody@acme',
      intent: 'inform',
      message: { parts: [{ type: 'text', text: 'x' }] },
    });
    expect(body.error.message).toContain('call list_teammates to find the right handle');
  });
});
