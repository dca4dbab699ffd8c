// Every MCP tool over the real stdio server process (dist/mcp/stdio.js), which reaches the relay over HTTP:
// the same lifecycle and error paths the Streamable HTTP test runs in process.
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { toolErrorText as errorText, toolOk as ok } from '../helpers/mcp-http-client';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { MCP_TOOL_NAMES } from '../helpers/mcp-tool-names';

const STDIO = join(__dirname, '..', '..', 'dist', 'mcp', 'stdio.js');
let relay: TestRelay;
const clients: Client[] = [];

async function stdioAgent(apiKey: string): Promise<Client> {
  const client = new Client({ name: 'stdio-tools-test', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [STDIO],
      env: { PATH: process.env.PATH!, RELAY_URL: relay.url, RELAY_API_KEY: apiKey },
      stderr: 'pipe',
    }),
  );
  clients.push(client);
  return client;
}

let sender: Client;
let recipient: Client;
let stranger: Client;

beforeAll(async () => {
  relay = await startTestRelay({ name: 'mcp_stdio_tools' });
  sender = await stdioAgent(await relay.register({ handle: 'api-dev@acme', name: 'API developer' }));
  recipient = await stdioAgent(await relay.register({ handle: 'web-dev@acme', name: 'Web developer' }));
  stranger = await stdioAgent(await relay.register({ handle: 'qa@acme', name: 'QA' }));
});

afterAll(async () => {
  for (const client of clients) await client.close();
  await relay?.stop();
});

test('the stdio server offers all ten tools', async () => {
  const names = (await sender.listTools()).tools.map((t) => t.name).sort();
  expect(names).toEqual([...MCP_TOOL_NAMES]);
});

test('a handoff runs its whole life through stdio tools, and each refusal carries the relay code', async () => {
  const { thread_id } = ok(
    await sender.callTool({
      name: 'handoff_to_teammate',
      arguments: {
        to: 'web-dev@acme',
        intent: 'ask_question',
        summary: 'Cursor or offset?',
        question: 'Which pagination?',
      },
    }),
  );
  const inbox = ok(await recipient.callTool({ name: 'check_inbox', arguments: {} }));
  expect(inbox.items.map((i: any) => i.thread_id)).toEqual([thread_id]);
  expect(errorText(await stranger.callTool({ name: 'view_thread', arguments: { thread_id } }))).toContain(
    'not_a_participant (-32005)',
  );
  expect(errorText(await recipient.callTool({ name: 'complete_handoff', arguments: { thread_id } }))).toContain(
    'invalid_transition (-32008)',
  );
  expect(errorText(await sender.callTool({ name: 'accept_handoff', arguments: { thread_id } }))).toContain(
    'not_authorized_transition (-32009)',
  );

  expect(
    ok(await recipient.callTool({ name: 'send_message', arguments: { thread_id, body: 'Cursor.' } })).sequence_no,
  ).toBe(1);
  expect(ok(await recipient.callTool({ name: 'accept_handoff', arguments: { thread_id } }))).toMatchObject({
    accepted: true,
    status: 'accepted',
  });
  expect(
    ok(await recipient.callTool({ name: 'complete_handoff', arguments: { thread_id, result_summary: 'Done' } })),
  ).toMatchObject({ status: 'completed' });
  expect(
    errorText(await recipient.callTool({ name: 'send_message', arguments: { thread_id, body: 'late' } })),
  ).toContain('thread_terminal (-32007)');

  const thread = ok(await sender.callTool({ name: 'view_thread', arguments: { thread_id } }));
  expect(thread.status).toBe('completed');
  expect(thread.messages).toHaveLength(1);
  expect(thread.status_history.map((h: any) => [h.status, h.via])).toEqual([
    ['pending', 'mcp'],
    ['accepted', 'mcp'],
    ['completed', 'mcp'],
  ]);

  const other = ok(
    await sender.callTool({
      name: 'handoff_to_teammate',
      arguments: { to: 'web-dev@acme', intent: 'inform', summary: 'Not for you after all' },
    }),
  );
  expect(
    ok(
      await recipient.callTool({
        name: 'decline_handoff',
        arguments: { thread_id: other.thread_id, reason: 'Not mine' },
      }),
    ),
  ).toMatchObject({ status: 'declined' });
});

test('draft_proposed_action attaches the receiver’s draft over stdio', async () => {
  const { thread_id } = ok(
    await sender.callTool({
      name: 'handoff_to_teammate',
      arguments: {
        to: 'web-dev@acme',
        intent: 'propose_action',
        summary: 'Rename',
        proposed_action: {
          description: 'Rename users to items',
          target_files: ['apps/web/users.tsx'],
          rationale: 'API changed',
        },
      },
    }),
  );
  const brief = ok(await recipient.callTool({ name: 'draft_proposed_action', arguments: { thread_id } }));
  expect(brief.drafting_brief).toEqual(expect.any(String));
  const drafted = ok(
    await recipient.callTool({ name: 'draft_proposed_action', arguments: { thread_id, draft_diff: '-users\n+items' } }),
  );
  expect(drafted.attached.sequence_no).toBe(1);
  expect(
    errorText(
      await recipient.callTool({
        name: 'handoff_to_teammate',
        arguments: { to: 'nobody@acme', intent: 'inform', summary: 'x' },
      }),
    ),
  ).toContain('recipient_not_found (-32004)');
});
