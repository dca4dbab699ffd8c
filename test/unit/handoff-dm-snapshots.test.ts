// Rendering snapshots, so a reviewer sees each DM as Slack gets it: every intent, every artifact type, every
// status for both readers, and a notice. Dates are fixed. Key pieces are also asserted outright, so a blind
// snapshot update cannot hide a regression in them.
import { THREAD_STATUSES, type Artifact } from '../../relay-core/domain/schemas';
import { handoffDm, type DmInput } from '../../bot/blocks/handoff-dm';
import {
  alice,
  bob,
  expectWithinSlackLimits,
  INBOX,
  inStatus,
  preview,
  thread,
  type RenderedMessage,
} from './handoff-dm-fixtures';

const dm = (input: Partial<DmInput> & Pick<DmInput, 'thread'>) => {
  const m = handoffDm({ sender: alice, recipient: bob, inboxUrl: INBOX, ...input }) as RenderedMessage;
  expectWithinSlackLimits(m);
  return m;
};

const question = thread({
  intent: 'ask_question',
  summary: 'The users endpoint now pages with cursors instead of offsets.',
  question: 'Does the web client page through users anywhere else?',
});
const proposal = thread({
  intent: 'propose_action',
  summary: 'Rename `userId` to `accountId` in the web client.',
  proposed_action: {
    description: 'Rename the prop everywhere it is passed.',
    target_files: ['apps/web/src/users.tsx', 'apps/web/src/account.tsx'],
    rationale: 'The API renamed the field in v2; keeping both names invites bugs.',
    suggested_diff: '-  <User userId={id} />\n+  <User accountId={id} />',
  },
});
const info = thread({ summary: 'Heads up: staging Redis restarts at 14:00 UTC.' });

describe('each intent', () => {
  test.each([
    ['inform', info, 'For your information'],
    ['ask_question', question, 'Asks you a question'],
    ['propose_action', proposal, 'Proposes an action for you'],
  ])('%s', (_name, t, label) => {
    const m = dm({ thread: t });
    expect(preview(m)).toContain(label);
    expect(preview(m)).toMatchSnapshot();
  });

  test('propose_action as full Block Kit JSON', () => {
    expect(dm({ thread: proposal })).toMatchSnapshot();
  });
});

describe('each artifact type', () => {
  const artifacts: Array<[string, Artifact, string]> = [
    [
      'file_diff',
      {
        type: 'file_diff',
        path: 'src/api/users.ts',
        diff: '@@ -10,3 +10,3 @@\n-  const offset = page * size;\n+  const cursor = decode(req.query.cursor);',
      },
      '```@@ -10,3 +10,3 @@',
    ],
    [
      'file_ref',
      { type: 'file_ref', path: 'src/api/users.ts', lines: '12-40', git_sha: '0123456789abcdef0123' },
      '`src/api/users.ts` lines 12-40 @ `0123456789ab`',
    ],
    [
      'test_command',
      { type: 'test_command', command: 'npm test -- users', cwd: 'services/api' },
      'in `services/api`\n```npm test -- users```',
    ],
    [
      'api_contract',
      {
        type: 'api_contract',
        schema_url: 'https://example.com/openapi.yaml',
        inline: 'paths:\n  /users:\n    get:\n      parameters: [cursor]',
      },
      '<https://example.com/openapi.yaml|example.com/openapi.yaml>',
    ],
    [
      'link',
      { type: 'link', url: 'https://github.com/acme/api/pull/42', title: 'PR #42: cursor paging' },
      '<https://github.com/acme/api/pull/42|PR #42: cursor paging> (github.com)',
    ],
  ];
  test.each(artifacts)('%s', (_name, artifact, piece) => {
    const m = dm({ thread: thread({ summary: 'See the attached.', artifacts: [artifact] }) });
    expect(preview(m)).toContain(piece);
    expect(preview(m)).toMatchSnapshot();
  });
});

describe('each status, for the recipient and for the sender', () => {
  const cases = THREAD_STATUSES.flatMap((status) =>
    (['recipient', 'sender'] as const).map((audience) => [status, audience] as const),
  );
  const expected: Record<string, string> = {
    pending: 'Sent by <@U0ALICE> via MCP',
    accepted: 'Accepted by <@U0BOB> via Slack',
    completed: 'Completed by <@U0BOB> via MCP',
    declined: 'Declined by <@U0BOB> via Slack',
    cancelled: 'Cancelled by <@U0ALICE> via the API',
    expired: ':hourglass: Expired ·',
    unclaimed: 'Sent by <@U0ALICE> via MCP',
    awaiting_approval: 'Held for approval by <@U0ALICE> via MCP',
    rejected: 'Rejected by `U0LEAD` via Slack',
  };
  test.each(cases)('%s, %s', (status, audience) => {
    const completion: Artifact[] = [{ type: 'link', url: 'https://github.com/acme/web/pull/7', title: 'web#7' }];
    const m = dm({ thread: inStatus(question, status, { artifacts: completion }), audience });
    expect(preview(m)).toContain(expected[status]);
    expect(preview(m)).toMatchSnapshot();
  });
});

test('an expired handoff offers its sender Resend, not its recipient', () => {
  const expired = inStatus(question, 'expired');
  expect(preview(dm({ thread: expired, audience: 'sender' }))).toContain('[Resend:primary]');
  expect(preview(dm({ thread: expired, audience: 'recipient' }))).not.toContain('Resend');
});

test('the sender DM says what the timers did', () => {
  const m = dm({
    thread: question,
    audience: 'sender',
    timerLine: ':alarm_clock: reminded <@U0BOB> · escalated back to you',
  });
  expect(preview(m)).toContain('(:alarm_clock: reminded <@U0BOB> · escalated back to you)');
});

test('a notice under the header', () => {
  const m = dm({ thread: question, notice: 'Verifying acceptance…' });
  expect(preview(m).split('\n')[2]).toBe('(:information_source: Verifying acceptance…)');
  expect(preview(m)).toMatchSnapshot();
});
