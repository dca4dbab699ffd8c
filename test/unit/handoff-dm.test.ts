// The DM block builder, without Slack: every intent and artifact renders, teammate text is escaped,
// and the largest handoff the relay accepts still fits Slack's limits.
import type { AgentDoc, ThreadDoc } from '../../relay-core/documents';
import { LIMITS, type Artifact } from '../../relay-core/schemas';
import { ACTION_IDS, handoffDm } from '../../bot/blocks/handoff-dm';
import { findBlockProblem, formatProblem } from '../fake-slack/block-limits';

const now = new Date('2026-11-30T10:00:00Z');
const agent = (handle: string, name: string, slack: string | null): AgentDoc => ({
  _id: handle, handle, team: 'acme', name, role: 'dev', skills: [], repos_owned: [], tools: [], slack_user_id: slack,
  status: 'active', blocked: [], notification: null, created_at: now, updated_at: now,
});
const sender = agent('alice@acme', 'Alice', 'U0ALICE');
const recipient = agent('bob@acme', 'Bob', 'U0BOB');

function thread(overrides: Partial<ThreadDoc> = {}): ThreadDoc {
  return {
    _id: '3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f', version: 1, team: 'acme', from: sender.handle, to: recipient.handle,
    intent: 'inform', summary: 'Summary', question: null, proposed_action: null, artifacts: [], metadata: {},
    status: 'pending', status_history: [{ status: 'pending', by: sender.handle, at: now, via: 'mcp' }], request_hash: 'h', body_hash: 'h',
    completed_summary: null, completion_artifacts: [], decline_reason: null, cancel_reason: null, created_at: now, updated_at: now,
    accepted_at: null, completed_at: null, declined_at: null, cancelled_at: null, message_seq: 0, message_counts: { from: 0, to: 0 }, outbox: [], outbox_dirty: false, slack: null,
    ...overrides,
  };
}

const render = (t: ThreadDoc) => handoffDm({ thread: t, sender, recipient, inboxUrl: `https://relay.example.com/inbox/${t._id}` });

function expectWithinLimits(message: { text: string; blocks: unknown[] }) {
  const problem = findBlockProblem(message.blocks, 'message');
  if (problem) throw new Error(formatProblem(problem));
  expect(message.text.length).toBeGreaterThan(0);
  expect(message.text.length).toBeLessThanOrEqual(40_000);
}

const buttons = (message: { blocks: any[] }) => message.blocks.flatMap((b) => (b.type === 'actions' ? b.elements : []));

test('each intent is shown plainly, with the question or the proposed action', () => {
  expect(JSON.stringify(render(thread()).blocks)).toContain('For your information');
  const ask = render(thread({ intent: 'ask_question', question: 'Cursor or offset?' }));
  expect(JSON.stringify(ask.blocks)).toContain('Asks you a question');
  expect(JSON.stringify(ask.blocks)).toContain('Cursor or offset?');
  const propose = render(
    thread({
      intent: 'propose_action',
      proposed_action: { description: 'Rename prop', target_files: ['apps/web/a.tsx'], rationale: 'Consistency', suggested_diff: '-a\n+b' },
    }),
  );
  const text = JSON.stringify(propose.blocks);
  for (const piece of ['Proposes an action', 'Rename prop', 'apps/web/a.tsx', 'Consistency', '```-a\\n+b```']) expect(text).toContain(piece);
});

test('every artifact type renders readably', () => {
  const artifacts: Artifact[] = [
    { type: 'file_diff', path: 'src/a.ts', diff: '-old\n+new' },
    { type: 'file_ref', path: 'src/b.ts', lines: '3-9', git_sha: 'deadbeefcafe1234' },
    { type: 'test_command', command: 'npm test', cwd: 'apps/web' },
    { type: 'api_contract', schema_url: 'https://example.com/openapi.yaml', inline: 'openapi: 3.1.0' },
    { type: 'link', url: 'https://example.com/pr/1', title: 'PR 1' },
  ];
  const text = JSON.stringify(render(thread({ artifacts })).blocks);
  for (const piece of ['src/a.ts', '```-old\\n+new```', 'src/b.ts', 'lines 3-9', 'deadbeefcafe', 'npm test', 'apps/web', 'openapi.yaml', 'openapi: 3.1.0', '<https://example.com/pr/1|PR 1>']) {
    expect(text).toContain(piece);
  }
});

test('teammate text cannot inject mentions, links or close a code fence', () => {
  const hostile = '<!channel> <@U0BOSS> <https://evil.example|click> & ``` break out';
  const message = render(thread({ summary: hostile, artifacts: [{ type: 'file_diff', path: '<!here>', diff: '```\n<!channel>' }] }));
  const text = JSON.stringify(message.blocks);
  expect(text).not.toMatch(/<!channel>|<!here>|<@U0BOSS>|<https:\/\/evil/);
  expect(text).toContain('&lt;!channel&gt;');
  expect(text).toContain('&amp;');
  const diffSection = (message.blocks as any[]).find((b) => b.type === 'section' && b.text.text.includes('*Diff*'));
  expect(diffSection.text.text.match(/```/g)).toHaveLength(2); // the fence opens and closes once
});

test('buttons follow the status: Accept while pending, Complete once accepted, none when finished', () => {
  expect(buttons(render(thread())).map((b) => b.action_id)).toEqual([ACTION_IDS.accept, ACTION_IDS.decline, ACTION_IDS.reply, ACTION_IDS.openInbox]);
  const accepted = render(thread({ status: 'accepted', accepted_at: now }));
  expect(buttons(accepted).map((b) => b.action_id)).toEqual([ACTION_IDS.complete, ACTION_IDS.reply, ACTION_IDS.openInbox]);
  expect(JSON.stringify(accepted.blocks)).toContain('Accepted by <@U0BOB>');
  expect(buttons(render(thread({ status: 'completed', completed_at: now }))).map((b) => b.action_id)).toEqual([ACTION_IDS.openInbox]);
  expect(JSON.parse(buttons(render(thread()))[0].value)).toEqual({ t: thread()._id, s: 'pending' });
});

test('the largest handoff the relay accepts fits every Slack limit, with a link to the rest', () => {
  const big = 'x'.repeat(60) + '\n';
  const artifacts: Artifact[] = Array.from({ length: LIMITS.artifacts }, (_, i) =>
    i % 2 === 0
      ? { type: 'file_diff', path: `src/${'p'.repeat(LIMITS.path - 10)}${i}`, diff: big.repeat(Math.floor(LIMITS.diff / big.length)) }
      : { type: 'api_contract', schema_url: `https://example.com/${'s'.repeat(1900)}`, inline: big.repeat(Math.floor(LIMITS.inlineContract / big.length)) },
  );
  const largest = thread({
    intent: 'propose_action',
    summary: '<&>'.repeat(Math.floor(LIMITS.summary / 3)),
    artifacts,
    proposed_action: {
      description: 'd'.repeat(LIMITS.description),
      target_files: Array.from({ length: LIMITS.targetFiles }, (_, i) => `${'f'.repeat(LIMITS.path - 5)}${i}`),
      rationale: '>'.repeat(LIMITS.rationale),
      suggested_diff: big.repeat(Math.floor(LIMITS.diff / big.length)),
    },
  });
  for (const status of ['pending', 'accepted', 'completed'] as const) {
    const message = render({ ...largest, status, accepted_at: now, completed_at: now });
    expectWithinLimits(message);
    expect(JSON.stringify(message.blocks)).toContain('view them in the inbox');
  }
  const diff = JSON.stringify(render(thread({ artifacts: [{ type: 'file_diff', path: 'a', diff: big.repeat(500) }] })).blocks);
  expect(diff).toContain('View the full diff');
  expect(diff).toMatch(/\\nx{60}```\\n_Diff shortened/); // cut on a whole line, fence closed
});
