// Creating a handoff (relay-core/service/create-handoff.ts) on the in-memory thread port: a handoff to a teammate is
// stored pending with its token, thread.created and its first timer step; one to a role, skill or owner goes to its
// one match or waits unclaimed for its candidates; a rule that requires approval holds it (hidden from its
// recipient); a retry under the same key answers the same thread, a different body under it is refused; bad input
// is refused in words with nothing stored. The same over JSON-RPC, MCP and Slack: test/integration/.
import pino from 'pino';
import { approvalId } from '../../relay-core/domain/approval';
import type { AgentDoc, PolicyStamp, ThreadDoc } from '../../relay-core/domain/documents';
import { RelayError } from '../../relay-core/domain/errors';
import { newHandoffSchema } from '../../relay-core/domain/schemas';
import { CreateHandoff } from '../../relay-core/service/create-handoff';
import { HandoffTokens } from '../../relay-core/service/handoff-tokens';
import { InboxLinks } from '../../relay-core/service/inbox-links';
import type { GateRequest, HeldStamp } from '../../relay-core/service/policy-gate';
import { InMemoryThreads } from '../fakes/in-memory-threads';
import { agent, approvalRequestsOn, approvalRule, NOW, recordingOutbox, teammatesOf } from '../fakes/use-case-ports';
import { refusal } from '../helpers/refusal';

const sam = agent('sam@acme');
const rita = { ...agent('rita@acme'), role: 'frontend', skills: ['react'] };
const fay = { ...agent('fay@acme'), role: 'frontend' };
const otto = { ...agent('otto@acme'), role: 'backend', repos_owned: ['apps/api/'] };
const lead = agent('lead@acme');
const gone = { ...agent('gone@acme'), status: 'disabled' as const };
const TEAM = [sam, rita, fay, otto, lead, gone];
const ALLOW: PolicyStamp = { rule_id: null, effect: 'allow', policy_version: 'v1' };

type Gate = (request: GateRequest, isReplay: () => Promise<boolean>) => Promise<PolicyStamp | HeldStamp | 'replay'>;

function setup(opts: { team?: AgentDoc[]; gate?: Gate; firstStep?: (doc: ThreadDoc) => Promise<ThreadDoc> } = {}) {
  const team = opts.team ?? TEAM;
  const threads = new InMemoryThreads();
  const outbox = recordingOutbox();
  const asked: GateRequest[] = [];
  const approvals = approvalRequestsOn(threads, outbox, team);
  const links = new InboxLinks('https://relay.test', 'fast-tier-secret');
  const creates = new CreateHandoff({
    store: threads,
    teammates: teammatesOf(team),
    outbox,
    tokens: new HandoffTokens('fast-tier-secret'),
    links,
    gate: {
      check: async (request, isReplay) => {
        asked.push(request);
        return opts.gate ? opts.gate(request, isReplay ?? (async () => false)) : ALLOW;
      },
    },
    approvals: approvals.requests,
    timers: {
      withFirstStep:
        opts.firstStep ??
        (async (doc) =>
          ({
            ...doc,
            timers: { fired: {}, next: { kind: 'remind', at: new Date(NOW.getTime() + 60_000) } },
          }) as ThreadDoc),
    },
    clock: { now: () => NOW },
    log: pino({ level: 'silent' }),
  });
  const create = (input: Record<string, unknown>, sender: AgentDoc = sam) =>
    creates.create(
      sender,
      newHandoffSchema.parse({ intent: 'inform', summary: 'Read the release notes', ...input }),
      'api',
    );
  const events = () => outbox.published.map((e) => e.type);
  return { threads, creates, create, asked, events, links, approvals };
}

describe('to a teammate', () => {
  test('a handoff is stored pending with its token and first timer step; the answer links the sender to it', async () => {
    const { threads, create, events, links, asked } = setup();
    const answer = await create({ to: rita.handle, metadata: { ticket: 'WEB-1' } });
    expect(answer).toEqual({
      task_id: expect.any(String),
      status: { state: 'pending' },
      created_at: NOW.toISOString(),
      inbox_url: links.url(answer.task_id, sam.handle),
      recipient: rita.handle,
    });
    const [doc] = threads.all();
    expect(doc).toMatchObject({
      _id: answer.task_id,
      from: sam.handle,
      to: rita.handle,
      status: 'pending',
      summary: 'Read the release notes',
      metadata: { ticket: 'WEB-1' },
      timers: { next: { kind: 'remind' } },
      status_history: [{ status: 'pending', by: sam.handle, via: 'api', policy: ALLOW }],
    });
    expect(doc!.handoff_token).toEqual(expect.objectContaining({ nonce: expect.any(String) }));
    expect(events()).toEqual(['thread.created']);
    expect(asked).toEqual([expect.objectContaining({ action: 'handoff.create', actor: sam, recipient: rita })]);
  });

  test('a first timer step that cannot be armed still creates the handoff (its arm job arms it later)', async () => {
    const { threads, create } = setup({ firstStep: async () => Promise.reject(new Error('zone unknown')) });
    const answer = await create({ to: rita.handle });
    expect(answer.status.state).toBe('pending');
    expect(threads.all()).toHaveLength(1);
  });

  test('a retry under the same key answers the same thread: one thread, one event', async () => {
    const { threads, create, events } = setup({
      gate: async (_request, isReplay) => ((await isReplay()) ? 'replay' : ALLOW),
    });
    const first = await create({ to: rita.handle, idempotency_key: 'k-1' });
    const again = await create({ to: rita.handle, idempotency_key: 'k-1' });
    expect(again).toEqual(first);
    expect(threads.all()).toHaveLength(1);
    expect(events()).toEqual(['thread.created']);
  });

  test('a retry that reaches the insert (the policy did not see it as a replay) still answers the same thread', async () => {
    const { threads, create, events } = setup();
    const first = await create({ to: rita.handle, idempotency_key: 'k-1' });
    expect(await create({ to: rita.handle, idempotency_key: 'k-1' })).toEqual(first);
    expect(threads.all()).toHaveLength(1);
    expect(events()).toEqual(['thread.created']);
  });

  test('the same key with another body is refused; the first thread stays as it was', async () => {
    const { threads, create, events } = setup();
    await create({ to: rita.handle, idempotency_key: 'k-1' });
    const error = await refusal(create({ to: rita.handle, idempotency_key: 'k-1', summary: 'Something else' }));
    expect(error).toMatchObject({
      code: 'duplicate_idempotency_key',
      message: 'This idempotency key was already used with a different request body',
    });
    expect(threads.all().map((d) => d.summary)).toEqual(['Read the release notes']);
    expect(events()).toEqual(['thread.created']);
  });

  test("one sender's key is not another's: the same key makes each their own thread", async () => {
    const { threads, create } = setup();
    const a = await create({ to: rita.handle, idempotency_key: 'k-1' });
    const b = await create({ to: rita.handle, idempotency_key: 'k-1' }, otto);
    expect(a.task_id).not.toBe(b.task_id);
    expect(threads.all()).toHaveLength(2);
  });
});

describe('refused, and nothing is stored', () => {
  test.each([
    [
      'a proposal without its action',
      { to: rita.handle, intent: 'propose_action' },
      'invalid_intent_payload',
      'proposed_action is required when intent is "propose_action"',
    ],
    [
      'a question on an inform',
      { to: rita.handle, question: 'Why?' },
      'invalid_intent_payload',
      'question is only allowed when intent is "ask_question" (got "inform")',
    ],
    [
      'an unknown handle',
      { to: 'ghost@acme' },
      'recipient_not_found',
      'No active teammate with handle ghost@acme; call list_teammates to find the right handle',
    ],
    [
      'a disabled teammate',
      { to: gone.handle },
      'recipient_not_found',
      'No active teammate with handle gone@acme; call list_teammates to find the right handle',
    ],
    [
      'a role nobody has',
      { to: 'role:design' },
      'recipient_not_found',
      'No active teammate matches role:design; roles that exist: backend, frontend. Call list_teammates to see the cards',
    ],
  ])('%s', async (_what, input, code, message) => {
    const { threads, create, events } = setup();
    expect(await refusal(create(input))).toMatchObject({ code, message });
    expect(threads.all()).toEqual([]);
    expect(events()).toEqual([]);
  });

  test('a block between sender and recipient', async () => {
    const blocked = { ...rita, blocked: [sam.handle] };
    const { threads, create } = setup({ team: [sam, blocked] });
    expect((await refusal(create({ to: rita.handle }))).code).toBe('teammate_blocked');
    expect(threads.all()).toEqual([]);
  });

  test('a role whose only match is the sender', async () => {
    const { threads, create } = setup();
    const error = await refusal(create({ to: 'role:backend' }, otto));
    expect(error.message).toMatch(/^No teammate but you \(or one a block separates you from\) matches role:backend/);
    expect(threads.all()).toEqual([]);
  });

  test('a policy that denies it: its refusal reaches the sender', async () => {
    const { threads, create, events } = setup({
      gate: async () => {
        throw new RelayError('policy_denied', 'Policy rule no-friday-deploys denies handoff.create');
      },
    });
    expect(await refusal(create({ to: rita.handle }))).toMatchObject({ code: 'policy_denied' });
    expect(threads.all()).toEqual([]);
    expect(events()).toEqual([]);
  });
});

describe('to a role, skill or owner', () => {
  test('several candidates: it waits unclaimed for them (not the sender), the target as its recipient', async () => {
    const { threads, create, events } = setup();
    const answer = await create({ to: 'role:frontend' }, fay);
    expect(answer).toMatchObject({ status: { state: 'pending' }, recipient: rita.handle });
    const toRole = await create({ to: 'role:frontend' });
    expect(toRole).toMatchObject({
      status: { state: 'unclaimed' },
      recipient: 'role:frontend',
      candidates: [fay.handle, rita.handle],
    });
    expect(threads.all().find((d) => d._id === toRole.task_id)).toMatchObject({
      status: 'unclaimed',
      to: 'role:frontend',
      candidates: [fay.handle, rita.handle],
    });
    expect(events()).toEqual(['thread.created', 'thread.created']);
  });

  test('one match: it goes to them, remembering the target it was sent to', async () => {
    const { threads, create } = setup();
    const answer = await create({ to: 'owner:apps/api/server.ts' });
    expect(answer).toMatchObject({ status: { state: 'pending' }, recipient: otto.handle });
    expect(threads.all()[0]).toMatchObject({
      to: otto.handle,
      to_target: 'owner:apps/api/server.ts',
      candidates: [otto.handle],
    });
  });

  test('a retry to a target answers the same thread even when the target names someone else by then', async () => {
    const team = [...TEAM];
    const { threads, create } = setup({ team });
    const answer = await create({ to: 'skill:react', idempotency_key: 'k-2' });
    expect(answer.recipient).toBe(rita.handle);
    // Fay learns react: the target now names two candidates, yet the retry is the same request.
    team[team.indexOf(fay)] = { ...fay, skills: ['react'] };
    expect(await create({ to: 'skill:react', idempotency_key: 'k-2' })).toEqual(answer);
    expect(threads.all()).toHaveLength(1);
  });
});

describe('held for approval', () => {
  const held =
    (approvers: string[]): Gate =>
    async () => ({
      rule_id: 'needs-lead',
      effect: 'require_approval',
      policy_version: 'v1',
      hold: approvalRule(approvers),
    });

  test('a rule that requires approval stores it awaiting approval, hidden from its recipient, with no timer step', async () => {
    const { threads, create, events, approvals } = setup({ gate: held([lead.handle]) });
    const answer = await create({ to: rita.handle });
    expect(answer).toMatchObject({
      status: { state: 'awaiting_approval' },
      recipient: rita.handle,
      approval: {
        approval_id: approvalId(answer.task_id, 1),
        approvers: [lead.handle],
        quorum: 1,
        rule_id: 'needs-lead',
      },
    });
    const [doc] = threads.all();
    expect(doc).toMatchObject({ status: 'awaiting_approval', hidden_from_recipient: true });
    expect(doc!.timers).toBeFalsy();
    expect(events()).toEqual(['thread.awaiting_approval']);
    expect(approvals.opened.map((r) => r.id)).toEqual([answer.approval!.approval_id]);
    expect(approvals.armed.map((r) => r.id)).toEqual([answer.approval!.approval_id]);
  });

  test('a retry of a held create answers it held again, and opens no second approval', async () => {
    const { threads, create, approvals } = setup({ gate: held([lead.handle]) });
    const first = await create({ to: rita.handle, idempotency_key: 'k-3' });
    expect(await create({ to: rita.handle, idempotency_key: 'k-3' })).toEqual(first);
    expect(threads.all()).toHaveLength(1);
    expect(approvals.opened).toHaveLength(1);
  });

  test('an approver that does not resolve refuses the create before anything is stored', async () => {
    const { threads, create, events, approvals } = setup({ gate: held(['ghost@acme']) });
    expect((await refusal(create({ to: rita.handle }))).code).toBe('policy_denied');
    expect(threads.all()).toEqual([]);
    expect(events()).toEqual([]);
    expect(approvals.opened).toEqual([]);
  });
});
