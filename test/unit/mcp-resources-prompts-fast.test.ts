// The MCP server's resources, prompts, completions and subscriptions through a real SDK Client on InMemoryTransport,
// against a scripted relay: what each reads from the relay, what it answers, and a relay refusal as an MCP error.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { EventsQuery } from '../../mcp/relay-client';
import {
  apiDev,
  ScriptedRelayClient,
  webDev,
  wireItem,
  wireThread,
  wireThreadDoc,
} from '../fakes/scripted-relay-client';
import { connectInMemory } from '../helpers/mcp-in-memory-client';
import { waitUntil } from '../helpers/wait-until';

let relay: ScriptedRelayClient;
let client: Client;
let close: () => Promise<void>;

async function connect(opts: { subscriptions?: boolean } = {}): Promise<void> {
  ({ client, close } = await connectInMemory(relay, opts));
}

beforeEach(() => {
  relay = new ScriptedRelayClient();
});

afterEach(() => close());

const received = wireThreadDoc();
const sent = wireThreadDoc({ from: webDev.handle, to: apiDev.handle, summary: 'Back to you' });
/** tasks/list answering each box from its role. */
const boxes = (params: Record<string, unknown>) => ({
  items: [(params.filter as { role: string }).role === 'recipient' ? wireItem(received, 1) : wireItem(sent)],
});

/** What a resource content holds as text (these resources have no blobs). */
const contentText = (content: { uri: string }) => ('text' in content ? String(content.text) : '');

const textOf = (message: { content: { type: string; text?: string } }) => message.content.text ?? '';

describe('resources', () => {
  test('resources/list names the inbox and each thread of both boxes, in the relay’s words only', async () => {
    await connect();
    relay.on('tasks/list', boxes);
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual([
      'handoff://inbox',
      `handoff://thread/${received._id}`,
      `handoff://thread/${sent._id}`,
    ]);
    expect(resources[1]).toMatchObject({
      title: `inform from ${apiDev.handle} to ${webDev.handle} (pending)`,
      description: expect.stringContaining('1 unread message(s)'),
    });
    expect(JSON.stringify(resources)).not.toContain(received.summary);
  });

  test('handoff://inbox reads both boxes, each item with its URI and its preview marked', async () => {
    await connect();
    relay.on('tasks/list', boxes);
    const { contents } = await client.readResource({ uri: 'handoff://inbox' });
    const inbox = JSON.parse(contentText(contents[0]));
    expect(relay.calls.map((c) => c.params)).toEqual([
      { filter: { role: 'recipient' } },
      { filter: { role: 'sender' } },
    ]);
    expect(inbox.received).toEqual([
      expect.objectContaining({
        uri: `handoff://thread/${received._id}`,
        summary_preview: expect.stringMatching(/^<teammate_content nonce="[0-9a-f]{32}" author="api-dev@acme">/),
      }),
    ]);
    expect(inbox.sent[0].thread_id).toBe(sent._id);
  });

  test('a thread reads as text and as the view_thread JSON', async () => {
    await connect();
    relay.on('tasks/get', wireThread(received));
    const { contents } = await client.readResource({ uri: `handoff://thread/${received._id}` });
    expect(contents.map((c) => c.mimeType)).toEqual(['text/plain', 'application/json']);
    expect(contentText(contents[0])).toContain(`Handoff thread ${received._id} (inform, pending)`);
    expect(contentText(contents[0])).toContain(`From: ${apiDev.handle}`);
    expect(JSON.parse(contentText(contents[1]))).toMatchObject({ thread_id: received._id, status: 'pending' });
    expect(relay.calls).toEqual([{ method: 'tasks/get', params: { task_id: received._id } }]);
  });

  test('refused: a thread that is not the caller’s is not found (-32002); a URI that names no thread is invalid', async () => {
    await connect();
    relay.refuse('tasks/get', 'not_a_participant', 'You are neither the sender nor the recipient');
    await expect(client.readResource({ uri: `handoff://thread/${received._id}` })).rejects.toMatchObject({
      code: -32002,
      message: expect.stringContaining(`Thread ${received._id} not found`),
    });
    await expect(client.readResource({ uri: 'handoff://thread/not-a-uuid' })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('a thread resource is handoff://thread/<thread id, a UUID>'),
    });
    expect(relay.calls).toHaveLength(1);
  });

  test('a subscribed thread is told when the event feed has an event of it; an unknown URI cannot be subscribed', async () => {
    await connect({ subscriptions: true });
    relay.on('tasks/get', wireThread(received));
    let polls = 0;
    relay.onEvents(async (query: EventsQuery) => {
      if (query.wait_seconds === 0) return { events: [], cursor: '7' };
      polls += 1;
      if (polls === 1)
        return {
          events: [{ cursor: '8', event_id: 'e8', type: 'thread.message', thread_id: received._id, at: 'now' }],
          cursor: '8',
        };
      // Later polls wait until the subscription ends (close aborts them), as a long poll with nothing new does.
      await new Promise((resolve) => query.signal?.addEventListener('abort', resolve));
      return { events: [], cursor: '8' };
    });
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
    expect(await client.subscribeResource({ uri: `handoff://thread/${received._id}` })).toEqual({});
    await waitUntil(async () => updated.length > 0, 'the thread’s update');
    expect(updated).toEqual([`handoff://thread/${received._id}`]);
    expect(relay.eventQueries.slice(0, 2)).toEqual([{ wait_seconds: 0 }, { since: '7', wait_seconds: 25 }]);
    await expect(client.subscribeResource({ uri: 'test://other' })).rejects.toMatchObject({ code: -32602 });
  });
});

/** The prompts this file covers: the listing test fails for a prompt the server offers without one. */
const coveredPrompts = new Set<string>();
function describePrompt(name: string, tests: () => void): void {
  coveredPrompts.add(name);
  describe(`prompt ${name}`, tests);
}

test('every prompt prompts/list offers has a test in this file', async () => {
  await connect();
  const { prompts } = await client.listPrompts();
  expect(prompts.map((p) => p.name).sort()).toEqual([...coveredPrompts].sort());
});

describePrompt('hand_off', () => {
  test('to a handle: the card comes from agents/list, marked; `to` completes from handles and targets', async () => {
    await connect();
    relay.on('agents/list', { teammates: [{ ...webDev, skills: ['react'], repos_owned: ['apps/web/'] }] });
    const prompt = await client.getPrompt({
      name: 'hand_off',
      arguments: { to: webDev.handle, work: 'the /users paging' },
    });
    const text = textOf(prompt.messages[0]);
    expect(text).toContain('Hand this work: the /users paging to web-dev@acme, whose card');
    expect(text).toContain('- to: "web-dev@acme"');
    const { completion } = await client.complete({
      ref: { type: 'ref/prompt', name: 'hand_off' },
      argument: { name: 'to', value: 'r' },
    });
    expect(completion.values).toEqual(['role:frontend']);
  });

  test('refused: a handle nobody has is named; a role target needs no directory read', async () => {
    await connect();
    relay.on('agents/list', { teammates: [] });
    await expect(client.getPrompt({ name: 'hand_off', arguments: { to: 'nobody@acme' } })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('to: no teammate nobody@acme'),
    });
    const prompt = await client.getPrompt({ name: 'hand_off', arguments: { to: 'role:frontend' } });
    expect(textOf(prompt.messages[0])).toContain('the target role:frontend');
    expect(relay.methods()).toEqual(['agents/list']);
  });
});

describePrompt('answer_handoff', () => {
  test('embeds the thread and gives the next steps of its intent', async () => {
    await connect();
    relay.on('tasks/get', wireThread(received));
    const prompt = await client.getPrompt({ name: 'answer_handoff', arguments: { thread_id: received._id } });
    expect(prompt.messages[0].content).toMatchObject({
      type: 'resource',
      resource: { uri: `handoff://thread/${received._id}`, mimeType: 'text/plain' },
    });
    expect(textOf(prompt.messages[1])).toContain('It is for your information: accept_handoff it');
  });

  test('refused: a thread that is not the caller’s is not found', async () => {
    await connect();
    relay.refuse('tasks/get', 'thread_not_found', 'No thread');
    await expect(
      client.getPrompt({ name: 'answer_handoff', arguments: { thread_id: received._id } }),
    ).rejects.toMatchObject({ code: -32002 });
  });
});

describePrompt('review_proposed_action', () => {
  test('lists the target files to check the diff against', async () => {
    await connect();
    const doc = wireThreadDoc({
      intent: 'propose_action',
      proposed_action: { description: 'Page users', target_files: ['apps/web/users.ts'], rationale: 'paging' },
    });
    relay.on('tasks/get', wireThread(doc));
    const prompt = await client.getPrompt({ name: 'review_proposed_action', arguments: { thread_id: doc._id } });
    expect(textOf(prompt.messages[1])).toContain('Read the target files ("apps/web/users.ts")');
  });

  test('refused: a handoff that proposes no action points to answer_handoff', async () => {
    await connect();
    relay.on('tasks/get', wireThread(received));
    await expect(
      client.getPrompt({ name: 'review_proposed_action', arguments: { thread_id: received._id } }),
    ).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('is an inform handoff, not propose_action; use the answer_handoff prompt'),
    });
  });
});

describePrompt('review_inbox', () => {
  test('reads what waits for the caller and lists it marked', async () => {
    await connect();
    relay.on('tasks/list', { items: [wireItem(received)] });
    const prompt = await client.getPrompt({ name: 'review_inbox' });
    expect(relay.calls[0].params).toEqual({
      filter: { role: 'recipient', status: ['pending', 'unclaimed', 'accepted'] },
      page: { limit: 50 },
    });
    expect(textOf(prompt.messages[0])).toContain('1 handoff(s) are waiting for you');
    expect(textOf(prompt.messages[0])).toContain(received._id);
  });

  test('an empty inbox says so; a relay that cannot list is an error in words', async () => {
    await connect();
    relay.on('tasks/list', { items: [] });
    expect(textOf((await client.getPrompt({ name: 'review_inbox' })).messages[0])).toBe(
      'Nothing is waiting for you in the handoff inbox. Tell me so.',
    );
    relay.refuse('tasks/list', 'unavailable', 'The relay cannot list your threads right now');
    await expect(client.getPrompt({ name: 'review_inbox' })).rejects.toMatchObject({
      message: expect.stringContaining('The relay cannot list your threads right now'),
    });
  });
});
