// The policy asked about a change to an existing thread (relay-core/service/thread-policy.ts) on the in-memory threads
// and a scripted policy gate: a participant's change is stamped with the policy's decision, a held one recorded as an
// approval request and answered approval_pending; a claim or Reassign is judged as if sent to the new recipient, a
// deny refusing it in words; an approved call is checked again against the policy now in force. The gate's rules
// themselves: policy.test.ts; over the relay: test/integration/policy-*.test.ts.
import type { AgentDoc, PolicyStamp, ThreadDoc } from '../../relay-core/domain/documents';
import type { PolicyDecision } from '../../relay-core/domain/policy-decision';
import { HandoffTokens } from '../../relay-core/service/handoff-tokens';
import type { GateRequest, HeldStamp } from '../../relay-core/service/policy-gate';
import { ThreadPolicy } from '../../relay-core/service/thread-policy';
import { InMemoryThreads } from '../fakes/in-memory-threads';
import {
  agent,
  approvalRequestsOn,
  approvalRule,
  pendingApproval,
  recordingOutbox,
  storedPending,
  storedUnclaimed,
  teammatesOf,
} from '../fakes/use-case-ports';
import { refusal } from '../helpers/refusal';

const sam = agent('sam@acme');
const rita = agent('rita@acme');
const eve = agent('eve@acme');
const lead = agent('lead@acme');
const ALLOW: PolicyStamp = { rule_id: 'r-allow', effect: 'allow', policy_version: 'v2' };
const DENY: PolicyDecision = {
  effect: 'deny',
  rule_id: 'no-weekend',
  policy_version: 'v2',
  reason: 'not on weekends',
};

function setup(opts: { gate?: boolean; check?: PolicyStamp | HeldStamp | 'replay'; explain?: PolicyDecision } = {}) {
  const threads = new InMemoryThreads();
  const tokens = new HandoffTokens('fast-tier-secret');
  const team: AgentDoc[] = [sam, rita, lead];
  const asked: Array<{ kind: 'check' | 'explain'; request: GateRequest }> = [];
  const approvals = approvalRequestsOn(threads, recordingOutbox(), team);
  const policy = new ThreadPolicy({
    store: threads,
    teammates: teammatesOf(team),
    ...(opts.gate === false
      ? {}
      : {
          gate: {
            check: async (request) => (asked.push({ kind: 'check', request }), opts.check ?? ALLOW),
            explain: async (request) => (
              asked.push({ kind: 'explain', request }),
              opts.explain ?? { effect: 'allow', rule_id: null, policy_version: 'v2' }
            ),
          },
        }),
    requests: approvals.requests,
  });
  const pending = (over: Partial<ThreadDoc> = {}) =>
    storedPending(threads, tokens, sam, rita).then(async (doc) => {
      await threads.writeThread(doc._id, (d) => ({ ...d, ...over }));
      return (await threads.readThread(doc._id))!;
    });
  return { threads, tokens, policy, asked, pending, approvals, team };
}

describe('a change to a thread', () => {
  test("a participant's change is stamped with the decision, asked with the thread's facts", async () => {
    const { policy, asked, pending } = setup();
    const doc = await pending();
    const { stamp, read } = await policy.forChange(rita, doc._id, 'handoff.accept', 'slack', 'sess-1', {});
    expect(stamp).toEqual(ALLOW);
    expect(read?._id).toBe(doc._id);
    expect(asked).toEqual([
      {
        kind: 'check',
        request: expect.objectContaining({
          action: 'handoff.accept',
          via: 'slack',
          actor: rita,
          sender: sam,
          recipient: rita,
          intent: 'inform',
          thread_id: doc._id,
          session_id: 'sess-1',
        }),
      },
    ]);
  });

  test('not asked: without a policy, for a stranger, for the recipient of a held create, for an unknown thread', async () => {
    const without = setup({ gate: false });
    const doc = await without.pending();
    expect(without.policy.enforced).toBe(false);
    expect(await without.policy.forChange(rita, doc._id, 'handoff.accept', 'api', undefined, {})).toEqual({
      stamp: undefined,
    });
    const { policy, asked, pending } = setup();
    const mine = await pending();
    const held = await pending({ hidden_from_recipient: true, status: 'awaiting_approval' });
    expect((await policy.forChange(eve, mine._id, 'message.append', 'api', undefined, {})).stamp).toBeUndefined();
    expect((await policy.forChange(rita, held._id, 'message.append', 'api', undefined, {})).stamp).toBeUndefined();
    expect(
      await policy.forChange(rita, '00000000-0000-4000-8000-000000000000', 'handoff.accept', 'api', undefined, {}),
    ).toEqual({ stamp: undefined });
    expect(asked).toEqual([]);
  });

  test('a change the gate sees as a replay of an earlier one carries no stamp', async () => {
    const { policy, pending } = setup({ check: 'replay' });
    const doc = await pending();
    expect((await policy.forChange(rita, doc._id, 'handoff.accept', 'api', undefined, {})).stamp).toBeUndefined();
  });

  test('a held change is recorded as an approval request and answered approval_pending; nothing else changes', async () => {
    const held: HeldStamp = {
      rule_id: 'needs-lead',
      effect: 'require_approval',
      policy_version: 'v2',
      hold: approvalRule([lead.handle]),
    };
    const { policy, threads, pending, approvals } = setup({ check: held });
    const doc = await pending();
    const error = await refusal(policy.forChange(rita, doc._id, 'handoff.accept', 'slack', undefined, { note: 'ok' }));
    expect(error).toMatchObject({
      code: 'approval_pending',
      details: { approvers: [lead.handle], rule_id: 'needs-lead' },
    });
    expect(approvals.opened).toEqual([
      expect.objectContaining({ action: 'handoff.accept', actor: rita.handle, args: { note: 'ok' } }),
    ]);
    expect(await threads.readThread(doc._id)).toMatchObject({ status: 'pending' });
  });
});

describe('as if sent to the new recipient (a claim, a Reassign)', () => {
  test("allowed: the decision's stamp; the gate asked about handoff.create from the sender to them", async () => {
    const { policy, asked, pending } = setup();
    const doc = await pending();
    expect(await policy.asIfSent(sam, lead, doc, 'slack')).toEqual({
      rule_id: null,
      effect: 'allow',
      policy_version: 'v2',
    });
    expect(asked[0]).toMatchObject({
      kind: 'explain',
      request: { action: 'handoff.create', actor: sam, sender: sam, recipient: lead },
    });
  });

  test('denied: policy_denied naming the rule, the pair and the reason', async () => {
    const { policy, pending } = setup({ explain: DENY });
    const doc = await pending();
    expect(await refusal(policy.asIfSent(sam, lead, doc, 'slack'))).toMatchObject({
      code: 'policy_denied',
      message: 'Policy rule no-weekend denies handoffs from sam@acme to lead@acme: not on weekends',
      details: { rule_id: 'no-weekend', policy_version: 'v2', reason: 'not on weekends' },
    });
  });

  test('a claim is judged as sent by its sender to the claimer; none when the sender is gone or no policy', async () => {
    const { policy, pending, threads, tokens, team } = setup({ explain: DENY });
    const unclaimed = await storedUnclaimed(threads, tokens, sam, { kind: 'role', value: 'sre', label: 'role:sre' }, [
      lead.handle,
    ]);
    expect((await refusal(policy.forClaim(lead, unclaimed, 'slack'))).code).toBe('policy_denied');
    team.splice(team.indexOf(sam), 1);
    expect(await policy.forClaim(lead, await pending(), 'slack')).toBeUndefined();
    expect(await setup({ gate: false }).policy.forClaim(lead, unclaimed, 'slack')).toBeUndefined();
  });
});

describe('an approved call, checked again', () => {
  test('null while the policy still lets it through; in words when a rule now denies it', async () => {
    const allowed = setup();
    const doc = await allowed.pending();
    const record = pendingApproval(doc, { action: 'handoff.accept', actor: rita.handle });
    expect(await allowed.policy.recheck(doc, record, rita)).toBeNull();
    const denied = setup({ explain: DENY });
    expect(await denied.policy.recheck(doc, record, rita)).toBe(
      'the policy changed since it was asked: rule no-weekend (policy v2) now denies handoff.accept: not on weekends',
    );
  });

  test('a party no longer a teammate refuses it; a held create to a role is judged with the role as its recipient', async () => {
    const { policy, pending, asked, team } = setup();
    const toRole = await pending({ to: 'role:sre', to_target: 'role:sre' });
    const record = pendingApproval(toRole);
    expect(await policy.recheck(toRole, record, sam)).toBeNull();
    expect(asked[0]!.request.recipient).toMatchObject({ handle: 'role:sre', role: 'sre' });
    team.splice(team.indexOf(sam), 1);
    expect(await policy.recheck(toRole, record, sam)).toBe('sam@acme is no longer a teammate');
  });
});
