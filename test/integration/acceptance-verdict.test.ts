// The acceptance verdict (relay-core/domain/acceptance-verdict.ts) behind MCP accept_handoff, JSON-RPC tasks/update
// accept and the Slack Accept button: every result code end to end on a real relay, and the same verdict over MCP
// and JSON-RPC for the same input (the pure function's own cases are in test/unit/acceptance-verdict.test.ts).
import { verdictWords } from '../../bot/verify-accept';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { canonicalHash } from '../../relay-core/domain/canonical-json';
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { HANDOFF_TOKEN_TTL_MS } from '../../relay-core/service/handoff-tokens';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { TestClock } from '../helpers/test-clock';
import { clickButton, type ButtonClick } from '../../scripts/fake-slack/slack-requests';
import { waitUntil } from '../helpers/wait-until';
import { sendHandoff } from '../helpers/handoffs';
import { armedTimerOf } from '../helpers/thread-docs';

// ── end to end ────────────────────────────────────────────────────────────────

let relay: TestRelay;
const clock = new TestClock();
let senderKey: string;
let recipientKey: string;
let mcp: Client;

beforeAll(async () => {
  relay = await startTestRelay({ name: 'acceptance_verdict', clock });
  senderKey = await relay.register({ handle: 'api-dev@acme' });
  recipientKey = await relay.register({ handle: 'web-dev@acme', tools: ['git', 'node'] } as Parameters<
    TestRelay['register']
  >[0]);
  mcp = new Client({ name: 'acceptance-verdict-test', version: '1.0.0' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(`${relay.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${recipientKey}` } },
    }),
  );
});

afterAll(async () => {
  await mcp?.close();
  await relay?.stop();
});

const PROJECT = { project_id: 'proj-1', repo: 'acme/web' };

/**
 * Every handoff token minted so far expires: the relay's clock moves past a token's lifetime. First each of
 * `threads` has its timer armed (its row written: a create writes it before it answers, and a step that far off has no
 * job yet): arming after the move would find the handoff's expiry already due and expire the thread while the case
 * compares statuses.
 */
async function expireTokens(on: TestClock, of: TestRelay, threads: readonly string[]): Promise<void> {
  for (const id of threads)
    await waitUntil(async () => (await armedTimerOf(of.store, id)) ?? undefined, `the timer of ${id} written`);
  on.advance(HANDOFF_TOKEN_TTL_MS + 1_000);
}

async function handoff(
  metadata: Record<string, unknown> = { project: PROJECT },
): Promise<{ id: string; token: string; body: unknown }> {
  const created = await relay.rpc(senderKey, 'message/send', {
    recipient: 'web-dev@acme',
    intent: 'inform',
    message: { parts: [{ text: 'Paging changed' }] },
    metadata,
  });
  const id = created.body.result.task_id as string;
  const view = (await relay.rpc(recipientKey, 'tasks/get', { task_id: id })).body.result;
  expect(view.handoff_token).toEqual(expect.any(String));
  const senderView = (await relay.rpc(senderKey, 'tasks/get', { task_id: id })).body.result;
  expect(senderView.handoff_token).toBeUndefined();
  const body = {
    from: 'api-dev@acme',
    to: 'web-dev@acme',
    intent: 'inform',
    summary: 'Paging changed',
    question: null,
    proposed_action: null,
    artifacts: [],
    metadata,
  };
  return { id, token: view.handoff_token, body };
}

async function accept(id: string, verdict?: Record<string, unknown>): Promise<any> {
  const answer = await relay.rpc(recipientKey, 'tasks/update', {
    task_id: id,
    transition: 'accept',
    ...(verdict ? { verdict } : {}),
  });
  expect(answer.body.error).toBeUndefined();
  return answer.body.result;
}

async function statusOf(id: string): Promise<string> {
  return (await relay.rpc(recipientKey, 'tasks/get', { task_id: id })).body.result.status;
}

test('ok: token + body + identity accepted atomically, token consumed in the same write', async () => {
  const h = await handoff();
  const result = await accept(h.id, {
    goal_token: h.token,
    presented_body: h.body,
    project_id: 'proj-1',
    expected_repo_path: 'acme/web',
  });
  expect(result).toMatchObject({
    thread_id: h.id,
    status: 'accepted',
    accepted: true,
    result: 'ok',
    accepted_at: expect.any(String),
  });
  expect(result.token_check).toMatchObject({ status: 'passed', valid: true, reason: null });
  const doc = await relay.store.threads.findOne({ _id: h.id });
  expect(doc?.handoff_token?.consumed_at).toEqual(doc?.accepted_at);
  expect(JSON.stringify(doc)).not.toContain(h.token);
});

test('old callers: accept without verdict inputs still answers thread_id, status, accepted_at', async () => {
  const h = await handoff({});
  expect(await accept(h.id)).toMatchObject({ thread_id: h.id, status: 'accepted', accepted_at: expect.any(String) });
});

test('STALE_HANDOFF not_found', async () => {
  const h = await handoff();
  const result = await accept(h.id, { goal_token: 'hto_forged' });
  expect(result).toMatchObject({
    accepted: false,
    result: 'STALE_HANDOFF',
    status: 'pending',
    token_check: { reason: 'not_found' },
  });
  expect(await statusOf(h.id)).toBe('pending');
});

test('STALE_HANDOFF already_consumed', async () => {
  const h = await handoff();
  expect((await accept(h.id, { goal_token: h.token })).accepted).toBe(true);
  const again = await accept(h.id, { goal_token: h.token });
  expect(again).toMatchObject({
    accepted: false,
    result: 'STALE_HANDOFF',
    status: 'accepted',
    token_check: { reason: 'already_consumed' },
  });
});

test("STALE_HANDOFF expired (the relay's clock has passed the token's lifetime)", async () => {
  const h = await handoff();
  await expireTokens(clock, relay, [h.id]);
  const result = await accept(h.id, { goal_token: h.token });
  expect(result).toMatchObject({ accepted: false, result: 'STALE_HANDOFF', token_check: { reason: 'expired' } });
  expect(await statusOf(h.id)).toBe('pending');
});

test('STALE_HANDOFF wrong_project', async () => {
  const h = await handoff();
  const result = await accept(h.id, { goal_token: h.token, project_id: 'proj-2' });
  expect(result).toMatchObject({ accepted: false, result: 'STALE_HANDOFF', token_check: { reason: 'wrong_project' } });
});

test('BODY_HASH_MISMATCH', async () => {
  const h = await handoff();
  const result = await accept(h.id, {
    goal_token: h.token,
    presented_body: { ...(h.body as object), summary: 'Something else' },
  });
  expect(result).toMatchObject({
    accepted: false,
    result: 'BODY_HASH_MISMATCH',
    token_check: { reason: 'body_mismatch' },
  });
  expect(await statusOf(h.id)).toBe('pending');
});

test('FOREIGN_PROJECT_CONFIG: genuine token, foreign repo', async () => {
  const h = await handoff();
  const result = await accept(h.id, { goal_token: h.token, project_id: 'proj-1', expected_repo_path: 'acme/api' });
  expect(result).toMatchObject({
    accepted: false,
    result: 'FOREIGN_PROJECT_CONFIG',
    token_check: { status: 'passed' },
    identity_check: { status: 'failed' },
  });
  expect(await statusOf(h.id)).toBe('pending');
});

test('CAPABILITY_UNAVAILABLE: the handoff requires a tool the recipient card lacks (no inputs)', async () => {
  const h = await handoff({ required_tools: ['docker'] });
  const result = await accept(h.id);
  expect(result).toMatchObject({
    accepted: false,
    result: 'CAPABILITY_UNAVAILABLE',
    capability_check: { missing: ['docker'], available: ['git', 'node'] },
  });
  expect(await statusOf(h.id)).toBe('pending');
  expect((await accept(h.id, { available_tools: ['docker'] })).accepted).toBe(true);
});

const ITEMS = [
  { id: 'T-2', title: 'b', tool_requirements: ['node', 'git'] },
  { id: 'T-1', title: 'a', tool_requirements: ['git'] },
];

test('TOOL_MANIFEST_DRIFT', async () => {
  const h = await handoff();
  const result = await accept(h.id, { live_items: ITEMS, expected_required_tools_hash: canonicalHash(['git']) });
  expect(result).toMatchObject({
    accepted: false,
    result: 'TOOL_MANIFEST_DRIFT',
    tool_manifest_check: { actual: canonicalHash(['git', 'node']) },
  });
});

test('BOARD_DIVERGENCE', async () => {
  const h = await handoff();
  const result = await accept(h.id, {
    live_items: ITEMS,
    expected_required_tools_hash: canonicalHash(['git', 'node']),
    expected_board_revision: canonicalHash([ITEMS[1]]),
  });
  expect(result).toMatchObject({
    accepted: false,
    result: 'BOARD_DIVERGENCE',
    tool_manifest_check: { status: 'passed' },
    board_check: { status: 'failed' },
  });
  expect(await statusOf(h.id)).toBe('pending');
});

type Handoff = Awaited<ReturnType<typeof handoff>>;
interface SameInputCase {
  result: string;
  /** token_check.reason for STALE_HANDOFF. */
  reason?: string;
  metadata?: Record<string, unknown>;
  /** Puts the thread into the state the case needs, through the relay like a user would (or the clock). */
  before?: (h: Handoff) => Promise<void>;
  input: (h: Handoff) => Record<string, unknown>;
}

const SAME_INPUT_CASES: SameInputCase[] = [
  {
    result: 'ok',
    input: (h) => ({
      goal_token: h.token,
      presented_body: h.body,
      project_id: 'proj-1',
      expected_repo_path: 'acme/web',
      delivery_source: 'inbox',
    }),
  },
  { result: 'STALE_HANDOFF', reason: 'not_found', input: () => ({ goal_token: 'hto_forged', session_id: 's1' }) },
  {
    result: 'STALE_HANDOFF',
    reason: 'already_consumed',
    before: async (h) => void (await accept(h.id, { goal_token: h.token })),
    input: (h) => ({ goal_token: h.token }),
  },
  {
    result: 'STALE_HANDOFF',
    reason: 'expired',
    before: (h) => expireTokens(clock, relay, [h.id]),
    input: (h) => ({ goal_token: h.token, delivery_source: 'slack_dm' }),
  },
  { result: 'STALE_HANDOFF', reason: 'wrong_project', input: (h) => ({ goal_token: h.token, project_id: 'proj-2' }) },
  {
    result: 'BODY_HASH_MISMATCH',
    input: (h) => ({ goal_token: h.token, presented_body: { ...(h.body as object), summary: 'Something else' } }),
  },
  {
    result: 'FOREIGN_PROJECT_CONFIG',
    input: (h) => ({
      goal_token: h.token,
      project_id: 'proj-1',
      expected_repo_path: 'acme/api',
      delivery_source: 'slack_dm',
    }),
  },
  {
    result: 'CAPABILITY_UNAVAILABLE',
    metadata: { project: PROJECT, required_tools: ['docker'] },
    input: () => ({ session_id: 's2' }),
  },
  {
    result: 'TOOL_MANIFEST_DRIFT',
    input: () => ({ live_items: ITEMS, expected_required_tools_hash: canonicalHash(['git']) }),
  },
  {
    result: 'BOARD_DIVERGENCE',
    input: () => ({ live_items: ITEMS, expected_board_revision: 'nope', session_id: 's1' }),
  },
];

describe('identical input gives an identical verdict over MCP and JSON-RPC', () => {
  const strip = ({ accepted_at: _a, thread_id: _t, ...rest }: Record<string, unknown>) => rest;

  test.each(SAME_INPUT_CASES.map((c) => [c.reason ? `${c.result} (${c.reason})` : c.result, c] as const))(
    '%s',
    async (_name, c) => {
      const a = await handoff(c.metadata);
      const b = await handoff(c.metadata);
      await c.before?.(a);
      await c.before?.(b);
      const rpc = await accept(a.id, c.input(a));
      const call = await mcp.callTool({ name: 'accept_handoff', arguments: { thread_id: b.id, ...c.input(b) } });
      expect(call.isError).toBeFalsy();
      expect(rpc.result).toBe(c.result);
      if (c.reason) expect(rpc.token_check.reason).toBe(c.reason);
      expect(strip(call.structuredContent as Record<string, unknown>)).toEqual(strip(rpc));
      expect(await statusOf(b.id)).toBe(await statusOf(a.id));
    },
  );
});

// A Slack click carries no inputs; the relay presents the recipient's own token with delivery_source "slack_dm".
// So an agent sending exactly that gets the verdict the button got: the codes a click can reach, each compared.
describe('Slack Accept: the same verdict as an agent presenting the same input', () => {
  const USER = 'U0VERDICT';
  let slack: FakeSlack;
  let bot: TestRelay;
  let from: string;
  let recipient: string;

  beforeAll(async () => {
    slack = await startFakeSlack();
    slack.addUser(USER);
    bot = await startTestRelay({ name: 'acceptance_verdict_slack', slack, clock: botClock });
    from = await bot.register({ handle: 'sender@acme' });
    recipient = await bot.register({ handle: 'recipient@acme', slack_user_id: USER, tools: ['git'] } as Parameters<
      TestRelay['register']
    >[0]);
  });

  afterAll(async () => {
    await bot?.stop();
    await slack?.close();
  });

  const send = (metadata: Record<string, unknown>) => sendHandoff(bot, from, 'recipient@acme', 'work', { metadata });

  const botClock = new TestClock();
  const expire = (id: string) => expireTokens(botClock, bot, [id]);

  const SLACK_CASES: Array<{
    result: string;
    metadata: Record<string, unknown>;
    before?: (id: string) => Promise<unknown>;
  }> = [
    { result: 'ok', metadata: { project: PROJECT } },
    { result: 'STALE_HANDOFF', metadata: { project: PROJECT }, before: expire },
    { result: 'CAPABILITY_UNAVAILABLE', metadata: { required_tools: ['docker'] } },
  ];

  test.each(SLACK_CASES.map((c) => [c.result, c] as const))('%s', async (_name, c) => {
    const clicked = await send(c.metadata);
    const called = await send(c.metadata);
    const thread = await waitUntil(async () => {
      const doc = await bot.store.threads.findOne({ _id: clicked });
      return doc?.slack ? doc : undefined;
    }, 'the DM to be posted');
    await c.before?.(clicked);
    await c.before?.(called);

    // The agent: its own token (from tasks/get) and the delivery source a click reports.
    const token = (await bot.rpc(recipient, 'tasks/get', { task_id: called })).body.result.handoff_token as string;
    const verdict = (
      await bot.rpc(recipient, 'tasks/update', {
        task_id: called,
        transition: 'accept',
        verdict: { goal_token: token, delivery_source: 'slack_dm' },
      })
    ).body.result;
    expect(verdict.result).toBe(c.result);

    const post = slack.callsTo('chat.postMessage').find((p) => p.response.ts === thread.slack!.ts)!;
    const button = (post.args.blocks as any[])
      .flatMap((b) => (b.type === 'actions' ? b.elements : []))
      .find((e) => e.action_id === 'handoff_accept');
    const click: ButtonClick = {
      user: USER,
      channel: thread.slack!.channel,
      messageTs: thread.slack!.ts,
      actionId: 'handoff_accept',
      value: button.value,
      responseUrl: slack.responseUrl(USER),
    };
    expect((await clickButton(`${bot.url}/slack/events`, bot.signingSecret, click)).status).toBe(200);

    if (verdict.accepted) {
      const doc = await waitUntil(async () => {
        const d = await bot.store.threads.findOne({ _id: clicked });
        return d?.status === 'accepted' ? d : undefined;
      }, 'the click to accept');
      expect(doc.status_history.at(-1)).toMatchObject({ status: 'accepted', by: 'recipient@acme', via: 'slack' });
      expect(doc.handoff_token?.consumed_at).toEqual(doc.accepted_at);
    } else {
      // The refusal the DM shows is the agent's verdict in words, its reasons word for word.
      const notice = verdictWords(verdict.result, verdict.reasons as string[]);
      await slack.waitFor(
        'chat.update',
        (u) =>
          u.args.ts === thread.slack!.ts && JSON.stringify(u.args.blocks).includes(JSON.stringify(notice).slice(1, -1)),
      );
      expect((await bot.store.threads.findOne({ _id: clicked }))!.status).toBe('pending');
    }
    expect((await bot.store.threads.findOne({ _id: called }))!.status).toBe(
      (await bot.store.threads.findOne({ _id: clicked }))!.status,
    );
  });
});
