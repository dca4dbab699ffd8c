// The Claim card, pure: Claim while unclaimed, "Claimed by … · time" once claimed, cancelled before a claim; escaped
// teammate text and Slack's limits for the largest summary.
import { claimCard, CLAIM_ACTION_IDS } from '../../bot/blocks/claim-card';
import { handoffDm } from '../../bot/blocks/handoff-dm';
import type { AgentDoc, ThreadDoc } from '../../relay-core/domain/documents';
import { alice, agent, at, expectWithinSlackLimits, largestThread, thread } from './handoff-dm-fixtures';

const ana = agent('ana@acme', 'Ana', 'U0ANA');
const ben = agent('ben@acme', 'Ben', null);
const people = new Map<string, AgentDoc | null>([
  [ana.handle, ana],
  [ben.handle, ben],
]);
const unclaimed = (over: Partial<ThreadDoc> = {}): ThreadDoc =>
  thread({
    to: 'role:frontend',
    to_target: 'role:frontend',
    candidates: ['ana@acme', 'ben@acme'],
    status: 'unclaimed',
    claimed_by: null,
    claimed_at: null,
    ...over,
  });
const text = (m: { blocks: unknown[] }) => JSON.stringify(m.blocks);
const buttons = (m: { blocks: any[] }) => m.blocks.flatMap((b) => (b.type === 'actions' ? b.elements : []));

test('unclaimed: who sent it for which target, the candidates, and one Claim button carrying the thread', () => {
  const m = claimCard({
    thread: unclaimed(),
    sender: alice,
    claimer: null,
    candidates: people,
    inboxUrl: 'https://relay.test/inbox/t',
  });
  expect(text(m)).toContain('<@U0ALICE> shares context for `role:frontend`');
  expect(text(m)).toContain('Candidates: <@U0ANA>, *Ben*');
  expect(buttons(m)).toEqual([
    expect.objectContaining({ action_id: CLAIM_ACTION_IDS.claim, style: 'primary' }),
    expect.objectContaining({
      action_id: 'handoff_open_inbox',
      text: expect.objectContaining({ text: 'View in inbox' }),
      url: 'https://relay.test/inbox/t',
    }),
  ]);
  expect(JSON.parse(buttons(m)[0].value)).toEqual({ t: unclaimed()._id, s: 'unclaimed' });
  expect(m.text).toMatch(/^Handoff for role:frontend \(unclaimed\)/);
});

test('claimed: no Claim button, "Claimed by" with the date and time token in the reader’s zone', () => {
  const m = claimCard({
    thread: unclaimed({ status: 'pending', to: 'ana@acme', claimed_by: 'ana@acme', claimed_at: at(5) }),
    sender: alice,
    claimer: ana,
    candidates: people,
    inboxUrl: 'https://relay.test/inbox/t',
  });
  expect(buttons(m).map((b: any) => b.action_id)).toEqual(['handoff_open_inbox']);
  expect(text(m)).toContain(
    `Claimed by <@U0ANA>* · <!date^${Math.floor(at(5).getTime() / 1000)}^{date_short_pretty} at {time}|${at(5).toISOString().slice(0, 16).replace('T', ' ')} UTC>`,
  );
  expect(m.text).toContain('(claimed by Ana)');
});

test('cancelled before anyone claimed it: no button, says so', () => {
  const m = claimCard({
    thread: unclaimed({ status: 'cancelled', updated_at: at(9) }),
    sender: alice,
    claimer: null,
    candidates: people,
    inboxUrl: 'https://relay.test/inbox/t',
  });
  expect(buttons(m).map((b: any) => b.action_id)).toEqual(['handoff_open_inbox']);
  expect(text(m)).toContain('Cancelled by <@U0ALICE>* before anyone claimed it');
});

test('teammate text is escaped and the largest handoff stays within Slack limits', () => {
  const hostile = claimCard({
    thread: unclaimed({ summary: '<!channel> *bold* <https://evil|x>' }),
    sender: alice,
    claimer: null,
    candidates: people,
    inboxUrl: 'https://relay.test/inbox/t',
  });
  expect(text(hostile)).not.toContain('<!channel>');
  const big = claimCard({
    thread: {
      ...largestThread(),
      to: 'skill:react',
      to_target: 'skill:react',
      candidates: ['ana@acme', 'ben@acme'],
      status: 'unclaimed',
    },
    sender: alice,
    claimer: null,
    candidates: people,
    inboxUrl: 'https://relay.test/inbox/t',
  });
  expectWithinSlackLimits(big);
  expect(text(big)).toContain('the claimer sees all of it');
  // As many artifacts as fit are shown, the rest counted with the inbox link.
  expect(text(big)).toMatch(/\+\d+ more artifacts: <https:\/\/relay\.test\/inbox\/t\|view them in the inbox>/);
});

test('every artifact shows on the card as on the DM', () => {
  const artifacts = [
    { type: 'link', url: 'https://github.com/acme/web/pull/42', title: 'PR 42: fix the flicker' },
    { type: 'file_ref', path: 'web/src/login.tsx', repo: 'acme/web' },
  ] as ThreadDoc['artifacts'];
  const card = claimCard({
    thread: unclaimed({ artifacts }),
    sender: alice,
    claimer: null,
    candidates: people,
    inboxUrl: 'https://relay.test/inbox/t',
  });
  const dm = handoffDm({
    thread: unclaimed({ artifacts }),
    sender: alice,
    recipient: null,
    inboxUrl: 'https://relay.test/inbox/t',
  });
  const artifactTexts = (m: { blocks: any[] }) =>
    JSON.stringify(m.blocks).match(/PR 42: fix the flicker|web\/src\/login\.tsx/g);
  expect(artifactTexts(card)).toEqual(artifactTexts(dm));
  expect(artifactTexts(card)).toEqual(expect.arrayContaining(['PR 42: fix the flicker', 'web/src/login.tsx']));
  expectWithinSlackLimits(card);
});
