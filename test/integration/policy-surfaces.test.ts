// One policy decision on every surface that creates a handoff: the same require_approval hold (and the same deny
// in the same words) over MCP stdio (the built dist/mcp/stdio.js, real SDK client), MCP Streamable HTTP, JSON-RPC
// message/send, A2A SendMessage (@a2a-js/sdk client, GetTask after), Slack /handoff and the Slack new-handoff modal.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Role, TaskState, type Message } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  createAuthenticatingFetchWithRetry,
  type Client as A2aClient,
} from '@a2a-js/sdk/client';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { NEW_HANDOFF_CALLBACK_ID } from '../../bot/views/new-handoff-modal';
import type { ThreadDoc } from '../../relay-core/domain/documents';
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { text } from '../helpers/handoffs';
import { connectMcpHttp, type CallResult } from '../helpers/mcp-http-client';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { sendSlashCommand, submitViewState } from '../../scripts/fake-slack/slack-requests';
import { waitUntil } from '../helpers/wait-until';

const STDIO = join(__dirname, '..', '..', 'dist', 'mcp', 'stdio.js');
const U = { sender: 'U0PSSENDER', held: 'U0PSHELD', denied: 'U0PSDENIED', lead: 'U0PSLEAD' };

const POLICY = `
rules:
  - { id: held-needs-lead, match: { action: handoff.create, recipient: { handle: held@acme } }, effect: require_approval, approvers: [recipient_lead] }
  - { id: no-handoffs-to-denied, match: { action: handoff.create, recipient: { handle: denied@acme } }, effect: deny, reason: denied@acme is on leave until Monday }
`;

let slack: FakeSlack;
let relay: TestRelay;
let senderKey: string;
let heldKey: string;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  slack = await startFakeSlack();
  for (const user of Object.values(U)) slack.addUser(user);
  relay = await startTestRelay({ name: 'policy_surfaces', slack });
  await relay.register({ handle: 'lead@acme', slack_user_id: U.lead });
  senderKey = await relay.register({ handle: 'sender@acme', slack_user_id: U.sender });
  heldKey = await relay.register({ handle: 'held@acme', slack_user_id: U.held, lead: 'lead@acme' });
  await relay.register({ handle: 'denied@acme', slack_user_id: U.denied });
  expect((await relay.rest('PUT', '/admin/policy', relay.adminKey, { source: POLICY })).status).toBe(200);
});

afterAll(async () => {
  for (const close of closers) await close();
  await relay?.stop();
  await slack?.close();
});

/** What a surface answered to one create: held (with the approvers it named) or refused (with the words it showed). */
type Outcome = { kind: 'held'; approvers: string[]; rule_id?: string } | { kind: 'refused'; words: string };

interface Surface {
  name: string;
  /** The `via` the relay records for it. */
  via: string;
  create(to: string, summary: string): Promise<Outcome>;
}

function mcpOutcome(result: CallResult): Outcome {
  if (result.isError)
    return { kind: 'refused', words: (result.content as Array<{ text: string }>).map((c) => c.text).join('\n') };
  const answer = result.structuredContent as Record<string, any>;
  expect(answer.status).toBe('awaiting_approval');
  return { kind: 'held', approvers: answer.approvers };
}

async function stdioClient(): Promise<McpClient> {
  const client = new McpClient({ name: 'policy-surfaces', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [STDIO],
      env: { PATH: process.env.PATH!, RELAY_URL: relay.url, RELAY_API_KEY: senderKey },
      stderr: 'pipe',
    }),
  );
  closers.push(() => client.close());
  return client;
}

async function a2aClient(): Promise<A2aClient> {
  const fetchImpl = createAuthenticatingFetchWithRetry(fetch, {
    headers: async () => ({ Authorization: `Bearer ${senderKey}` }),
    shouldRetryWithHeaders: async () => undefined,
  });
  const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
  });
  return new ClientFactory(options).createFromUrl(relay.url);
}

const slackUserOf = (handle: string) => (handle === 'held@acme' ? U.held : U.denied);
let slackCalls = 0;

const surfaces: Surface[] = [
  {
    name: 'MCP stdio (dist/mcp/stdio.js)',
    via: 'mcp',
    async create(to, summary) {
      const client = await stdioClient();
      return mcpOutcome(
        await client.callTool({ name: 'handoff_to_teammate', arguments: { to, intent: 'inform', summary } }),
      );
    },
  },
  {
    name: 'MCP Streamable HTTP',
    via: 'mcp',
    async create(to, summary) {
      const client = await connectMcpHttp(relay.url, senderKey);
      try {
        return mcpOutcome(
          await client.callTool({ name: 'handoff_to_teammate', arguments: { to, intent: 'inform', summary } }),
        );
      } finally {
        await client.close();
      }
    },
  },
  {
    name: 'JSON-RPC message/send',
    via: 'a2a',
    async create(to, summary) {
      const { body } = await relay.rpc(senderKey, 'message/send', {
        recipient: to,
        intent: 'inform',
        message: text(summary),
      });
      if (body.error) return { kind: 'refused', words: body.error.message };
      expect(body.result.status.state).toBe('awaiting_approval');
      return { kind: 'held', approvers: body.result.approval.approvers, rule_id: body.result.approval.rule_id };
    },
  },
  {
    name: 'A2A SendMessage (@a2a-js/sdk), then GetTask',
    via: 'a2a',
    async create(to, summary) {
      const client = await a2aClient();
      const message: Message = {
        messageId: randomUUID(),
        contextId: '',
        taskId: '',
        role: Role.ROLE_USER,
        parts: [{ content: { $case: 'text', value: summary }, metadata: undefined, filename: '', mediaType: '' }],
        metadata: { recipient: to, intent: 'inform' },
        extensions: [],
        referenceTaskIds: [],
      };
      let result;
      try {
        result = await client.sendMessage({ tenant: '', message, configuration: undefined, metadata: undefined });
      } catch (error) {
        return { kind: 'refused', words: (error as Error).message };
      }
      if (!('status' in result)) throw new Error(`expected a Task, got ${JSON.stringify(result)}`);
      expect(result.status!.state).toBe(TaskState.TASK_STATE_AUTH_REQUIRED);
      const again = await client.getTask({ tenant: '', id: result.id });
      expect(again.status!.state).toBe(TaskState.TASK_STATE_AUTH_REQUIRED);
      // The task names the approvers as the wire does: read the approval the relay recorded for it.
      const { body } = await relay.rpc(senderKey, 'tasks/get', { task_id: result.id });
      return { kind: 'held', approvers: body.result.approvals[0].approvers, rule_id: body.result.approvals[0].rule_id };
    },
  },
  {
    name: 'Slack /handoff',
    via: 'slack',
    async create(to, summary) {
      slackCalls += 1;
      const name = `policy-surfaces-slash-${slackCalls}`;
      const answer = await sendSlashCommand(`${relay.url}/slack/events`, relay.signingSecret, {
        user: U.sender,
        text: `${to} ${summary}`,
        responseUrl: slack.responseUrl(name),
        triggerId: slack.triggerId(),
      });
      expect(answer.status).toBe(200);
      const reply = String((await slack.waitFor('response_url', (c) => c.args.response_url === name)).args.text);
      const heldBy = /is waiting for approval by (.+) \(policy rule `([^`]+)`\)/.exec(reply);
      if (heldBy)
        return {
          kind: 'held',
          approvers: [...heldBy[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!),
          rule_id: heldBy[2],
        };
      return { kind: 'refused', words: reply };
    },
  },
  {
    name: 'Slack new-handoff modal',
    via: 'slack',
    async create(to, summary) {
      slackCalls += 1;
      const posts = slack.callsTo('chat.postMessage').length;
      const answer = await submitViewState(`${relay.url}/slack/events`, relay.signingSecret, {
        user: U.sender,
        viewId: `V0PS${slackCalls}`,
        callbackId: NEW_HANDOFF_CALLBACK_ID,
        values: {
          recipient: { recipient: { type: 'users_select', selected_user: slackUserOf(to) } },
          intent: {
            intent: {
              type: 'static_select',
              selected_option: { text: { type: 'plain_text', text: 'x' }, value: 'inform' },
            },
          },
          summary: { summary: { type: 'plain_text_input', value: summary } },
        },
      });
      expect(answer.status).toBe(200);
      const ack = answer.text
        ? (JSON.parse(answer.text) as { response_action?: string; errors?: Record<string, string> })
        : {};
      if (ack.response_action === 'errors') return { kind: 'refused', words: Object.values(ack.errors!).join(' ') };
      const said = await waitUntil(
        async () =>
          slack
            .callsTo('chat.postMessage')
            .slice(posts)
            .find((c) => c.args.channel === U.sender && String(c.args.text).includes(`\`${to}\``)),
        'the modal’s answer to the sender',
      );
      const heldBy = /is waiting for approval by (.+) \(policy rule `([^`]+)`\)/.exec(String(said.args.text));
      if (!heldBy) throw new Error(`the modal did not say the handoff is held: ${String(said.args.text)}`);
      return { kind: 'held', approvers: [...heldBy[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!), rule_id: heldBy[2] };
    },
  },
];

async function storedBy(summary: string): Promise<ThreadDoc | null> {
  return relay.store.threads.findOne({ from: 'sender@acme', summary });
}

describe('require_approval holds the create identically on every surface', () => {
  test.each(surfaces.map((s) => [s.name, s] as const))('%s', async (_name, surface) => {
    const summary = `held over ${surface.name}`;
    const outcome = await surface.create('held@acme', summary);
    expect(outcome).toMatchObject({ kind: 'held', approvers: ['lead@acme'] });
    if ('rule_id' in outcome && outcome.rule_id !== undefined) expect(outcome.rule_id).toBe('held-needs-lead');
    const doc = await waitUntil(() => storedBy(summary), 'the held thread');
    expect(doc).toMatchObject({ status: 'awaiting_approval', hidden_from_recipient: true, to: 'held@acme' });
    expect(doc.status_history).toEqual([
      expect.objectContaining({
        status: 'awaiting_approval',
        via: surface.via,
        policy: expect.objectContaining({ rule_id: 'held-needs-lead', effect: 'require_approval' }),
      }),
    ]);
    expect(doc.approvals).toEqual([
      expect.objectContaining({
        action: 'handoff.create',
        actor: 'sender@acme',
        status: 'pending',
        rule_id: 'held-needs-lead',
        approvers: [expect.objectContaining({ label: 'lead@acme' })],
      }),
    ]);
    // The recipient sees nothing of it, whichever surface sent it.
    expect((await relay.rpc(heldKey, 'tasks/get', { task_id: doc._id })).body.error).toMatchObject({ code: -32006 });
    expect(doc.slack).toBeNull();
  });
});

describe('deny refuses the create in the same words on every surface', () => {
  const words = 'Policy rule no-handoffs-to-denied denies handoff.create: denied@acme is on leave until Monday';
  test.each(surfaces.map((s) => [s.name, s] as const))('%s', async (_name, surface) => {
    const summary = `denied over ${surface.name}`;
    const outcome = await surface.create('denied@acme', summary);
    expect(outcome.kind).toBe('refused');
    expect(outcome.kind === 'refused' && outcome.words).toContain(words);
    expect(await storedBy(summary)).toBeNull();
  });
});
