// The messages use case (relay-core/service/messages.ts) over a recording ledger, appender and policy: an append is
// asked of the policy as message.append (a draft as draft.attach) and appended under the caller's key; an approved
// one is appended as its actor under the approval's id, or answers why it no longer applies. The append itself on the
// real store: test/integration/ (messages, idempotency).
import { RelayError } from '../../relay-core/domain/errors';
import type { AppendRequest } from '../../relay-core/service/message-append';
import { Messages } from '../../relay-core/service/messages';
import { agent, NOW, pendingApproval } from '../fakes/use-case-ports';
import { threadDocAt } from '../helpers/thread-docs';

const sender = agent('sender@acme');
const recipient = agent('recipient@acme');
const thread = threadDocAt(sender.handle, recipient.handle, 'accepted', NOW);
const request: AppendRequest = { thread_id: thread._id, body: 'Which page size?', payload: {}, artifacts: [] };

function setup(appended: () => Promise<unknown> = async () => undefined, refusal?: RelayError) {
  const steps: unknown[][] = [];
  const messages = new Messages({
    ledger: {
      run: async (caller, key, body, operation) => {
        steps.push(['ledger', caller, key, body]);
        return operation(key === undefined ? null : ({ id: `turn-${key}` } as never));
      },
    },
    policy: {
      forChange: async (...args) => {
        steps.push(['policy', ...args]);
        if (refusal) throw refusal;
        return { read: thread } as never;
      },
    },
    appender: {
      append: async (...args) => {
        steps.push(['append', ...args]);
        await appended();
        return { thread_id: thread._id, message_id: 'm1', sequence_no: 3, created_at: NOW.toISOString() };
      },
    },
  });
  return { messages, steps };
}

test('an append is asked of the policy as message.append, then appended with the thread the policy read, under the key', async () => {
  const { messages, steps } = setup();
  const answer = await messages.append(recipient, request, 'mcp', 'key-1', 'session-1');
  expect(answer).toMatchObject({ message_id: 'm1', sequence_no: 3 });
  expect(steps).toEqual([
    ['ledger', recipient.handle, 'key-1', { method: 'append', ...request }],
    ['policy', recipient, thread._id, 'message.append', 'mcp', 'session-1', request],
    ['append', recipient, request, 'mcp', { id: 'turn-key-1' }, thread],
  ]);
});

test('a draft for a proposed action is its own action: draft.attach', async () => {
  const { messages, steps } = setup();
  await messages.append(recipient, { ...request, payload: { kind: 'draft' } }, 'mcp');
  expect(steps[1]).toEqual(['policy', recipient, thread._id, 'draft.attach', 'mcp', undefined, expect.anything()]);
});

test('refused: a policy that holds or denies the append answers so, and nothing is appended', async () => {
  const { messages, steps } = setup(undefined, new RelayError('approval_pending', 'A lead must approve this message'));
  await expect(messages.append(recipient, request, 'slack')).rejects.toMatchObject({ code: 'approval_pending' });
  expect(steps.map((s) => s[0])).toEqual(['ledger', 'policy']);
});

test('an approved append is appended as its actor, under the approval id, by the surface it was asked on', async () => {
  const { messages, steps } = setup();
  const record = pendingApproval(thread, {
    action: 'message.append',
    actor: recipient.handle,
    via: 'slack',
    status: 'approved',
    args: { ...request },
  });
  expect(await messages.appendApproved(thread, record, recipient)).toEqual({
    message: 'message.append was applied as recipient@acme (message 3)',
  });
  expect(steps).toEqual([
    ['ledger', recipient.handle, `approval:${record.id}`, { method: 'append', ...request }],
    ['append', recipient, request, 'slack', { id: `turn-approval:${record.id}` }],
  ]);
});

test('refused: an approved append the thread no longer takes answers why; a passing failure is thrown to retry', async () => {
  const record = pendingApproval(thread, { action: 'message.append', actor: recipient.handle, args: { ...request } });
  const closed = setup(async () => {
    throw new RelayError('thread_terminal', 'The handoff is completed; no more messages can be added');
  });
  expect(await closed.messages.appendApproved(thread, record, recipient)).toEqual({
    refusal: 'The handoff is completed; no more messages can be added',
  });
  const busy = setup(async () => {
    throw new RelayError('unavailable', 'The database is unreachable');
  });
  await expect(busy.messages.appendApproved(thread, record, recipient)).rejects.toMatchObject({ code: 'unavailable' });
});
