// End to end: CLI register → stdio MCP server process → relay → BullMQ worker → fake Slack DM → signed button clicks.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { withoutNonce } from '../helpers/provenance-nonce';
import { inboxUrlOf, startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { clickButton, submitView } from '../../scripts/fake-slack/slack-requests';
import { waitUntil } from '../helpers/wait-until';
import { MCP_TOOL_NAMES } from '../helpers/mcp-tool-names';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const SENDER_SLACK = 'U0SENDER1';
const RECIPIENT_SLACK = 'U0123456';
const STRANGER_SLACK = 'U0STRANGE';

let slack: FakeSlack;
let relay: TestRelay;
let mcp: Client;
let recipientKey: string;

async function registerWithCli(args: string[]): Promise<{ stdout: string; apiKey: string }> {
  const { stdout } = await run('node', [join(ROOT, 'dist/scripts/cli.js'), 'register', ...args], {
    env: { ...process.env, RELAY_URL: relay.url, RELAY_ADMIN_KEY: relay.adminKey },
  });
  const apiKey = /^\s+(hr_\S+)$/m.exec(stdout)?.[1];
  if (!apiKey) throw new Error(`no API key in register output:\n${stdout}`);
  return { stdout, apiKey };
}

function accepted(callResult: Awaited<ReturnType<Client['callTool']>>) {
  if (callResult.isError) throw new Error(`tool failed: ${JSON.stringify(callResult.content)}`);
  // Compared without the answer's provenance nonce (the provenance unit tests check the nonces).
  return withoutNonce(callResult.structuredContent as Record<string, any>);
}

beforeAll(async () => {
  slack = await startFakeSlack();
  for (const id of [SENDER_SLACK, RECIPIENT_SLACK, STRANGER_SLACK]) slack.addUser(id);
  relay = await startTestRelay({ name: 'e2e_dm', slack });

  const sender = await registerWithCli([
    '--handle',
    'api-dev@acme',
    '--name',
    'API developer',
    '--role',
    'backend',
    '--slack-user',
    SENDER_SLACK,
  ]);
  const recipient = await registerWithCli([
    '--handle',
    'web-dev@acme',
    '--name',
    'Web developer',
    '--role',
    'frontend',
    '--slack-user',
    RECIPIENT_SLACK,
  ]);
  recipientKey = recipient.apiKey;
  await registerWithCli([
    '--handle',
    'stranger@acme',
    '--name',
    'Someone else',
    '--role',
    'qa',
    '--slack-user',
    STRANGER_SLACK,
  ]);

  mcp = new Client({ name: 'e2e-agent', version: '1.0.0' });
  await mcp.connect(
    new StdioClientTransport({
      // What `register` prints for MCP clients. (`npx handoff-mcp` works too, but npm installs this package into
      // its npx cache and rebuilds it on first use per checkout, and concurrent first uses can leave that cache
      // half-written: not what a test of the relay should hang on.)
      command: process.execPath,
      args: [join(ROOT, 'dist/mcp/stdio.js')],
      cwd: ROOT,
      env: {
        PATH: process.env.PATH!,
        HOME: process.env.HOME ?? '/root',
        RELAY_URL: relay.url,
        RELAY_API_KEY: sender.apiKey,
      },
      stderr: 'pipe',
    }),
  );
});

afterAll(async () => {
  await mcp?.close();
  await relay?.stop();
  await slack?.close();
});

test('register prints the API key once and a paste-ready MCP configuration', async () => {
  const { stdout, apiKey } = await registerWithCli(['--handle', 'docs@acme', '--name', 'Docs', '--role', 'docs']);
  expect(stdout.split(apiKey).length - 1).toBeGreaterThanOrEqual(1);
  const stdioScript = join(ROOT, 'dist/mcp/stdio.js');
  expect(stdout).toContain(
    `claude mcp add handoff-relay --env RELAY_URL=${relay.url} --env RELAY_API_KEY=${apiKey} -- node ${stdioScript}`,
  );
  expect(stdout).toContain(
    `claude mcp add --transport http handoff-relay ${relay.url}/mcp --header "Authorization: Bearer ${apiKey}"`,
  );
  // Sections are separated by blank lines: a title line, then the block four spaces in.
  const blocks = stdout.split('\n\n').map((section) => {
    const [title, ...body] = section.trimEnd().split('\n');
    return { title: title.trim(), body: body.map((l) => l.slice(4)).join('\n') };
  });
  const block = (title: string) => blocks.find((b) => b.title === title)?.body ?? '';
  const entry = (title: string) => JSON.parse(block(title)).mcpServers['handoff-relay'];
  const stdioEntry = { command: 'node', args: [stdioScript], env: { RELAY_URL: relay.url, RELAY_API_KEY: apiKey } };
  const httpEntry = { url: `${relay.url}/mcp`, headers: { Authorization: `Bearer ${apiKey}` } };
  expect(entry('Cursor (.cursor/mcp.json), stdio:')).toEqual(stdioEntry);
  expect(entry('Cursor (.cursor/mcp.json), Streamable HTTP:')).toEqual(httpEntry);
  expect(entry('Any client reading .mcp.json, stdio:')).toEqual({ type: 'stdio', ...stdioEntry });
  expect(entry('Any client reading .mcp.json, Streamable HTTP:')).toEqual({ type: 'http', ...httpEntry });
  expect(block('Codex (~/.codex/config.toml), stdio:')).toContain(
    `env = { RELAY_URL = "${relay.url}", RELAY_API_KEY = "${apiKey}" }`,
  );
  // Stored only as a hash: the raw key is nowhere in the database.
  const keys = await relay.store.apiKeys.find({}).toArray();
  expect(JSON.stringify(keys)).not.toContain(apiKey);
});

test('a handoff sent through the stdio MCP server becomes a Slack DM whose Accept and Complete buttons work', async () => {
  const tools = await mcp.listTools();
  expect(tools.tools.map((t) => t.name).sort()).toEqual([...MCP_TOOL_NAMES]);

  const teammates = accepted(await mcp.callTool({ name: 'list_teammates', arguments: { role: 'frontend' } }));
  const byWebDev = { source: 'teammate', author: 'web-dev@acme', trusted: false };
  expect(teammates.teammates).toEqual([
    {
      handle: 'web-dev@acme',
      name: '<teammate_content author="web-dev@acme">Web developer</teammate_content>',
      role: '<teammate_content author="web-dev@acme">frontend</teammate_content>',
      skills: { _provenance: byWebDev, value: [] },
      repos_owned: { _provenance: byWebDev, value: [] },
    },
  ]);

  const sentAt = Date.now();
  const created = accepted(
    await mcp.callTool({
      name: 'handoff_to_teammate',
      arguments: {
        to: 'web-dev@acme',
        intent: 'ask_question',
        summary: 'I refactored /users: it now returns { items, next_cursor }. <!channel> please update the web client.',
        question: 'Does the web client page through users anywhere else?',
        artifacts: [
          {
            type: 'file_diff',
            path: 'src/api/users.ts',
            diff: '@@ -10,1 +10,1 @@\n- return users;\n+ return { items: users, next_cursor };',
          },
          { type: 'file_ref', path: 'apps/web/src/users.tsx', lines: '12-40', git_sha: 'abc1234' },
          { type: 'test_command', command: 'npm test -- users', cwd: 'apps/web' },
          { type: 'api_contract', schema_url: 'https://example.com/openapi.yaml' },
          { type: 'link', url: 'https://example.com/pr/42', title: 'PR #42' },
        ],
        metadata: { ticket: 'WEB-7' },
      },
    }),
  );
  expect(created).toMatchObject({
    status: 'pending',
    recipient: 'web-dev@acme',
    inbox_url: inboxUrlOf(relay.url, created.thread_id, 'api-dev@acme'),
  });
  expect(created.thread_id).toMatch(/^[0-9a-f-]{36}$/);

  const channel = slack.imChannelId(RECIPIENT_SLACK);
  const post = await slack.waitFor('chat.postMessage', (c) => c.args.channel === channel);
  // Reported, not asserted: speed is measured by npm run bench.
  const deliveredMs = post.at - sentAt;
  process.stderr.write(`handoff → fake Slack DM in ${deliveredMs} ms\n`);
  const dmText = JSON.stringify(post.args.blocks);
  expect(dmText).toContain('Handoff from API developer');
  expect(dmText).toContain('Asks you a question');
  expect(dmText).toContain('&lt;!channel&gt;'); // escaped: no channel-wide ping from teammate text
  expect(dmText).not.toContain('<!channel>');
  expect(dmText).toContain('Does the web client page through users anywhere else?');
  for (const piece of [
    'src/api/users.ts',
    'apps/web/src/users.tsx',
    'lines 12-40',
    'npm test -- users',
    'openapi.yaml',
    'PR #42',
  ]) {
    expect(dmText).toContain(piece);
  }
  expect(String(post.args.text)).toContain('API developer');
  const buttons = (post.args.blocks as any[]).flatMap((b) => (b.type === 'actions' ? b.elements : []));
  const accept = buttons.find((b) => b.action_id === 'handoff_accept');
  expect(accept).toBeDefined();
  const ts = String(post.response.ts);
  await waitUntil(
    async () => (await relay.store.threads.findOne({ _id: created.thread_id }))?.slack,
    'the DM to be recorded on the thread',
  );
  const eventsUrl = `${relay.url}/slack/events`;

  // Someone other than the recipient: ephemeral explanation, nothing changes.
  const strangerClick = await clickButton(eventsUrl, relay.signingSecret, {
    user: STRANGER_SLACK,
    responseUrl: slack.responseUrl(STRANGER_SLACK),
    channel,
    messageTs: ts,
    actionId: 'handoff_accept',
    value: accept.value,
  });
  expect(strangerClick.status).toBe(200);
  const strangerNote = await slack.waitFor(
    'response_url',
    (c) => c.args.response_type === 'ephemeral' && c.args.response_url === STRANGER_SLACK,
  );
  expect(String(strangerNote.args.text)).toMatch(/not a participant|Only the recipient/);
  expect((await relay.rpc(recipientKey, 'tasks/get', { task_id: created.thread_id })).body.result.status).toBe(
    'pending',
  );

  // A click on a message that is not this thread's DM: stale.
  await clickButton(eventsUrl, relay.signingSecret, {
    user: RECIPIENT_SLACK,
    responseUrl: slack.responseUrl(RECIPIENT_SLACK),
    channel,
    messageTs: '1111111111.000001',
    actionId: 'handoff_accept',
    value: accept.value,
  });
  const staleNote = await slack.waitFor(
    'response_url',
    (c) => c.args.response_url === RECIPIENT_SLACK && /out of date/.test(String(c.args.text)),
  );
  expect(staleNote).toBeDefined();

  // The recipient accepts: the same message is updated in place, showing who and when, with a Complete button.
  const acceptClick = await clickButton(eventsUrl, relay.signingSecret, {
    user: RECIPIENT_SLACK,
    responseUrl: slack.responseUrl(RECIPIENT_SLACK),
    channel,
    messageTs: ts,
    actionId: 'handoff_accept',
    value: accept.value,
  });
  expect(acceptClick.status).toBe(200);
  const acceptedUpdate = await slack.waitFor('chat.update', (c) =>
    JSON.stringify(c.args.blocks).includes('Accepted by'),
  );
  expect(acceptedUpdate.args).toMatchObject({ channel, ts });
  expect(JSON.stringify(acceptedUpdate.args.blocks)).toContain(`<@${RECIPIENT_SLACK}>`);
  const complete = (acceptedUpdate.args.blocks as any[])
    .flatMap((b) => (b.type === 'actions' ? b.elements : []))
    .find((b) => b.action_id === 'handoff_complete');
  expect(complete).toBeDefined();

  // A second Accept click (old button) changes nothing and is explained.
  await clickButton(eventsUrl, relay.signingSecret, {
    user: RECIPIENT_SLACK,
    responseUrl: slack.responseUrl(RECIPIENT_SLACK),
    channel,
    messageTs: ts,
    actionId: 'handoff_accept',
    value: accept.value,
  });
  const doubleNote = await slack.waitFor(
    'response_url',
    (c) => c.args.response_url === RECIPIENT_SLACK && /now accepted/.test(String(c.args.text)),
  );
  expect(doubleNote).toBeDefined();

  // Complete opens a modal for the result; submitting it completes the handoff.
  const triggerId = slack.triggerId();
  await clickButton(eventsUrl, relay.signingSecret, {
    user: RECIPIENT_SLACK,
    responseUrl: slack.responseUrl(RECIPIENT_SLACK),
    channel,
    messageTs: ts,
    actionId: 'handoff_complete',
    value: complete.value,
    triggerId,
  });
  const modal = await slack.waitFor('views.open', (c) => c.args.trigger_id === triggerId);
  const submitted = await submitView(eventsUrl, relay.signingSecret, {
    user: RECIPIENT_SLACK,
    view: modal.response.view as Record<string, unknown>,
    values: { complete_summary: { summary: 'Web client pages with next_cursor now' }, complete_links: { links: null } },
  });
  expect(submitted).toEqual({ status: 200, text: '' });
  const completedUpdate = await slack.waitFor('chat.update', (c) =>
    JSON.stringify(c.args.blocks).includes('Completed by'),
  );
  expect(completedUpdate.args).toMatchObject({ channel, ts });
  expect(slack.messages.get(channel)).toHaveLength(1);
  // The sender is linked too: one DM of their own, following the same handoff.
  const senderChannel = slack.imChannelId(SENDER_SLACK);
  await waitUntil(
    async () =>
      JSON.stringify(slack.messages.get(senderChannel)?.[0]?.blocks ?? '').includes('Completed by') || undefined,
    'the sender DM to show the completion',
  );
  // One DM each; the sender also hears of the accept and the completion, each once, in a reply under theirs.
  const notices = await waitUntil(async () => {
    const replies = (slack.messages.get(senderChannel) ?? []).filter((m) => m.thread_ts);
    return replies.length === 2 ? replies : undefined;
  }, "the sender's two notices");
  expect(notices.map((m) => m.text)).toEqual([
    expect.stringMatching(/^Web developer accepted your handoff “I refactored \/users/),
    expect.stringMatching(/^Web developer completed your handoff “I refactored \/users/),
  ]);
  expect((slack.messages.get(senderChannel) ?? []).filter((m) => !m.thread_ts)).toHaveLength(1);
  expect(slack.messages.get(channel)).toHaveLength(1);
  expect(
    slack
      .callsTo('chat.postMessage')
      .map((c) => c.args.channel)
      .sort(),
  ).toEqual([channel, senderChannel, senderChannel, senderChannel].sort());

  const thread = (await relay.rpc(recipientKey, 'tasks/get', { task_id: created.thread_id })).body.result;
  expect(thread).toMatchObject({
    status: 'completed',
    intent: 'ask_question',
    metadata: { ticket: 'WEB-7', question: expect.any(String) },
  });
  expect(thread.metadata).not.toHaveProperty('client_idempotency_key');
  expect(thread.status_history.map((h: any) => [h.status, h.by, h.via])).toEqual([
    ['pending', 'api-dev@acme', 'mcp'],
    ['accepted', 'web-dev@acme', 'slack'],
    ['completed', 'web-dev@acme', 'slack'],
  ]);

  const viewed = accepted(await mcp.callTool({ name: 'view_thread', arguments: { thread_id: created.thread_id } }));
  expect(viewed).toMatchObject({
    thread_id: created.thread_id,
    status: 'completed',
    sender: { handle: 'api-dev@acme' },
    recipient: { handle: 'web-dev@acme' },
  });
  // Through the stdio server too, teammate text comes back wrapped and escaped, structured values marked.
  expect(viewed.summary).toBe(
    '<teammate_content author="api-dev@acme">I refactored /users: it now returns { items, next_cursor }. &lt;!channel&gt; please update the web client.</teammate_content>',
  );
  expect(viewed.metadata).toMatchObject({
    _provenance: { source: 'teammate', author: 'api-dev@acme', trusted: false },
    value: { ticket: 'WEB-7' },
  });
  expect(viewed.metadata.value).not.toHaveProperty('client_idempotency_key');
  expect(viewed.artifacts.value).toHaveLength(5);
});

test('MCP tool errors carry the relay message and nothing is stored', async () => {
  const before = await relay.store.threads.countDocuments();
  const unknown = await mcp.callTool({
    name: 'handoff_to_teammate',
    arguments: { to: 'nobody@acme', intent: 'inform', summary: 'hi' },
  });
  expect(unknown.isError).toBe(true);
  expect(JSON.stringify(unknown.content)).toContain('recipient_not_found (-32004)');

  const missingAction = await mcp.callTool({
    name: 'handoff_to_teammate',
    arguments: { to: 'web-dev@acme', intent: 'propose_action', summary: 'do it' },
  });
  expect(missingAction.isError).toBe(true);
  expect(JSON.stringify(missingAction.content)).toContain('proposed_action is required');
  expect(await relay.store.threads.countDocuments()).toBe(before);
});
