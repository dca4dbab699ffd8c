// Who approves (relay-core/service/approval-approvers.ts) over a fixed team: a rule's approver names resolved to
// people (a handle, a Slack user, everyone in a role, the sender's or recipient's lead), never the caller, each once;
// a name that resolves to nobody refuses the call in words naming it; and who a decision's voter is. Over the relay:
// test/integration/approvals.test.ts and policy-*.test.ts.
import type { AgentDoc } from '../../relay-core/domain/documents';
import { Approvers } from '../../relay-core/service/approval-approvers';
import type { PublicCard } from '../../relay-core/service/teammates';
import { agent } from '../fakes/use-case-ports';
import { refusal } from '../helpers/refusal';

const sam = { ...agent('sam@acme'), lead: 'lead@acme' };
const rita = { ...agent('rita@acme'), role: 'sre', slack_user_id: 'U0RITA' };
const otto = { ...agent('otto@acme'), role: 'sre' };
const lead = { ...agent('lead@acme'), slack_user_id: 'U0LEAD' };
const gone = { ...agent('gone@acme'), role: 'dba', status: 'disabled' as const };
const noLead = agent('nolead@acme');
const TEAM: AgentDoc[] = [sam, rita, otto, lead, gone, noLead];

/** The card a listing shows. */
const publicCard = ({ handle, name, role, skills, repos_owned }: AgentDoc): PublicCard => ({
  handle,
  name,
  role,
  skills,
  repos_owned,
});

const approvers = new Approvers({
  teammates: {
    get: async (handle) => TEAM.find((a) => a.handle === handle) ?? null,
    bySlackUser: async (id) => TEAM.find((a) => a.slack_user_id === id) ?? null,
    list: async (filter) => TEAM.filter((a) => a.status === 'active' && a.role === filter.role).map(publicCard),
  },
});
/** Sam's call to Rita, as the actor `actor`. */
const resolve = (names: string[], actor: AgentDoc = sam) =>
  approvers.resolve(names, { sender: sam, recipient: rita, actor }, 'needs-review', 0);
const labels = async (names: string[], actor?: AgentDoc) => (await resolve(names, actor)).map((r) => r.label);

test('a handle, a Slack user, a role and a lead each resolve to the people they name', async () => {
  expect(await resolve(['lead@acme'])).toEqual([
    { label: 'lead@acme', handle: 'lead@acme', slack_user_id: 'U0LEAD', source: 'lead@acme', step: 0 },
  ]);
  expect(await resolve(['U0RITA'])).toEqual([
    { label: 'rita@acme', handle: 'rita@acme', slack_user_id: 'U0RITA', source: 'U0RITA', step: 0 },
  ]);
  expect(await labels(['role:sre'])).toEqual(['rita@acme', 'otto@acme']);
  expect(await resolve(['sender_lead'])).toEqual([
    expect.objectContaining({ label: 'lead@acme', source: 'sender_lead' }),
  ]);
});

test('a Slack user not linked to a teammate approves as that Slack user', async () => {
  expect(await resolve(['U0STRANGER'])).toEqual([
    { label: 'U0STRANGER', handle: null, slack_user_id: 'U0STRANGER', source: 'U0STRANGER', step: 0 },
  ]);
});

test('the caller never approves their own call, and nobody is named twice', async () => {
  expect(await labels(['role:sre'], rita)).toEqual(['otto@acme']);
  expect(await labels(['lead@acme', 'U0LEAD', 'sender_lead', 'rita@acme'])).toEqual(['lead@acme', 'rita@acme']);
});

test.each([
  ['an unknown handle', ['ghost@acme'], 'approver ghost@acme is not an active teammate'],
  ['a disabled teammate', ['gone@acme'], 'approver gone@acme is not an active teammate'],
  ['a role nobody active has', ['role:dba'], 'approver role:dba names no active teammate'],
  ['a lead the card does not name', ['recipient_lead'], 'approver recipient_lead: rita@acme has no lead on their card'],
])('%s refuses the call, naming the entry', async (_what, names, why) => {
  expect(await refusal(resolve(names))).toMatchObject({
    code: 'policy_denied',
    message: `Policy rule needs-review needs approval, but ${why}; ask an admin to fix the policy or the card`,
    details: { rule_id: 'needs-review', approver: why },
  });
});

test('a role whose only member is the caller, or approvers who are all the caller, refuse it too', async () => {
  const onlyMe = { ...otto, role: 'dba' };
  const solo = new Approvers({
    teammates: { get: async () => onlyMe, bySlackUser: async () => null, list: async () => [publicCard(onlyMe)] },
  });
  const call = { sender: sam, recipient: rita, actor: onlyMe };
  expect((await refusal(solo.resolve(['role:dba'], call, 'r', 0))).message).toContain(
    'approver role:dba names no active teammate other than the caller',
  );
  expect((await refusal(resolve(['sam@acme']))).message).toContain('nobody but the caller (sam@acme) could approve it');
});

test("a decision's voter: a teammate with their linked Slack user, or a Slack user with theirs; an unknown handle refused", async () => {
  expect(await approvers.voterFor('lead@acme')).toEqual({
    handle: 'lead@acme',
    slack_user_id: 'U0LEAD',
    label: 'lead@acme',
  });
  expect(await approvers.voterFor('U0RITA')).toEqual({
    handle: 'rita@acme',
    slack_user_id: 'U0RITA',
    label: 'rita@acme',
  });
  expect(await approvers.voterFor('U0STRANGER')).toEqual({
    handle: null,
    slack_user_id: 'U0STRANGER',
    label: 'U0STRANGER',
  });
  expect(await refusal(approvers.voterFor('gone@acme'))).toMatchObject({
    code: 'invalid_params',
    message: 'body.as: no active teammate with handle gone@acme',
  });
});
