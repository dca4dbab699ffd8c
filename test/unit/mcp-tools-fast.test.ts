// Every MCP tool through a real SDK Client on InMemoryTransport, over the server mcp/server.ts builds, against a scripted
// relay: what each tool asks the relay, what it answers, and how a relay refusal reaches the agent in words.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { RelayError } from '../../relay-core/domain/errors';
import { explainFailedTransition, TRANSITIONS } from '../../relay-core/domain/thread-lifecycle';
import { transitionView } from '../../relay-core/service/wire-views';
import { NOW } from '../fakes/use-case-ports';
import {
  apiDev,
  ScriptedRelayClient,
  webDev,
  wireItem,
  wireThread,
  wireThreadDoc,
} from '../fakes/scripted-relay-client';
import { connectInMemory } from '../helpers/mcp-in-memory-client';
import { toolErrorText, toolOk, type CallResult } from '../helpers/mcp-http-client';
import { withoutNonce } from '../helpers/provenance-nonce';
import { waitUntil } from '../helpers/wait-until';

let relay: ScriptedRelayClient;
let client: Client;
let close: () => Promise<void>;

beforeEach(async () => {
  relay = new ScriptedRelayClient();
  ({ client, close } = await connectInMemory(relay));
});

afterEach(() => close());

const call = (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args });
/** A successful answer without its provenance nonce. */
const ok = async (result: Promise<CallResult>) => withoutNonce(toolOk(await result));
/** The words of a refused call. */
const refusal = async (result: Promise<CallResult>) => toolErrorText(await result);

/** The tools this file covers: the listing test below fails for a tool the server offers without one. */
const covered = new Set<string>();
function describeTool(name: string, tests: () => void): void {
  covered.add(name);
  describe(name, tests);
}

const mark = (author: string, text: string) => `<teammate_content author="${author}">${text}</teammate_content>`;
const fromTeammate = (author: string) => ({ source: 'teammate', author, trusted: false });

test('every tool tools/list offers has its happy path and its refusal in this file', async () => {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name).sort()).toEqual([...covered].sort());
  expect(covered.size).toBeGreaterThanOrEqual(10);
});

describeTool('handoff_to_teammate', () => {
  test('sends one message/send with the summary as its text part and question, project and tools as metadata', async () => {
    const doc = wireThreadDoc({ intent: 'ask_question' });
    relay.on('message/send', {
      task_id: doc._id,
      status: { state: 'pending' },
      created_at: NOW.toISOString(),
      inbox_url: `https://relay.test/inbox/${doc._id}`,
      recipient: webDev.handle,
    });
    const answer = await ok(
      call('handoff_to_teammate', {
        to: webDev.handle,
        intent: 'ask_question',
        summary: 'The /users endpoint now pages.',
        question: 'Does the web client page anywhere else?',
        project: { project_id: 'web', repo: 'apps/web' },
        required_tools: ['node'],
        metadata: { ticket: 'WEB-1' },
      }),
    );
    expect(relay.calls).toEqual([
      {
        method: 'message/send',
        params: {
          task_id: null,
          recipient: webDev.handle,
          intent: 'ask_question',
          message: { role: 'user', parts: [{ type: 'text', text: 'The /users endpoint now pages.' }] },
          artifacts: [],
          proposed_action: null,
          metadata: {
            ticket: 'WEB-1',
            question: 'Does the web client page anywhere else?',
            project: { project_id: 'web', repo: 'apps/web' },
            required_tools: ['node'],
          },
        },
      },
    ]);
    expect(answer).toEqual({
      thread_id: doc._id,
      status: 'pending',
      recipient: webDev.handle,
      created_at: NOW.toISOString(),
      inbox_url: `https://relay.test/inbox/${doc._id}`,
    });
  });

  test('a create a policy holds answers awaiting_approval with the approval and its approvers', async () => {
    const doc = wireThreadDoc();
    relay.on('message/send', {
      task_id: doc._id,
      status: { state: 'awaiting_approval' },
      created_at: NOW.toISOString(),
      inbox_url: `https://relay.test/inbox/${doc._id}`,
      recipient: webDev.handle,
      approval: { approval_id: `${doc._id}_a0`, approvers: ['lead@acme'], quorum: 1, rule_id: 'r1' },
    });
    const answer = await ok(call('handoff_to_teammate', { to: webDev.handle, intent: 'inform', summary: 'FYI' }));
    expect(answer).toMatchObject({
      status: 'awaiting_approval',
      approval_id: `${doc._id}_a0`,
      approvers: ['lead@acme'],
    });
  });

  test('refused: an unknown recipient comes back as the relay said it, and a broken intent never reaches the relay', async () => {
    relay.refuse('message/send', 'recipient_not_found', 'No teammate matches role:mobile; roles: backend, frontend');
    expect(
      await refusal(call('handoff_to_teammate', { to: 'role:mobile', intent: 'inform', summary: 'FYI' })),
    ).toContain('recipient_not_found (-32004): No teammate matches role:mobile; roles: backend, frontend');

    const calls = relay.calls.length;
    const text = await refusal(
      call('handoff_to_teammate', { to: webDev.handle, intent: 'propose_action', summary: 'Do it' }),
    );
    expect(text).toContain('proposed_action is required when intent is \\"propose_action\\"');
    expect(relay.calls).toHaveLength(calls);
  });
});

describeTool('list_teammates', () => {
  test('asks agents/list with the filters and marks what each teammate wrote on their card', async () => {
    relay.on('agents/list', {
      teammates: [
        { handle: webDev.handle, name: webDev.name, role: 'frontend', skills: ['react'], repos_owned: ['apps/web/'] },
      ],
    });
    const answer = await ok(call('list_teammates', { role: 'frontend', skill: 'react' }));
    expect(relay.calls).toEqual([{ method: 'agents/list', params: { role: 'frontend', skill: 'react' } }]);
    expect(answer).toEqual({
      teammates: [
        {
          handle: webDev.handle,
          name: mark(webDev.handle, 'Web developer'),
          role: mark(webDev.handle, 'frontend'),
          skills: { _provenance: fromTeammate(webDev.handle), value: ['react'] },
          repos_owned: { _provenance: fromTeammate(webDev.handle), value: ['apps/web/'] },
        },
      ],
    });
  });

  test('refused: a relay that cannot answer says so', async () => {
    relay.refuse('agents/list', 'unavailable', 'The relay cannot read the directory right now; retry shortly');
    expect(await refusal(call('list_teammates', {}))).toContain(
      'unavailable (-32016): The relay cannot read the directory right now; retry shortly',
    );
  });
});

describeTool('view_thread', () => {
  test('reads tasks/get and answers the thread with every teammate-written field marked', async () => {
    const doc = wireThreadDoc({ question: null, metadata: { ticket: 'WEB-1', client_idempotency_key: 'k' } });
    relay.on('tasks/get', wireThread(doc));
    const answer = await ok(call('view_thread', { thread_id: doc._id }));
    expect(relay.calls).toEqual([{ method: 'tasks/get', params: { task_id: doc._id } }]);
    expect(answer).toMatchObject({
      thread_id: doc._id,
      status: 'pending',
      sender: { handle: apiDev.handle, name: mark(apiDev.handle, 'API developer') },
      summary: mark(apiDev.handle, doc.summary),
      metadata: { _provenance: fromTeammate(apiDev.handle), value: { ticket: 'WEB-1' } },
      status_history: [{ status: 'pending', by: apiDev.handle, at: NOW.toISOString(), via: 'mcp' }],
      inbox_url: `https://relay.test/inbox/${doc._id}`,
    });
  });

  test('refused: a thread the caller is not part of', async () => {
    relay.refuse('tasks/get', 'not_a_participant', 'You are neither the sender nor the recipient of this thread');
    expect(await refusal(call('view_thread', { thread_id: crypto.randomUUID() }))).toContain(
      'not_a_participant (-32005): You are neither the sender nor the recipient of this thread',
    );
  });
});

describeTool('check_inbox', () => {
  test('lists the received box through tasks/list, previews marked, with the next cursor', async () => {
    const doc = wireThreadDoc();
    relay.on('tasks/list', { items: [wireItem(doc, 2)], next_cursor: 'c2' });
    const answer = await ok(call('check_inbox', { status: ['pending'], limit: 5, cursor: 'c1' }));
    expect(relay.calls).toEqual([
      {
        method: 'tasks/list',
        params: { filter: { role: 'recipient', status: ['pending'] }, page: { limit: 5, cursor: 'c1' } },
      },
    ]);
    expect(answer).toEqual({
      items: [
        expect.objectContaining({
          thread_id: doc._id,
          summary_preview: mark(apiDev.handle, doc.summary),
          unread_messages: 2,
        }),
      ],
      next_cursor: 'c2',
    });
    expect(relay.eventQueries).toEqual([]);
  });

  test('with wait_seconds and since it waits on the event feed (held to 50 s) and lists the changes', async () => {
    const doc = wireThreadDoc();
    relay.on('tasks/list', { items: [wireItem(doc)] });
    relay.onEvents(() => ({
      events: [
        {
          cursor: '5',
          event_id: 'e5',
          type: 'thread.created',
          thread_id: doc._id,
          at: NOW.toISOString(),
          by: apiDev.handle,
          via: 'mcp',
          summary: 'not passed on',
        },
      ],
      cursor: '5',
    }));
    const answer = await ok(call('check_inbox', { box: 'sent', wait_seconds: 60, since: '4' }));
    expect(relay.eventQueries).toEqual([{ since: '4', wait_seconds: 50, limit: 100 }]);
    expect(relay.calls[0].params).toEqual({ filter: { role: 'sender' }, page: {} });
    expect(answer).toMatchObject({
      next_cursor: null,
      events_cursor: '5',
      changes: [
        {
          cursor: '5',
          thread_id: doc._id,
          type: 'thread.created',
          at: NOW.toISOString(),
          by: apiDev.handle,
          via: 'mcp',
        },
      ],
    });
  });

  test('refused: a cursor the relay does not know', async () => {
    relay.refuse('tasks/list', 'invalid_params', 'page.cursor: not a cursor of this list');
    expect(await refusal(call('check_inbox', { cursor: 'bogus' }))).toContain(
      'invalid_params (-32602): page.cursor: not a cursor of this list',
    );
  });
});

describeTool('send_message', () => {
  test('appends through message/send with the body as a text part and answers its sequence number', async () => {
    const doc = wireThreadDoc();
    const sent = { thread_id: doc._id, message_id: 'm1', sequence_no: 1, created_at: NOW.toISOString() };
    relay.on('message/send', sent);
    const artifacts = [{ type: 'link', url: 'https://example.com/q', title: 'Q' }];
    expect(
      await ok(call('send_message', { thread_id: doc._id, body: 'Which page size?', artifacts, payload: { n: 1 } })),
    ).toEqual(sent);
    expect(relay.calls).toEqual([
      {
        method: 'message/send',
        params: {
          task_id: doc._id,
          message: { role: 'user', parts: [{ type: 'text', text: 'Which page size?' }] },
          payload: { n: 1 },
          artifacts,
        },
      },
    ]);
  });

  test('refused: a finished thread takes no more messages', async () => {
    relay.refuse('message/send', 'thread_terminal', 'The handoff is completed; no more messages can be added');
    expect(await refusal(call('send_message', { thread_id: crypto.randomUUID(), body: 'late' }))).toContain(
      'thread_terminal (-32007): The handoff is completed; no more messages can be added',
    );
  });
});

/** The relay's own words for a transition `caller` may not make on `doc`. */
const transitionRefusal = (
  caller: typeof apiDev,
  transition: 'accept' | 'complete' | 'decline',
  doc = wireThreadDoc(),
) => explainFailedTransition(caller, { thread_id: doc._id, transition }, TRANSITIONS[transition], doc);

describeTool('accept_handoff', () => {
  test('asks tasks/update accept, with run when asked, and answers accepted', async () => {
    const doc = wireThreadDoc({ status: 'accepted', accepted_at: NOW });
    relay.on('tasks/update', { ...transitionView(doc), run: { run_id: 'r1', status: 'queued' } });
    const answer = await ok(call('accept_handoff', { thread_id: doc._id, run: true }));
    expect(relay.calls).toEqual([
      { method: 'tasks/update', params: { task_id: doc._id, transition: 'accept', run: true } },
    ]);
    expect(answer).toEqual({
      accepted: true,
      thread_id: doc._id,
      status: 'accepted',
      accepted_at: NOW.toISOString(),
      run: { run_id: 'r1', status: 'queued' },
    });
  });

  test('the verdict inputs go as verdict; a verdict that refuses answers accepted:false with its reasons', async () => {
    const doc = wireThreadDoc();
    relay.on('tasks/update', {
      thread_id: doc._id,
      status: 'pending',
      accepted_at: null,
      accepted: false,
      result: 'IDENTITY_MISMATCH',
      reasons: ['project_id web-2 is not the handoff project web'],
      identity_check: { ok: false },
      delivery_source: 'mcp',
    });
    const answer = await ok(call('accept_handoff', { thread_id: doc._id, project_id: 'web-2' }));
    expect(relay.calls[0].params).toEqual({
      task_id: doc._id,
      transition: 'accept',
      verdict: { project_id: 'web-2' },
    });
    expect(answer).toMatchObject({
      accepted: false,
      status: 'pending',
      accepted_at: null,
      result: 'IDENTITY_MISMATCH',
      reasons: ['project_id web-2 is not the handoff project web'],
      is_trusted_channel: false,
    });
  });

  test('refused: only the recipient accepts', async () => {
    const error = transitionRefusal(apiDev, 'accept');
    relay.refuse('tasks/update', error);
    expect(await refusal(call('accept_handoff', { thread_id: crypto.randomUUID() }))).toContain(
      'not_authorized_transition (-32009): Only the recipient (web-dev@acme) can accept this handoff',
    );
  });
});

describeTool('complete_handoff', () => {
  test('asks tasks/update complete with the summary and artifacts and answers what completing handed back', async () => {
    const artifacts = [{ type: 'link' as const, url: 'https://example.com/pr/9', title: 'PR' }];
    const doc = wireThreadDoc({ status: 'completed', completed_at: NOW, completion_artifacts: artifacts });
    relay.on('tasks/update', transitionView(doc));
    const answer = await ok(call('complete_handoff', { thread_id: doc._id, result_summary: 'Done', artifacts }));
    expect(relay.calls).toEqual([
      {
        method: 'tasks/update',
        params: { task_id: doc._id, transition: 'complete', result_summary: 'Done', artifacts },
      },
    ]);
    expect(answer).toEqual({
      thread_id: doc._id,
      status: 'completed',
      completed_at: NOW.toISOString(),
      completion_artifacts: artifacts,
    });
  });

  test('refused: a pending handoff must be accepted first', async () => {
    relay.refuse('tasks/update', transitionRefusal(webDev, 'complete'));
    expect(await refusal(call('complete_handoff', { thread_id: crypto.randomUUID() }))).toContain(
      'invalid_transition (-32008): Cannot complete a handoff that is pending',
    );
  });
});

describeTool('decline_handoff', () => {
  test('asks tasks/update decline with the reason and answers declined', async () => {
    const doc = wireThreadDoc({ status: 'declined', declined_at: NOW });
    relay.on('tasks/update', transitionView(doc));
    expect(await ok(call('decline_handoff', { thread_id: doc._id, reason: 'No capacity' }))).toEqual({
      thread_id: doc._id,
      status: 'declined',
      declined_at: NOW.toISOString(),
    });
    expect(relay.calls[0].params).toEqual({ task_id: doc._id, transition: 'decline', reason: 'No capacity' });
  });

  test('refused: a handoff already declined', async () => {
    relay.refuse('tasks/update', transitionRefusal(webDev, 'decline', wireThreadDoc({ status: 'declined' })));
    expect(await refusal(call('decline_handoff', { thread_id: crypto.randomUUID() }))).toContain(
      'thread_terminal (-32007): The handoff is already declined',
    );
  });
});

describeTool('draft_proposed_action', () => {
  const proposed = {
    description: 'Page through users',
    target_files: ['apps/web/users.ts'],
    rationale: 'The endpoint now pages',
  };

  test('reads the action with a drafting brief and attaches a draft diff as a file_diff message', async () => {
    const doc = wireThreadDoc({ intent: 'propose_action', proposed_action: proposed });
    relay.on('tasks/get', wireThread(doc, { handoff_token: 'tok' }));
    relay.on('message/send', { message_id: 'm1', sequence_no: 1, created_at: NOW.toISOString() });
    const answer = await ok(call('draft_proposed_action', { thread_id: doc._id, draft_diff: '-a\n+b' }));
    expect(relay.methods()).toEqual(['tasks/get', 'message/send']);
    expect(relay.calls[1].params).toEqual({
      task_id: doc._id,
      message: { role: 'user', parts: [{ type: 'text', text: 'Draft for the proposed action' }] },
      artifacts: [{ type: 'file_diff', path: 'apps/web/users.ts', diff: '-a\n+b' }],
      payload: { kind: 'draft' },
    });
    expect(answer).toMatchObject({
      thread_id: doc._id,
      action: {
        description: mark(apiDev.handle, 'Page through users'),
        target_files: { _provenance: fromTeammate(apiDev.handle), value: ['apps/web/users.ts'] },
        suggested_diff: null,
      },
      drafting_brief: expect.stringContaining('apps/web/users.ts'),
      attached: { message_id: 'm1', sequence_no: 1, created_at: NOW.toISOString() },
    });
  });

  test('refused: a handoff that is not propose_action, and one the caller did not receive, write nothing', async () => {
    relay.on('tasks/get', wireThread(wireThreadDoc(), { handoff_token: 'tok' }));
    expect(await refusal(call('draft_proposed_action', { thread_id: crypto.randomUUID(), draft_diff: 'x' }))).toContain(
      'invalid_intent_payload: this handoff is not a propose_action',
    );
    relay.on('tasks/get', wireThread(wireThreadDoc({ intent: 'propose_action', proposed_action: proposed })));
    expect(await refusal(call('draft_proposed_action', { thread_id: crypto.randomUUID(), draft_diff: 'x' }))).toContain(
      'not_authorized_transition: only the recipient drafts the proposed action',
    );
    relay.refuse('tasks/get', 'thread_not_found', 'No thread 1');
    expect(await refusal(call('draft_proposed_action', { thread_id: crypto.randomUUID() }))).toContain(
      'thread_not_found (-32006): No thread 1',
    );
    expect(relay.methods()).not.toContain('message/send');
  });
});

describeTool('check_approval', () => {
  const approvalId = `${crypto.randomUUID()}_a0`;
  const approval = {
    approval_id: approvalId,
    thread_id: approvalId.slice(0, 36),
    action: 'handoff.create',
    actor: apiDev.handle,
    status: 'pending',
    approvers: ['lead@acme'],
    quorum: 1,
    approved_by: [],
    rule_id: 'r1',
    policy_version: 'v1',
    reason: null,
    decided_by: null,
    decided_at: null,
    outcome: null,
    created_at: NOW.toISOString(),
    deadline: NOW.toISOString(),
    on_timeout: 'deny',
    history: [],
  };

  test('reads approvals/get by approval id and answers where it stands (without the relay-only fields)', async () => {
    relay.on('approvals/get', { approvals: [approval] });
    const answer = await ok(call('check_approval', { approval_id: approvalId }));
    expect(relay.calls).toEqual([{ method: 'approvals/get', params: { approval_id: approvalId } }]);
    const { rule_id: _r, policy_version: _p, created_at: _c, history: _h, ...shown } = approval;
    expect(answer).toEqual({ approvals: [shown] });
  });

  test('refused: an unknown approval, and a call naming both an approval and a thread never reaches the relay', async () => {
    relay.refuse('approvals/get', 'not_found', `No approval ${approvalId}`);
    expect(await refusal(call('check_approval', { approval_id: approvalId }))).toContain(
      `not_found (-32015): No approval ${approvalId}`,
    );
    expect(
      await refusal(call('check_approval', { approval_id: approvalId, thread_id: approvalId.slice(0, 36) })),
    ).toContain('give exactly one of approval_id or thread_id');
    expect(relay.calls).toHaveLength(1);
  });
});

test('a refusal is logged to the client as a warning naming the method and thread (never its content)', async () => {
  const messages: unknown[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void messages.push(n.params));
  const id = crypto.randomUUID();
  relay.refuse('tasks/update', new RelayError('thread_terminal', 'The handoff is already declined'));
  await call('accept_handoff', { thread_id: id });
  await waitUntil(async () => messages.length > 0, 'the log message');
  expect(messages).toEqual([
    expect.objectContaining({
      level: 'warning',
      logger: 'handoff-relay',
      data: expect.objectContaining({ method: 'tasks/update', thread_id: id, code: 'thread_terminal' }),
    }),
  ]);
});
