// The intent rules refuse the same handoff in the same words on every surface: JSON-RPC /a2a, the MCP tool (over
// Streamable HTTP at /mcp) and the Slack new-handoff modal, through a real relay, Bolt receiver and MCP client.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { connectMcpHttp, toolErrorText } from '../helpers/mcp-http-client';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { submitViewState } from '../../scripts/fake-slack/slack-requests';

const ALICE = 'U0ALICE';
const BOB = 'U0BOB';
let slack: FakeSlack;
let relay: TestRelay;
let aliceKey: string;
let mcp: Client;
let seq = 0;

beforeAll(async () => {
  slack = await startFakeSlack();
  slack.addUser(ALICE, { name: 'alice', real_name: 'Alice Example' });
  slack.addUser(BOB, { name: 'bob', real_name: 'Bob Example' });
  relay = await startTestRelay({ name: 'intent_wording', slack });
  aliceKey = await relay.register({ handle: 'alice@acme', slack_user_id: ALICE });
  await relay.register({ handle: 'bob@acme', slack_user_id: BOB });
  mcp = await connectMcpHttp(relay.url, aliceKey);
});

afterAll(async () => {
  await mcp?.close();
  await relay?.stop();
  await slack?.close();
});

const ACTION = { description: 'Rename the flag', target_files: ['src/a.ts'], rationale: 'Clarity' };

async function viaJsonRpc(handoff: { question?: string; proposed_action?: typeof ACTION }): Promise<string> {
  const { body } = await relay.rpc(aliceKey, 'message/send', {
    task_id: null,
    recipient: 'bob@acme',
    intent: 'inform',
    message: { role: 'user', parts: [{ type: 'text', text: 'hello' }] },
    ...(handoff.proposed_action ? { proposed_action: handoff.proposed_action } : {}),
    metadata: handoff.question ? { question: handoff.question } : {},
  });
  expect(body.error?.data?.code).toBe('invalid_intent_payload');
  return body.error.message;
}

async function viaMcp(handoff: { question?: string; proposed_action?: typeof ACTION }): Promise<string> {
  return toolErrorText(
    await mcp.callTool({
      name: 'handoff_to_teammate',
      arguments: { to: 'bob@acme', intent: 'inform', summary: 'hello', ...handoff },
    }),
  );
}

async function viaSlackModal(
  handoff: { question?: string; proposed_action?: typeof ACTION },
  field: string,
): Promise<string> {
  const text = (value?: string) => ({ type: 'plain_text_input', value: value ?? null });
  const action = handoff.proposed_action;
  const answer = await submitViewState(`${relay.url}/slack/events`, relay.signingSecret, {
    user: ALICE,
    viewId: `V0INTENT${++seq}`,
    callbackId: 'handoff_new_modal',
    values: {
      recipient: { recipient: { type: 'users_select', selected_user: BOB } },
      intent: {
        intent: {
          type: 'static_select',
          selected_option: { text: { type: 'plain_text', text: 'x' }, value: 'inform' },
        },
      },
      summary: { summary: text('hello') },
      question: { question: text(handoff.question) },
      action_description: { action_description: text(action?.description) },
      action_files: { action_files: text(action?.target_files.join('\n')) },
      action_rationale: { action_rationale: text(action?.rationale) },
      links: { links: text() },
    },
  });
  expect(answer.status).toBe(200);
  const body = JSON.parse(answer.text) as { response_action?: string; errors?: Record<string, string> };
  expect(body.response_action).toBe('errors');
  return body.errors![field]!;
}

test.each([
  [
    'a question on an inform handoff',
    { question: 'Why?' },
    'question',
    'question is only allowed when intent is "ask_question" (got "inform")',
  ],
  [
    'a proposed action on an inform handoff',
    { proposed_action: ACTION },
    'action_description',
    'proposed_action is only allowed when intent is "propose_action" (got "inform")',
  ],
])(
  '%s is refused in the same words over JSON-RPC, MCP and the Slack modal, and nothing is stored',
  async (_name, handoff, field, words) => {
    expect(await viaJsonRpc(handoff)).toBe(words);
    expect(await viaMcp(handoff)).toContain(JSON.stringify(words).slice(1, -1));
    expect(await viaSlackModal(handoff, field)).toBe(`${words}.`);
    expect(await relay.store.threads.countDocuments()).toBe(0);
  },
);
