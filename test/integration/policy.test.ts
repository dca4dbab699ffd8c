// Policies on the real relay (FerretDB, Redis, fake Slack): one decision, with the same words, on JSON-RPC, MCP and
// Slack; refusals audited and nothing changed; limits shared by two relay processes; a bad policy never replaces a good one.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { sendHandoff, text } from '../helpers/handoffs';
import { connectMcpHttp, toolErrorText } from '../helpers/mcp-http-client';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { dmText, press, threadDoc } from '../helpers/slack-dm';
import { startSlackTeam, type SlackTeam } from '../helpers/slack-team';
import { uniqueName } from '../helpers/test-env';
import { waitUntil } from '../helpers/wait-until';

const INFRA_POLICY = `
rules:
  - id: infra-accepts-need-sre
    match:
      action: handoff.accept
      intent: propose_action
      target_files: { under: [infra/] }
    effect: deny
    reason: Infra changes need the SRE lead
  - id: no-handoffs-to-qa
    match: { action: handoff.create, recipient: { role: qa } }
    effect: deny
    reason: QA takes work from the board, not from agents
`;

let team: SlackTeam;
let relay: TestRelay;

beforeAll(async () => {
  team = await startSlackTeam('policy');
  relay = team.relay;
  await relay.register({ handle: 'qa@acme', role: 'qa' });
});

afterAll(async () => {
  await team?.close();
});

async function applyPolicy(target: TestRelay, source: string) {
  return target.rest('PUT', '/admin/policy', target.adminKey, { source });
}

const infraHandoff = (summary: string) =>
  sendHandoff(relay, team.senderKey, 'recipient@acme', summary, {
    intent: 'propose_action',
    proposed_action: {
      description: 'Raise the pool size',
      target_files: ['infra/db.tf'],
      rationale: 'Connections run out at peak',
    },
  });

describe('one decision on every surface', () => {
  beforeAll(async () => {
    expect((await applyPolicy(relay, INFRA_POLICY)).status).toBe(200);
  });

  test('a denied accept is refused with the same words over JSON-RPC and MCP, audited, and changes nothing', async () => {
    const words = 'Policy rule infra-accepts-need-sre denies handoff.accept: Infra changes need the SRE lead';
    const [viaRpc, viaMcp] = [await infraHandoff('rpc'), await infraHandoff('mcp')];

    const rpc = await relay.rpc(team.recipientKey, 'tasks/update', { task_id: viaRpc, transition: 'accept' });
    expect(rpc.body.error).toMatchObject({
      code: -32020,
      message: words,
      data: { details: { rule_id: 'infra-accepts-need-sre' } },
    });

    const mcp = await connectMcpHttp(relay.url, team.recipientKey);
    try {
      expect(toolErrorText(await mcp.callTool({ name: 'accept_handoff', arguments: { thread_id: viaMcp } }))).toContain(
        `policy_denied (-32020): ${words}`,
      );
    } finally {
      await mcp.close();
    }

    for (const id of [viaRpc, viaMcp]) {
      const thread = await threadDoc(relay, id);
      expect(thread.status).toBe('pending');
      expect(thread.status_history).toHaveLength(1);
    }
    const audit = await relay.rest('GET', '/admin/policy/audit?limit=10', relay.adminKey);
    expect(
      audit.body.refusals
        .filter((r: any) => r.rule_id === 'infra-accepts-need-sre')
        .map((r: any) => [r.via, r.thread_id, r.outcome]),
    ).toEqual(
      expect.arrayContaining([
        ['a2a', viaRpc, 'denied'],
        ['mcp', viaMcp, 'denied'],
      ]),
    );
  });

  test('an allowed change is stamped in the thread history with the rule and policy version', async () => {
    const id = await sendHandoff(relay, team.senderKey, 'recipient@acme', 'plain');
    const accepted = await relay.rpc(team.recipientKey, 'tasks/update', { task_id: id, transition: 'accept' });
    expect(accepted.body.result).toMatchObject({ status: 'accepted' });
    const shown = await relay.rest('GET', '/admin/policy', relay.adminKey);
    const doc = await threadDoc(relay, id);
    expect(doc.status_history.map((h) => h.policy)).toEqual([
      { rule_id: null, effect: 'allow', policy_version: shown.body.version },
      { rule_id: null, effect: 'allow', policy_version: shown.body.version },
    ]);
  });

  test('a denied create stores nothing, names the rule to the sender, and is readable in the audit', async () => {
    const refused = await relay.rpc(team.senderKey, 'message/send', {
      recipient: 'qa@acme',
      intent: 'inform',
      message: text('please test'),
    });
    expect(refused.body.error).toMatchObject({
      code: -32020,
      message: 'Policy rule no-handoffs-to-qa denies handoff.create: QA takes work from the board, not from agents',
    });
    expect(await relay.store.threads.countDocuments({ to: 'qa@acme' })).toBe(0);
    const audit = await relay.rest('GET', '/admin/policy/audit', relay.adminKey);
    expect(audit.body.refusals[0]).toMatchObject({
      action: 'handoff.create',
      actor: 'sender@acme',
      recipient: 'qa@acme',
      thread_id: null,
      rule_id: 'no-handoffs-to-qa',
    });
  });

  test('POST /admin/policy/test explains a call without making it', async () => {
    const answer = await relay.rest('POST', '/admin/policy/test', relay.adminKey, {
      action: 'handoff.accept',
      from: 'sender@acme',
      to: 'recipient@acme',
      actor: 'recipient@acme',
      intent: 'propose_action',
      target_files: ['infra/x.tf'],
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      effect: 'deny',
      rule_id: 'infra-accepts-need-sre',
      reason: 'Infra changes need the SRE lead',
    });
    const unknown = await relay.rest('POST', '/admin/policy/test', relay.adminKey, {
      action: 'handoff.explode',
      from: 'sender@acme',
      to: 'recipient@acme',
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toMatch(/^body\.action: /);
  });
});

describe('a Slack Accept under the policy', () => {
  test('the DM shows the refusal in the same words and the handoff stays pending', async () => {
    await applyPolicy(
      relay,
      'rules:\n  - { id: no-slack-accepts, match: { action: handoff.accept, via: slack }, effect: deny, reason: Accept from your agent }\n',
    );
    const dm = await team.handoff('from slack');
    await press(relay, dm.click('handoff_accept'));
    await team.slack.waitFor(
      'chat.update',
      (c) => c.args.ts === dm.ts && JSON.stringify(c.args.blocks).includes('no-slack-accepts'),
    );
    expect(dmText(team.slack, dm.channel, dm.ts)).toContain(
      'Not accepted: Policy rule no-slack-accepts denies handoff.accept: Accept from your agent.',
    );
    expect((await threadDoc(relay, dm.threadId)).status).toBe('pending');
    // The same accept from the agent is not a Slack call: the rule does not match it.
    const viaAgent = await relay.rpc(team.recipientKey, 'tasks/update', { task_id: dm.threadId, transition: 'accept' });
    expect(viaAgent.body.result).toMatchObject({ status: 'accepted' });
  });
});

describe('applying a policy', () => {
  test('a broken policy is refused with its line and field, and the one in force stays', async () => {
    await applyPolicy(relay, INFRA_POLICY);
    const before = (await relay.rest('GET', '/admin/policy', relay.adminKey)).body.version;
    const broken = await applyPolicy(
      relay,
      'rules:\n  - id: x\n    effect: rate_limit\n    max: 3\n    window: forever\n',
    );
    expect(broken.status).toBe(400);
    expect(broken.body).toMatchObject({ code: 'invalid_params' });
    expect(broken.body.message).toBe(
      'policy:5: rules[0].window: must be a duration such as 30s, 10m, 4h or 2d (at most 90d), got "forever"',
    );
    expect((await relay.rest('GET', '/admin/policy', relay.adminKey)).body.version).toBe(before);
    const checked = await relay.rest('POST', '/admin/policy/check', relay.adminKey, {
      source: 'rules:\n  - { id: a, effect: alow }\n',
    });
    expect(checked.body.message).toBe(
      'policy:2: rules[0].effect: effect must be one of allow, deny, rate_limit, require_approval',
    );
    expect((await relay.rest('GET', '/admin/policy', undefined)).status).toBe(401);
  });

  test('RELAY_POLICY_FILE is applied at start; a bad one stops start-up naming the file, line and field', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'policy-'));
    try {
      const good = join(dir, 'good.yaml');
      await writeFile(good, INFRA_POLICY);
      const started = await startTestRelay({ name: 'policy_file', env: { RELAY_POLICY_FILE: good } });
      try {
        expect((await started.rest('GET', '/admin/policy', started.adminKey)).body.rules).toEqual([
          { id: 'infra-accepts-need-sre', effect: 'deny' },
          { id: 'no-handoffs-to-qa', effect: 'deny' },
        ]);
      } finally {
        await started.stop();
      }
      const bad = join(dir, 'bad.yaml');
      await writeFile(bad, 'default: allow\nrules:\n  - id: a\n    effect: require_approval\n    approvers: [bob]\n');
      await expect(startTestRelay({ name: 'policy_bad', env: { RELAY_POLICY_FILE: bad } })).rejects.toThrow(
        `RELAY_POLICY_FILE: ${bad}:5: rules[0].approvers[0]: must be a Slack user id`,
      );
      await expect(
        startTestRelay({ name: 'policy_missing', env: { RELAY_POLICY_FILE: join(dir, 'nope.yaml') } }),
      ).rejects.toThrow(`RELAY_POLICY_FILE: cannot read ${join(dir, 'nope.yaml')}: ENOENT`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('rate limits', () => {
  test('a per-teammate limit is shared by two relay processes on the same store and Redis', async () => {
    const shared = { MONGODB_DB: uniqueName('policy_pair'), RELAY_QUEUE_PREFIX: uniqueName('policy_pair') };
    const a = await startTestRelay({ name: 'policy_a', env: shared });
    const b = await startTestRelay({
      name: 'policy_b',
      env: { ...shared, RELAY_ADMIN_KEY: a.adminKey, RELAY_KEY_PEPPER: a.config.keyPepper! },
    });
    try {
      const alice = await a.register({ handle: 'alice@acme' });
      await a.register({ handle: 'bob@acme' });
      const id = await sendHandoff(a, alice, 'bob@acme', 'chatty');
      await applyPolicy(
        a,
        'rules:\n  - { id: three-messages, match: { action: message.append }, effect: rate_limit, max: 3, window: 1m }\n',
      );
      // The other process reads the stored policy within its refresh interval.
      await waitUntil(
        async () => ((await b.rest('GET', '/admin/policy', b.adminKey)).body.rules.length === 1 ? true : undefined),
        'relay b to see the policy',
      );
      const answers = [];
      for (const [i, r] of [a, b, a, b].entries())
        answers.push((await r.rpc(alice, 'message/send', { task_id: id, message: text(`m${i}`) })).body);
      expect(answers.slice(0, 3).map((x) => x.result?.sequence_no)).toEqual([1, 2, 3]);
      expect(answers[3].error).toMatchObject({
        code: -32003,
        message: 'Policy rule three-messages allows at most 3 message.append per 1 min per teammate',
      });
      expect(answers[3].error.data.details).toMatchObject({ rule_id: 'three-messages' });
      expect(answers[3].error.data.details.retry_after_ms).toBeGreaterThan(0);
      expect(await a.store.messages.countDocuments({ thread_id: id })).toBe(3);
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  test('a retried create under the same idempotency key replays its answer: neither counted again nor refused', async () => {
    await applyPolicy(
      relay,
      'rules:\n  - { id: one-create, match: { action: handoff.create }, effect: rate_limit, max: 1, window: 1m, per: pair }\n',
    );
    const send = (key: string) =>
      relay.rpc(team.senderKey, 'message/send', {
        recipient: 'recipient@acme',
        intent: 'inform',
        message: text('once'),
        metadata: { client_idempotency_key: key },
      });
    const first = await send('retry-1');
    const again = await send('retry-1');
    expect(again.body.result.task_id).toBe(first.body.result.task_id);
    const other = await send('retry-2');
    expect(other.body.error).toMatchObject({
      code: -32003,
      message: 'Policy rule one-create allows at most 1 handoff.create per 1 min per pair',
    });
    await applyPolicy(relay, INFRA_POLICY);
  });

  test('per session: each MCP session has its own allowance', async () => {
    const own = await startTestRelay({ name: 'policy_session' });
    try {
      const alice = await own.register({ handle: 'alice@acme' });
      await own.register({ handle: 'bob@acme' });
      const id = await sendHandoff(own, alice, 'bob@acme', 'sessions');
      await applyPolicy(
        own,
        'rules:\n  - { id: one-per-session, match: { action: message.append }, effect: rate_limit, max: 1, window: 1m, per: session }\n',
      );
      const session = async (sessionId: string) => {
        const client = new Client({ name: 'agent', version: '1.0.0' });
        const headers = { authorization: `Bearer ${alice}`, 'x-relay-session': sessionId };
        await client.connect(
          new StreamableHTTPClientTransport(new URL(`${own.url}/mcp`), { requestInit: { headers } }),
        );
        return client;
      };
      const [first, second] = [await session('session-1'), await session('session-2')];
      try {
        const send = (c: Client, body: string) =>
          c.callTool({ name: 'send_message', arguments: { thread_id: id, body } });
        expect((await send(first, 'one')).isError).toBeFalsy();
        expect(toolErrorText(await send(first, 'two'))).toContain(
          'rate_limited (-32003): Policy rule one-per-session allows at most 1 message.append per 1 min per session',
        );
        expect((await send(second, 'three')).isError).toBeFalsy();
      } finally {
        await first.close();
        await second.close();
      }
    } finally {
      await own.stop();
    }
  });
});
