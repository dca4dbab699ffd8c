// Beyond tools, with the SDK's Client against a real relay: completion of handles and thread ids, threads and the inbox
// as resources (subscriptions over stdio here; over /mcp sessions in mcp-http-sessions.test.ts), prompts filled from a thread, and log notifications.
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { connectMcpHttp, toolOk } from '../helpers/mcp-http-client';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { waitUntil } from '../helpers/wait-until';

/** The text of a resource content (the relay's are all text). */
const textOf = (content: { text?: unknown } | object) => String((content as { text?: unknown }).text);

const STDIO = join(__dirname, '..', '..', 'dist', 'mcp', 'stdio.js');
let relay: TestRelay;
const clients: Client[] = [];
let sender: Client;
let recipient: Client;
let stranger: Client;
let recipientKey: string;
let threadId: string;

async function stdioAgent(apiKey: string): Promise<Client> {
  const client = new Client({ name: 'resources-test', version: '1.0.0' });
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

async function http(apiKey: string): Promise<Client> {
  const client = await connectMcpHttp(relay.url, apiKey, 'resources-test');
  clients.push(client);
  return client;
}

beforeAll(async () => {
  relay = await startTestRelay({ name: 'mcp_resources' });
  const senderKey = await relay.register({
    handle: 'api-dev@acme',
    name: 'API developer',
    role: 'backend',
    skills: ['node'],
  });
  recipientKey = await relay.register({
    handle: 'web-dev@acme',
    name: 'Web developer',
    role: 'frontend',
    skills: ['react'],
  });
  const strangerKey = await relay.register({ handle: 'qa@acme', name: 'QA', role: 'qa' });
  [sender, recipient, stranger] = await Promise.all([http(senderKey), http(recipientKey), http(strangerKey)]);
  threadId = toolOk(
    await sender.callTool({
      name: 'handoff_to_teammate',
      arguments: {
        to: 'web-dev@acme',
        intent: 'ask_question',
        summary: 'Users now page <b>by cursor</b>.',
        question: 'Does the web client page anywhere else?',
      },
    }),
  ).thread_id;
});

afterAll(async () => {
  for (const client of clients) await client.close();
  await relay?.stop();
});

test("completion offers the handles and targets a handoff can go to, and the caller's own thread ids", async () => {
  expect(recipient.getServerCapabilities()).toMatchObject({ completions: {}, prompts: {}, resources: {}, logging: {} });
  const to = async (value: string) =>
    (await recipient.complete({ ref: { type: 'ref/prompt', name: 'hand_off' }, argument: { name: 'to', value } }))
      .completion.values;
  expect(await to('')).toEqual(expect.arrayContaining(['api-dev@acme', 'qa@acme', 'role:backend', 'skill:react']));
  expect(await to('WEB')).toEqual(['web-dev@acme']);
  expect(await to('role:f')).toEqual(['role:frontend']);
  expect(await to('nobody')).toEqual([]);

  const ids = async (client: Client, value: string) =>
    (
      await client.complete({
        ref: { type: 'ref/resource', uri: 'handoff://thread/{thread_id}' },
        argument: { name: 'thread_id', value },
      })
    ).completion.values;
  expect(await ids(recipient, threadId.slice(0, 4))).toEqual([threadId]);
  expect(await ids(stranger, '')).toEqual([]);
  const answer = await recipient.complete({
    ref: { type: 'ref/prompt', name: 'answer_handoff' },
    argument: { name: 'thread_id', value: '' },
  });
  expect(answer.completion.values).toEqual([threadId]);
});

test('a thread is a resource its participants read as text and JSON, with teammate text marked; others get not found', async () => {
  toolOk(
    await recipient.callTool({
      name: 'send_message',
      arguments: { thread_id: threadId, body: 'Only in admin/users.tsx' },
    }),
  );
  const { resources } = await recipient.listResources();
  expect(resources).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ uri: 'handoff://inbox', name: 'inbox' }),
      expect.objectContaining({
        uri: `handoff://thread/${threadId}`,
        title: 'ask_question from api-dev@acme to web-dev@acme (pending)',
      }),
    ]),
  );

  const { contents } = await recipient.readResource({ uri: `handoff://thread/${threadId}` });
  expect(contents.map((c) => c.mimeType)).toEqual(['text/plain', 'application/json']);
  const [text, json] = [textOf(contents[0]!), JSON.parse(textOf(contents[1]!))];
  const nonce = json.provenance_nonce as string;
  expect(text).toContain(
    `Summary: <teammate_content nonce="${nonce}" author="api-dev@acme">Users now page &lt;b&gt;by cursor&lt;/b&gt;.</teammate_content nonce="${nonce}">`,
  );
  expect(text).toMatch(
    /#1 from web-dev@acme at .*: <teammate_content nonce="[0-9a-f]+" author="web-dev@acme">Only in admin\/users.tsx</,
  );
  expect(json).toMatchObject({
    thread_id: threadId,
    intent: 'ask_question',
    status: 'pending',
    messages: [{ sequence_no: 1, from: 'web-dev@acme' }],
  });

  const inbox = JSON.parse(textOf((await recipient.readResource({ uri: 'handoff://inbox' })).contents[0]!));
  expect(inbox.received).toEqual([
    expect.objectContaining({ uri: `handoff://thread/${threadId}`, thread_id: threadId, status: 'pending' }),
  ]);
  expect(inbox.sent).toEqual([]);

  await expect(stranger.readResource({ uri: `handoff://thread/${threadId}` })).rejects.toMatchObject({
    code: -32002,
    message: expect.stringContaining('not found'),
  });
  await expect(recipient.readResource({ uri: 'handoff://thread/not-a-uuid' })).rejects.toMatchObject({
    code: -32602,
    message: expect.stringContaining('a thread resource is handoff://thread/<thread id, a UUID>'),
  });
});

test('prompts fill their arguments from the thread and the directory, and refuse what does not fit', async () => {
  const { prompts } = await recipient.listPrompts();
  expect(prompts.map((p) => p.name).sort()).toEqual([
    'answer_handoff',
    'hand_off',
    'review_inbox',
    'review_proposed_action',
  ]);

  const answer = await recipient.getPrompt({ name: 'answer_handoff', arguments: { thread_id: threadId } });
  expect(answer.messages[0]!.content).toMatchObject({
    type: 'resource',
    resource: { uri: `handoff://thread/${threadId}`, mimeType: 'text/plain' },
  });
  expect(JSON.stringify(answer.messages[0]!.content)).toContain('Users now page &lt;b&gt;by cursor');
  expect(answer.messages[1]!.content).toMatchObject({
    type: 'text',
    text: expect.stringContaining('It asks a question: accept_handoff it'),
  });

  const handOff = await sender.getPrompt({
    name: 'hand_off',
    arguments: { to: 'web-dev@acme', work: 'the pagination change' },
  });
  expect(handOff.messages[0]!.content).toMatchObject({
    type: 'text',
    text: expect.stringContaining('Hand this work: the pagination change to web-dev@acme, whose card'),
  });
  const review = await recipient.getPrompt({ name: 'review_inbox' });
  expect(review.messages[0]!.content).toMatchObject({ text: expect.stringContaining(`"thread_id": "${threadId}"`) });

  await expect(
    recipient.getPrompt({ name: 'review_proposed_action', arguments: { thread_id: threadId } }),
  ).rejects.toMatchObject({
    code: -32602,
    message: expect.stringContaining('is an ask_question handoff, not propose_action'),
  });
  await expect(sender.getPrompt({ name: 'hand_off', arguments: { to: 'nobody@acme' } })).rejects.toMatchObject({
    code: -32602,
    message: expect.stringContaining('no teammate nobody@acme'),
  });
  await expect(
    stranger.getPrompt({ name: 'answer_handoff', arguments: { thread_id: threadId } }),
  ).rejects.toMatchObject({ code: -32002 });
});

test("over /mcp, each relay call a tool makes comes back as a log notification on that request's stream", async () => {
  const logs: any[] = [];
  const client = await http(recipientKey);
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params));
  expect(await client.setLoggingLevel('info')).toEqual({});
  toolOk(await client.callTool({ name: 'view_thread', arguments: { thread_id: threadId } }));
  expect(logs).toEqual([
    expect.objectContaining({
      level: 'info',
      logger: 'handoff-relay',
      data: expect.objectContaining({ method: 'tasks/get', thread_id: threadId }),
    }),
  ]);
  await client.callTool({ name: 'decline_handoff', arguments: { thread_id: '00000000-0000-4000-8000-000000000000' } });
  expect(logs[1]).toMatchObject({ level: 'warning', data: { method: 'tasks/update', code: 'thread_not_found' } });
});

test('over stdio, a subscribed thread and the inbox are told when the thread changes, and only what was subscribed', async () => {
  const agent = await stdioAgent(recipientKey);
  expect(agent.getServerCapabilities()?.resources).toMatchObject({ subscribe: true });
  const updated: string[] = [];
  const logs: any[] = [];
  agent.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
  agent.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params));
  expect(await agent.subscribeResource({ uri: `handoff://thread/${threadId}` })).toEqual({});
  expect(await agent.subscribeResource({ uri: 'handoff://inbox' })).toEqual({});

  toolOk(
    await sender.callTool({ name: 'send_message', arguments: { thread_id: threadId, body: 'Also the export page?' } }),
  );
  await waitUntil(
    async () => updated.includes(`handoff://thread/${threadId}`) && updated.includes('handoff://inbox'),
    'resources/updated for the thread and the inbox',
  );

  // Unsubscribed, the thread is not told; the inbox still is. (Both come from one event, the thread's first.)
  updated.length = 0;
  expect(await agent.unsubscribeResource({ uri: `handoff://thread/${threadId}` })).toEqual({});
  toolOk(
    await sender.callTool({ name: 'send_message', arguments: { thread_id: threadId, body: 'And the CSV export.' } }),
  );
  await waitUntil(async () => updated.includes('handoff://inbox'), 'resources/updated for the inbox');
  expect(updated).toEqual(['handoff://inbox']);

  await expect(agent.subscribeResource({ uri: 'test://watched-resource' })).rejects.toMatchObject({
    code: -32602,
    message: expect.stringContaining('only handoff://inbox and handoff://thread/<thread id>'),
  });
  const strangers = toolOk(
    await sender.callTool({
      name: 'handoff_to_teammate',
      arguments: { to: 'qa@acme', intent: 'inform', summary: 'Not yours' },
    }),
  ).thread_id;
  await expect(agent.subscribeResource({ uri: `handoff://thread/${strangers}` })).rejects.toMatchObject({
    code: -32002,
  });

  // The level holds for the connection: at warning, a successful call is not logged, a refused one is.
  logs.length = 0;
  await agent.setLoggingLevel('warning');
  toolOk(await agent.callTool({ name: 'view_thread', arguments: { thread_id: threadId } }));
  await agent.callTool({ name: 'view_thread', arguments: { thread_id: strangers } });
  await waitUntil(async () => logs.length > 0, 'the warning of the refused call');
  expect(logs).toEqual([
    expect.objectContaining({
      level: 'warning',
      data: expect.objectContaining({ method: 'tasks/get', code: 'not_a_participant' }),
    }),
  ]);
});

test('without a session, /mcp has no subscriptions (nothing would carry a later notification)', async () => {
  // The SDK client holds a session (mcp-http-sessions.test.ts); a request without Mcp-Session-Id is served statelessly.
  const response = await fetch(`${relay.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${recipientKey}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'resources/subscribe',
      params: { uri: `handoff://thread/${threadId}` },
    }),
  });
  expect(response.headers.get('mcp-session-id')).toBeNull();
  expect(await response.text()).toContain('"code":-32601');
});
