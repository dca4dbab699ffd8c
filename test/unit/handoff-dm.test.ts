// The DM block builder, without Slack: every intent, artifact, status and audience renders what a reader needs,
// teammate text is escaped, and the largest handoff the relay accepts still fits Slack's limits.
import { LIMITS, THREAD_STATUSES, type Artifact } from '../../relay-core/domain/schemas';
import { ACTION_IDS, handoffDm, type DmInput } from '../../bot/blocks/handoff-dm';
import { WEB_INBOX_ACTION_IDS } from '../../bot/blocks/web-inbox';
import {
  alice,
  allText,
  bob,
  buttons,
  expectWithinSlackLimits,
  HOSTILE,
  INBOX,
  inStatus,
  largestAgent,
  largestArtifacts,
  largestThread,
  T0,
  thread,
  THREAD_ID,
  type RenderedMessage,
} from './handoff-dm-fixtures';

const dm = (input: DmInput) => handoffDm(input) as RenderedMessage;
const render = (t = thread(), extra: Partial<DmInput> = {}) =>
  dm({ thread: t, sender: alice, recipient: bob, inboxUrl: INBOX, ...extra });
const joined = (m: { text: string; blocks: unknown[] }) => allText(m as any).join('\n');
const sectionWith = (m: { blocks: any[] }, piece: string) =>
  m.blocks.find((b) => b.type === 'section' && b.text.text.includes(piece))?.text.text as string;

test('each intent is shown plainly, with the question or the proposed action', () => {
  expect(joined(render())).toContain('For your information');
  const ask = render(thread({ intent: 'ask_question', question: 'Cursor or offset?' }));
  expect(joined(ask)).toContain('Asks you a question');
  expect(sectionWith(ask, '*Question*')).toBe('*Question*\n>Cursor or offset?');
  const propose = render(
    thread({
      intent: 'propose_action',
      proposed_action: {
        description: 'Rename prop',
        target_files: ['apps/web/a.tsx', 'apps/web/b.tsx'],
        rationale: 'Consistency',
        suggested_diff: '-a\n+b',
      },
    }),
  );
  expect(joined(propose)).toContain('Proposes an action for you');
  expect(sectionWith(propose, '*Proposed action*')).toBe(
    '*Proposed action*\nRename prop\n*Files:* `apps/web/a.tsx`, `apps/web/b.tsx`',
  );
  expect(sectionWith(propose, '*Rationale*')).toBe('*Rationale*\nConsistency');
  expect(sectionWith(propose, '*Suggested diff*')).toBe('*Suggested diff*\n```-a\n+b```');
});

test('the header names the sender and handle; the recipient and sender each see their side', () => {
  const forBob = render();
  expect(forBob.blocks[0]).toEqual({
    type: 'header',
    text: { type: 'plain_text', text: 'Handoff from Alice (alice@acme)', emoji: true },
  });
  expect(joined(forBob)).toContain('From <@U0ALICE> `alice@acme` to <@U0BOB> `bob@acme`');
  const forAlice = render(thread(), { audience: 'sender' });
  expect(forAlice.blocks[0].text.text).toBe('Your handoff to Bob (bob@acme)');
  expect(joined(forAlice)).toContain('You shared this for their information');
  expect(joined(forAlice)).toContain('Waiting for Bob to accept');
  // A 200-character name gives way; the handle always shows whole.
  const long = dm({ thread: thread(), sender: { ...alice, name: 'N'.repeat(200) }, recipient: bob, inboxUrl: INBOX });
  expect(long.blocks[0].text.text.length).toBeLessThanOrEqual(150);
  expect(long.blocks[0].text.text).toMatch(/^Handoff from N+… \(alice@acme\)$/);
});

test('every artifact type renders readably', () => {
  const artifacts: Artifact[] = [
    { type: 'file_diff', path: 'src/a.ts', diff: '-old\n+new' },
    { type: 'file_ref', path: 'src/b.ts', lines: '3-9', git_sha: 'deadbeefcafe1234' },
    { type: 'test_command', command: 'npm test -- users', cwd: 'apps/web' },
    { type: 'api_contract', schema_url: 'https://example.com/openapi.yaml', inline: 'openapi: 3.1.0' },
    { type: 'api_contract', schema_url: 'https://example.com/only-link.yaml' },
    { type: 'link', url: 'https://example.com/pr/1', title: 'PR 1' },
    { type: 'link', url: 'https://example.com/pr/2' },
  ];
  const m = render(thread({ artifacts }));
  expect(sectionWith(m, '*Diff*')).toBe(':page_facing_up: *Diff* `src/a.ts`\n```-old\n+new```');
  expect(sectionWith(m, '*File*')).toBe(':bookmark_tabs: *File* `src/b.ts` lines 3-9 @ `deadbeefcafe`');
  expect(sectionWith(m, '*Test command*')).toBe(':test_tube: *Test command* in `apps/web`\n```npm test -- users```');
  expect(sectionWith(m, 'openapi.yaml')).toBe(
    ':scroll: *API contract* <https://example.com/openapi.yaml|example.com/openapi.yaml>\n```openapi: 3.1.0```',
  );
  expect(sectionWith(m, 'only-link')).toBe(
    ':scroll: *API contract* <https://example.com/only-link.yaml|example.com/only-link.yaml>',
  );
  expect(sectionWith(m, 'PR 1')).toBe(':link: <https://example.com/pr/1|PR 1> (example.com)');
  expect(sectionWith(m, 'pr/2')).toBe(':link: <https://example.com/pr/2|example.com/pr/2>');
});

test('every status shows who acted, from where and when, with the result or the reason', () => {
  const date = (minutes: number) => `<!date^${T0.getTime() / 1000 + minutes * 60}^{date_short_pretty} at {time}|`;
  const sent = `:outbox_tray: Sent by <@U0ALICE> via MCP · ${date(0)}2026-11-30 10:00 UTC>`;
  const pending = sectionWith(render(), '*Status:');
  expect(pending).toBe(`*Status: Waiting for you to accept or decline*\n${sent}`);

  const accepted = sectionWith(render(inStatus(thread(), 'accepted')), '*Status:');
  expect(accepted).toContain(`:white_check_mark: Accepted by <@U0BOB> via Slack · ${date(5)}`);

  const completedMsg = render(
    inStatus(thread(), 'completed', { artifacts: [{ type: 'link', url: 'https://example.com/pr/9', title: 'PR 9' }] }),
  );
  const completed = sectionWith(completedMsg, '*Status:');
  expect(completed.split('\n')).toHaveLength(4);
  expect(completed).toContain(`:tada: Completed by <@U0BOB> via MCP · ${date(90)}`);
  expect(sectionWith(completedMsg, '*Result*')).toBe('*Result*\nSwitched the web client to cursor paging.');
  expect(joined(completedMsg)).toContain('<https://example.com/pr/9|PR 9>');

  const declinedMsg = render(inStatus(thread(), 'declined'));
  expect(sectionWith(declinedMsg, '*Status:')).toContain(`:no_entry_sign: Declined by <@U0BOB> via Slack · ${date(7)}`);
  expect(sectionWith(declinedMsg, 'Why it was declined')).toBe(
    '*Why it was declined*\n>Not my area; ask the platform team.',
  );

  const cancelledMsg = render(inStatus(thread(), 'cancelled'));
  expect(sectionWith(cancelledMsg, '*Status:')).toContain(
    `:wastebasket: Cancelled by <@U0ALICE> via the API · ${date(30)}`,
  );
  expect(sectionWith(cancelledMsg, 'Why it was cancelled')).toBe('*Why it was cancelled*\n>Fixed it myself.');

  // Someone without a linked Slack account is named, not mentioned.
  const unlinked = dm({
    thread: inStatus(thread(), 'accepted'),
    sender: alice,
    recipient: { ...bob, slack_user_id: null },
    inboxUrl: INBOX,
  });
  expect(sectionWith(unlinked, '*Status:')).toContain('Accepted by *Bob* via Slack');
});

test('buttons follow the status and the audience; the inbox and the web inbox are always one click away', () => {
  const ids = (t = thread(), audience?: 'recipient' | 'sender') =>
    buttons(render(t, { audience })).map((b: any) => b.action_id);
  const { accept, decline, complete, reply, openInbox, handToAgent, stopAgent } = ACTION_IDS;
  const web = WEB_INBOX_ACTION_IDS.open;
  expect(ids()).toEqual([accept, decline, handToAgent, reply, openInbox, web]);
  expect(ids(inStatus(thread(), 'accepted'))).toEqual([handToAgent, complete, reply, openInbox, web]);
  // While the recipient's agent has it: Stop instead of Hand to my agent (and nothing to stop once a stop was asked).
  const run = {
    id: 'r1',
    status: 'running' as const,
    runner: 'laptop',
    queued_at: new Date(),
    started_at: new Date(),
    last_update_at: null,
    last_line: null,
    stop_requested: false,
    finished_at: null,
  };
  expect(ids({ ...inStatus(thread(), 'accepted'), run })).toEqual([stopAgent, complete, reply, openInbox, web]);
  expect(ids({ ...inStatus(thread(), 'accepted'), run: { ...run, stop_requested: true } })).toEqual([
    complete,
    reply,
    openInbox,
    web,
  ]);
  expect(ids({ ...inStatus(thread(), 'accepted'), run }, 'sender')).toEqual([reply, openInbox, web]);
  for (const status of ['completed', 'declined', 'cancelled'] as const) {
    expect(ids(inStatus(thread(), status))).toEqual([openInbox, web]);
    expect(ids(inStatus(thread(), status), 'sender')).toEqual([openInbox, web]);
  }
  expect(ids(thread(), 'sender')).toEqual([reply, openInbox, web]);
  expect(ids(inStatus(thread(), 'accepted'), 'sender')).toEqual([reply, openInbox, web]);

  const all = buttons(render());
  expect(all.map((b: any) => b.text.text)).toEqual([
    'Accept',
    'Decline',
    'Hand to my agent',
    'Reply',
    'View in inbox',
    'Open web inbox',
  ]);
  for (const b of all.slice(0, 4)) expect(JSON.parse(b.value)).toEqual({ t: THREAD_ID, s: 'pending' });
  expect(all[4].url).toBe(INBOX);
  expect(JSON.parse(buttons(render(inStatus(thread(), 'accepted')))[0].value)).toEqual({ t: THREAD_ID, s: 'accepted' });
});

test('a notice shows right under the header, escaped', () => {
  const m = render(thread(), { notice: 'Not accepted (CAPABILITY_UNAVAILABLE): needs <repo> access & @here' });
  expect(m.blocks[1]).toEqual({
    type: 'context',
    elements: [
      {
        type: 'mrkdwn',
        text: ':information_source: Not accepted (CAPABILITY_UNAVAILABLE): needs &lt;repo&gt; access &amp; @\u2060here',
        verbatim: true,
      },
    ],
  });
  expect(render().blocks[1].elements[0].text).not.toContain(':information_source:');
});

test('the notification text is plain, short and says what happened', () => {
  expect(render(thread({ intent: 'ask_question', question: 'q', summary: 'Cursor\nor offset?' })).text).toBe(
    'Alice (alice@acme) asks you a question: Cursor or offset?',
  );
  expect(render(inStatus(thread(), 'accepted')).text).toBe('Accepted · Alice (alice@acme) sent you a handoff: Summary');
  expect(render(thread(), { audience: 'sender' }).text).toBe('Your handoff to Bob: waiting to be accepted · Summary');
  expect(render(inStatus(thread(), 'declined'), { audience: 'sender' }).text).toBe(
    'Your handoff to Bob: declined · Summary',
  );
  const long = render(thread({ summary: 'word '.repeat(2000) }));
  expect(long.text.length).toBeLessThan(250);
});

test('teammate text cannot ping a channel, mention someone, fake a link or close a code fence', () => {
  const hostileArtifacts: Artifact[] = [
    { type: 'file_diff', path: HOSTILE, diff: `${HOSTILE}\n\`\`\`\n<!channel>\n\`` },
    { type: 'file_ref', path: HOSTILE },
    { type: 'test_command', command: HOSTILE, cwd: HOSTILE },
    { type: 'api_contract', schema_url: 'https://contract.example/a|b>c<@U0BOSS>', inline: HOSTILE },
    { type: 'link', url: 'https://good.example/x|<!channel>', title: `${HOSTILE} | https://bank.example` },
  ];
  const hostileThread = thread({
    intent: 'propose_action',
    summary: HOSTILE,
    question: HOSTILE,
    artifacts: hostileArtifacts,
    proposed_action: {
      description: HOSTILE,
      target_files: [HOSTILE, 'a`b'],
      rationale: HOSTILE,
      suggested_diff: HOSTILE,
    },
  });
  const sender = { ...alice, name: HOSTILE, slack_user_id: null };
  for (const status of THREAD_STATUSES) {
    for (const audience of ['recipient', 'sender'] as const) {
      const t = inStatus(hostileThread, status, { summary: HOSTILE, reason: HOSTILE, artifacts: hostileArtifacts });
      const m = dm({ thread: t, sender, recipient: bob, inboxUrl: INBOX, audience, notice: HOSTILE });
      expectWithinSlackLimits(m);
      for (const text of allText(m)) {
        // No broadcast Slack would act on, whether written as a special sequence or a bare word.
        expect(text).not.toMatch(/<!(channel|here|everyone|subteam)/);
        expect(text).not.toMatch(/@(channel|here|everyone)\b/);
        // Every <…> sequence is one the builder wrote: our people, dates, the inbox, or a sanitised artifact URL.
        for (const [seq] of text.matchAll(/<[^>]*>/g)) {
          expect(seq).toMatch(
            /^<@U0BOB>$|^<!date\^\d+\^\{date_short_pretty\} at \{time\}\|[^|<>]+>$|^<https:\/\/[^|<>\s]+\|[^<>|]+>$/,
          );
          expect(seq.split('|')[0]).not.toContain('evil.example'); // a label may mention it as text; no link goes there
        }
      }
      // Every code fence opens and closes once per block: teammate backticks cannot end one early.
      for (const block of m.blocks.filter((b: any) => b.type === 'section')) {
        expect((block.text.text.match(/```/g) ?? []).length % 2).toBe(0);
      }
      const texts = joined(m);
      expect(texts).toContain('&lt;!channel&gt;');
      expect(texts).toContain('&lt;https://evil.example|your bank&gt;');
      expect(texts).toContain('<https://contract.example/a%7Cb%3Ec%3C@U0BOSS%3E|');
      expect(texts).toContain('<https://good.example/x%7C%3C!channel%3E|');
      expect(texts).toContain('(good.example)'); // the real host beside a title that names another
    }
  }
});

test('a diff containing fences stays inside its own fence', () => {
  const m = render(thread({ artifacts: [{ type: 'file_diff', path: 'a.md', diff: '```js\ncode\n```\n`' }] }));
  expect(sectionWith(m, '*Diff*')).toBe(
    ':page_facing_up: *Diff* `a.md`\n```' + '\u200b``\u200b`js\ncode\n``\u200b`\n`\u200b```',
  );
});

test('a long diff is cut on whole lines, the fence closed, with a link to the full diff', () => {
  const diffLines = Array.from({ length: 500 }, (_, i) => `+line ${String(i).padStart(3, '0')} ${'x'.repeat(50)}`);
  const m = render(thread({ artifacts: [{ type: 'file_diff', path: 'a.ts', diff: diffLines.join('\n') }] }));
  const diff = sectionWith(m, '*Diff*');
  const body = diff.slice(diff.indexOf('```') + 3, diff.lastIndexOf('```')).split('\n');
  expect(body.length).toBeGreaterThan(10);
  expect(body).toEqual(diffLines.slice(0, body.length)); // whole lines, in order, none cut mid-way
  expect(diff).toContain(`\`\`\`\n_Diff shortened (${body.length} of 500 lines)._ <${INBOX}|View the full diff>`);
});

test('a long summary, question and proposed action are cut with a link to the whole text', () => {
  const m = render(
    thread({
      intent: 'propose_action',
      summary: 's'.repeat(LIMITS.summary),
      proposed_action: {
        description: 'd'.repeat(LIMITS.description),
        target_files: ['a'],
        rationale: 'r'.repeat(LIMITS.rationale),
        suggested_diff: '+x\n'.repeat(5000),
      },
    }),
  );
  const text = joined(m);
  for (const what of ['summary', 'description', 'rationale'])
    expect(text).toContain(`<${INBOX}|Read the whole ${what} in the inbox>`);
  expect(sectionWith(m, '*Suggested diff*')).toContain(`<${INBOX}|View the full diff>`);
});

test('the largest handoff the relay accepts fits every Slack limit, for both readers, in every status, with a notice', () => {
  const largest = largestThread();
  const sender = largestAgent(largest.from);
  const recipient = largestAgent(largest.to);
  for (const status of THREAD_STATUSES) {
    for (const audience of ['recipient', 'sender'] as const) {
      const t = inStatus(largest, status, {
        summary: largest.summary,
        reason: 'r&'.repeat(LIMITS.reason / 2),
        artifacts: largestArtifacts(),
      });
      const m = dm({ thread: t, sender, recipient, inboxUrl: INBOX, audience, notice: '&'.repeat(4000) });
      expectWithinSlackLimits(m);
      const text = joined(m);
      expect(text).toContain('view them in the inbox'); // what did not fit is one click away
      expect(text).toContain(':page_facing_up: *Diff*'); // and the first artifact still shows
      expect(m.blocks[0].text.text.length).toBeLessThanOrEqual(150);
      expect(m.blocks[0].text.text).toContain(audience === 'recipient' ? largest.from : largest.to);
    }
  }
});

test('fifty of the largest artifacts of any one type fit, as handoff and as result artifacts', () => {
  for (const artifact of largestArtifacts().slice(0, 5)) {
    const many = Array.from({ length: LIMITS.artifacts }, () => artifact);
    const m = render(inStatus(thread({ artifacts: many }), 'completed', { artifacts: many }));
    expectWithinSlackLimits(m);
    expect(joined(m)).toMatch(/\+\d+ more result artifacts/);
  }
});

test('fifty small artifacts hit the block limit before the text budget, and the rest are linked', () => {
  const artifacts: Artifact[] = Array.from({ length: LIMITS.artifacts }, (_, i) => ({
    type: 'file_ref',
    path: `src/f${i}.ts`,
  }));
  const completion: Artifact[] = Array.from({ length: LIMITS.artifacts }, (_, i) => ({
    type: 'link',
    url: `https://example.com/${i}`,
  }));
  const m = render(inStatus(thread({ artifacts }), 'completed', { artifacts: completion }));
  expectWithinSlackLimits(m);
  expect(m.blocks.length).toBeLessThanOrEqual(50);
  const text = joined(m);
  expect(text).toContain('`src/f0.ts`');
  expect(text).toContain('<https://example.com/0|example.com/0>');
  expect(text).toMatch(/\+\d+ more artifacts: <[^>]+\|view them in the inbox>/);
  expect(text).toMatch(/\+\d+ more result artifacts: <[^>]+\|view them in the inbox>/);
});

test('a link too long to show whole is named with its host and left to the inbox; one without room for its code too', () => {
  const url = `https://contracts.example/${'|'.repeat(1000)}`; // encodes to three times its length
  const m = render(
    thread({
      artifacts: [
        { type: 'link', url, title: 'Spec' },
        { type: 'api_contract', schema_url: url, inline: 'openapi: 3.1.0' },
      ],
    }),
  );
  expectWithinSlackLimits(m);
  expect(sectionWith(m, 'Spec')).toBe(`:link: Spec (contracts.example) <${INBOX}|link in the inbox>`);
  expect(sectionWith(m, 'API contract')).toBe(
    `:scroll: *API contract* contracts.example/${'|'.repeat(101)}… (contracts.example) <${INBOX}|link in the inbox>\n\`\`\`openapi: 3.1.0\`\`\``,
  );
});
