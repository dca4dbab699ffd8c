// Handoffs to role:, skill: and owner: targets over JSON-RPC and MCP on a real relay (FerretDB + Redis): one
// match is delivered as today, several make it unclaimed (each candidate's inbox, first claim wins), none is
// recipient_not_found listing the roles that exist, and a malformed target is invalid_params.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connectMcpHttp, toolErrorText, toolOk } from '../helpers/mcp-http-client';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { waitUntil } from '../helpers/wait-until';

let relay: TestRelay;
const keys: Record<string, string> = {};
const clients: Client[] = [];

beforeAll(async () => {
  relay = await startTestRelay({ name: 'handoff_targets' });
  const cards = [
    { handle: 'sender@acme', role: 'backend', skills: ['go'], repos_owned: ['services/api/'] },
    { handle: 'ana@acme', role: 'frontend', skills: ['react', 'css'], repos_owned: ['apps/web/'] },
    { handle: 'ben@acme', role: 'frontend', skills: ['react'], repos_owned: ['apps/'] },
    { handle: 'cy@acme', role: 'design', skills: ['figma'], repos_owned: ['apps/web/'] },
    { handle: 'dee@acme', role: 'qa', skills: ['react'], repos_owned: ['apps/mobile'] },
  ];
  for (const card of cards) keys[card.handle] = await relay.register(card);
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await relay?.stop();
});

async function mcp(handle: string): Promise<Client> {
  const client = await connectMcpHttp(relay.url, keys[handle]!, `targets-${handle}`);
  clients.push(client);
  return client;
}

function send(to: string, summary = `to ${to}`, from = 'sender@acme') {
  return relay.rpc(keys[from], 'message/send', {
    recipient: to,
    intent: 'inform',
    message: { role: 'user', parts: [{ type: 'text', text: summary }] },
  });
}

async function inbox(handle: string, status?: string[]): Promise<Array<{ thread_id: string; status: string }>> {
  const { body } = await relay.rpc(keys[handle], 'tasks/list', {
    filter: { role: 'recipient', ...(status ? { status } : {}) },
  });
  return body.result.items;
}

describe('one match', () => {
  test('role:design names one teammate: delivered to them as a handle would be', async () => {
    const { body } = await send('role:design');
    expect(body.result).toMatchObject({ status: { state: 'pending' }, recipient: 'cy@acme' });
    expect(body.result.candidates).toBeUndefined();
    expect((await inbox('cy@acme')).map((i) => i.thread_id)).toContain(body.result.task_id);
    const view = await relay.rpc(keys['cy@acme'], 'tasks/get', { task_id: body.result.task_id });
    expect(view.body.result).toMatchObject({
      status: 'pending',
      recipient: { handle: 'cy@acme' },
      to_target: 'role:design',
      candidates: ['cy@acme'],
    });
    expect(view.body.result.handoff_token).toMatch(/^hto_/);
  });

  test('owner:apps/web/src/App.tsx: the owners of the longest prefix (apps/web/ beats apps/), ties are several', async () => {
    const { body } = await send('owner:apps/web/src/App.tsx');
    expect(body.result).toMatchObject({
      status: { state: 'unclaimed' },
      recipient: 'owner:apps/web/src/App.tsx',
      candidates: ['ana@acme', 'cy@acme'],
    });
    const mobile = await send('owner:./apps/mobile/ios');
    expect(mobile.body.result).toMatchObject({ status: { state: 'pending' }, recipient: 'dee@acme' });
    const apps = await send('owner:apps/desktop/');
    expect(apps.body.result).toMatchObject({ status: { state: 'pending' }, recipient: 'ben@acme' });
  });

  test('a retry under the same key answers the same thread, even after the target has come to name others', async () => {
    const params = {
      recipient: 'role:qa',
      intent: 'inform',
      message: { role: 'user', parts: [{ type: 'text', text: 'qa retry' }] },
      metadata: { client_idempotency_key: 'qa-retry-1' },
    };
    const first = await relay.rpc(keys['sender@acme'], 'message/send', params);
    expect(first.body.result).toMatchObject({ status: { state: 'pending' }, recipient: 'dee@acme' });
    keys['eve@acme'] = await relay.register({ handle: 'eve@acme', role: 'qa' });
    const again = await relay.rpc(keys['sender@acme'], 'message/send', params);
    expect(again.body.result).toEqual(first.body.result);
  });

  test('the sender is never a candidate: role:backend from the only backend is recipient_not_found', async () => {
    const { body } = await send('role:backend');
    expect(body.error).toMatchObject({ code: -32004, data: { code: 'recipient_not_found' } });
    expect(body.error.message).toMatch(/No teammate but you/);
  });
});

describe('none', () => {
  test('recipient_not_found lists the roles (and skills) that do exist', async () => {
    const role = await send('role:security');
    expect(role.body.error).toMatchObject({ code: -32004 });
    expect(role.body.error.message).toContain('roles that exist: backend, design, frontend, qa');
    expect(role.body.error.data.details).toMatchObject({
      target: 'role:security',
      roles: ['backend', 'design', 'frontend', 'qa'],
    });
    const skill = await send('skill:rust');
    expect(skill.body.error.message).toContain('skills that exist: css, figma, go, react');
    const owner = await send('owner:infra/terraform/');
    expect(owner.body.error.message).toContain('owned paths: apps/, apps/mobile, apps/web/, services/api/');
  });
});

describe('bad targets', () => {
  test.each([
    ['role:', /role: needs a value after "role:"/],
    ['skill:  ', /skill: needs a value/],
    ['team:frontend', /must be a handle like name@team, or role:<role>, skill:<skill> or owner:<path>/],
    ['frontend', /must be a handle like name@team, or role:/],
    ['role:front end', /role: must be one word/],
    [`role:${'x'.repeat(65)}`, /role: must be at most 64 characters/],
  ])('%j is invalid_params naming the field and the forms, and creates nothing', async (to, message) => {
    const before = await inbox('ana@acme');
    const { body } = await send(to);
    expect(body.error).toMatchObject({ code: -32602 });
    expect(body.error.message).toMatch(/^params\.recipient: /);
    expect(body.error.message).toMatch(message);
    expect(await inbox('ana@acme')).toEqual(before);
  });

  test('MCP handoff_to_teammate refuses a malformed target before any call', async () => {
    const sender = await mcp('sender@acme');
    const text = toolErrorText(
      await sender.callTool({
        name: 'handoff_to_teammate',
        arguments: { to: 'squad:web', intent: 'inform', summary: 'x' },
      }),
    );
    expect(text).toMatch(/role:<role>, skill:<skill> or owner:<path>/);
  });
});

describe('several: unclaimed until the first claim', () => {
  test('each candidate sees it in check_inbox; others do not; the claimer keeps it, the rest lose it', async () => {
    const { body } = await send('skill:react', 'react work');
    const id = body.result.task_id as string;
    expect(body.result).toMatchObject({
      status: { state: 'unclaimed' },
      recipient: 'skill:react',
      candidates: ['ana@acme', 'ben@acme', 'dee@acme'],
    });
    for (const handle of ['ana@acme', 'ben@acme', 'dee@acme']) {
      expect(await inbox(handle, ['unclaimed'])).toEqual(
        expect.arrayContaining([expect.objectContaining({ thread_id: id, status: 'unclaimed' })]),
      );
    }
    expect((await inbox('cy@acme')).map((i) => i.thread_id)).not.toContain(id);

    // A candidate may read it (to decide); a non-candidate may not.
    const view = await relay.rpc(keys['ben@acme'], 'tasks/get', { task_id: id });
    expect(view.body.result).toMatchObject({
      status: 'unclaimed',
      to_target: 'skill:react',
      candidates: ['ana@acme', 'ben@acme', 'dee@acme'],
      claimed_by: null,
    });
    expect(view.body.result.handoff_token).toBeUndefined();
    expect((await relay.rpc(keys['cy@acme'], 'tasks/get', { task_id: id })).body.error).toMatchObject({
      data: { code: 'not_a_participant' },
    });
    // Nobody can accept an unclaimed handoff they are not a candidate for, nor decline it.
    expect(
      (await relay.rpc(keys['cy@acme'], 'tasks/update', { task_id: id, transition: 'claim' })).body.error.message,
    ).toMatch(/cy@acme is not one of the candidates/);

    const declined = await relay.rpc(keys['ana@acme'], 'tasks/update', {
      task_id: id,
      transition: 'decline',
      reason: 'no',
    });
    expect(declined.body.error).toMatchObject({ data: { code: 'invalid_transition' } });
    expect(declined.body.error.message).toMatch(/unclaimed: claim it first/);
    const claimed = await relay.rpc(keys['ben@acme'], 'tasks/update', { task_id: id, transition: 'claim' });
    expect(claimed.body.result).toMatchObject({
      thread_id: id,
      status: 'pending',
      recipient: 'ben@acme',
      claimed_by: 'ben@acme',
    });
    // The same claimer again: success, nothing changes. Another candidate: refused, saying who has it.
    expect(
      (await relay.rpc(keys['ben@acme'], 'tasks/update', { task_id: id, transition: 'claim' })).body.result,
    ).toEqual(claimed.body.result);
    const late = await relay.rpc(keys['ana@acme'], 'tasks/update', { task_id: id, transition: 'claim' });
    expect(late.body.error).toMatchObject({ code: -32008, data: { code: 'invalid_transition' } });
    expect(late.body.error.message).toMatch(/Already claimed by ben@acme/);

    expect((await inbox('ben@acme', ['pending'])).map((i) => i.thread_id)).toContain(id);
    for (const handle of ['ana@acme', 'dee@acme'])
      expect((await inbox(handle)).map((i) => i.thread_id)).not.toContain(id);
    const after = await relay.rpc(keys['ben@acme'], 'tasks/get', { task_id: id });
    expect(after.body.result).toMatchObject({
      status: 'pending',
      recipient: { handle: 'ben@acme' },
      claimed_by: 'ben@acme',
    });
    expect(after.body.result.handoff_token).toMatch(/^hto_/);
    expect(after.body.result.status_history.map((h: { status: string; by: string }) => [h.status, h.by])).toEqual([
      ['unclaimed', 'sender@acme'],
      ['pending', 'ben@acme'],
    ]);
    // The A2A read shows it as submitted, with who may claim it in the metadata.
    expect((await inbox('ana@acme')).map((i) => i.thread_id)).not.toContain(id);
  });

  test("each candidate's event log gets the unclaimed handoff's thread.created (GET /events)", async () => {
    const start = (await relay.rest('GET', '/events', keys['dee@acme'])).body.cursor as string;
    const { body } = await send('skill:react', 'events for candidates');
    const id = body.result.task_id as string;
    const events = await waitUntil(async () => {
      const page = await relay.rest('GET', `/events?since=${start}&wait=5`, keys['dee@acme']);
      const mine = (page.body.events as Array<{ thread_id: string; type: string }>).filter((e) => e.thread_id === id);
      return mine.length ? mine : undefined;
    }, 'the candidate event');
    expect(events.map((e) => e.type)).toEqual(['thread.created']);
  });

  test('20 concurrent claims by three candidates: exactly one owner, every loser told who', async () => {
    const { body } = await send('skill:react', 'race');
    const id = body.result.task_id as string;
    const handles = ['ana@acme', 'ben@acme', 'dee@acme'];
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        relay.rpc(keys[handles[i % 3]!], 'tasks/update', { task_id: id, transition: 'claim' }),
      ),
    );
    const won = answers.filter((a) => a.body.result).map((a) => a.body.result.claimed_by as string);
    const owner = won[0]!;
    expect(new Set(won)).toEqual(new Set([owner]));
    for (const lost of answers.filter((a) => a.body.error))
      expect(lost.body.error.message).toContain(`Already claimed by ${owner}`);
    const view = await relay.rpc(keys[owner], 'tasks/get', { task_id: id });
    expect(view.body.result.status_history.filter((h: { status: string }) => h.status === 'pending')).toHaveLength(1);
  });

  test('a claim after the sender cancelled changes nothing and says so', async () => {
    const { body } = await send('role:frontend', 'never mind');
    const id = body.result.task_id as string;
    expect(
      (await relay.rpc(keys['sender@acme'], 'tasks/cancel', { task_id: id, reason: 'done myself' })).body.result,
    ).toMatchObject({ status: 'cancelled' });
    const claim = await relay.rpc(keys['ana@acme'], 'tasks/update', { task_id: id, transition: 'claim' });
    expect(claim.body.error).toMatchObject({ data: { code: 'thread_terminal' } });
    expect(claim.body.error.message).toMatch(/cancelled before anyone claimed it/);
  });

  test('MCP: accept_handoff by a candidate claims and accepts in one call; check_inbox shows unclaimed', async () => {
    const sender = await mcp('sender@acme');
    const created = toolOk(
      await sender.callTool({
        name: 'handoff_to_teammate',
        arguments: { to: 'role:frontend', intent: 'inform', summary: 'MCP route' },
      }),
    );
    expect(created).toMatchObject({
      status: 'unclaimed',
      recipient: 'role:frontend',
      candidates: ['ana@acme', 'ben@acme'],
    });
    const ana = await mcp('ana@acme');
    const listed = toolOk(await ana.callTool({ name: 'check_inbox', arguments: { status: ['unclaimed'] } }));
    expect(listed.items.map((i: { thread_id: string }) => i.thread_id)).toContain(created.thread_id);
    const accepted = toolOk(
      await ana.callTool({ name: 'accept_handoff', arguments: { thread_id: created.thread_id } }),
    );
    expect(accepted).toMatchObject({ accepted: true, status: 'accepted' });
    const ben = await mcp('ben@acme');
    expect(
      toolErrorText(await ben.callTool({ name: 'accept_handoff', arguments: { thread_id: created.thread_id } })),
    ).toMatch(/Already claimed by ana@acme/);
  });

  test('A2A SendMessage with a target recipient in metadata reads back submitted with the candidates', async () => {
    const { body } = await relay.rpc(keys['sender@acme'], 'SendMessage', {
      message: {
        messageId: 'a2a-target-1',
        role: 'ROLE_USER',
        parts: [{ text: 'via a2a' }],
        metadata: { recipient: 'role:frontend', intent: 'inform' },
      },
    });
    const task = body.result.task ?? body.result;
    expect(task.status.state).toBe('TASK_STATE_SUBMITTED');
    expect(task.metadata.handoff).toMatchObject({
      status: 'unclaimed',
      to_target: 'role:frontend',
      candidates: ['ana@acme', 'ben@acme'],
      claimed_by: null,
    });
  });
});
