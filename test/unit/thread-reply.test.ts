// A thread message as a Slack reply: author, surface and time, the body and artifacts, escaped and within limits.
import { LIMITS, type Artifact } from '../../relay-core/domain/schemas';
import { threadReplyMessage, type ThreadReplyInput } from '../../bot/blocks/thread-reply';
import {
  alice,
  allText,
  bob,
  expectWithinSlackLimits,
  HOSTILE,
  INBOX,
  largestAgent,
  largestMessage,
  message,
  preview,
  T0,
  type RenderedMessage,
} from './handoff-dm-fixtures';

const reply = (input: Partial<ThreadReplyInput> = {}) =>
  threadReplyMessage({ message: message(), author: bob, inboxUrl: INBOX, ...input }) as RenderedMessage;

test('a reply shows who wrote it, from where and when, then the body', () => {
  const m = reply();
  expect(m.blocks[0].elements[0].text).toBe(
    `:speech_balloon: <@U0BOB> \`bob@acme\` via Slack · <!date^${T0.getTime() / 1000 + 12 * 60}^{date_short_pretty} at {time}|2026-11-30 10:12 UTC>`,
  );
  expect(m.blocks[1].text.text).toBe('Looks good, one question on the cursor format.');
  expect(m.text).toBe('Bob replied: Looks good, one question on the cursor format.');
  const fromMcp = reply({
    message: message({ from: alice.handle, via: 'mcp' }),
    author: { ...alice, slack_user_id: null },
  });
  expect(fromMcp.blocks[0].elements[0].text).toMatch(/^:speech_balloon: \*Alice\* `alice@acme` via MCP · /);
  expectWithinSlackLimits(m);
});

test('a reply carries its artifacts; one with only artifacts still says what it is', () => {
  const artifacts: Artifact[] = [
    { type: 'file_diff', path: 'src/a.ts', diff: '-old\n+new' },
    { type: 'link', url: 'https://example.com/pr/1', title: 'PR 1' },
  ];
  const m = reply({ message: message({ artifacts }) });
  const text = allText(m).join('\n');
  expect(text).toContain(':page_facing_up: *Diff* `src/a.ts`\n```-old\n+new```');
  expect(text).toContain(':link: <https://example.com/pr/1|PR 1> (example.com)');
  const onlyArtifacts = reply({ message: message({ body: '', artifacts }) });
  expect(onlyArtifacts.blocks.map((b) => b.type)).toEqual(['context', 'section', 'section']);
  expect(onlyArtifacts.text).toBe('Bob replied: 2 artifact(s)');
});

test('a reply cannot ping a channel, mention someone or fake a link', () => {
  const m = reply({
    message: message({
      body: HOSTILE,
      artifacts: [{ type: 'link', url: 'https://good.example/|<!here>', title: HOSTILE }],
    }),
    author: { ...bob, name: HOSTILE, slack_user_id: null },
  });
  expectWithinSlackLimits(m);
  for (const text of allText(m)) {
    expect(text).not.toMatch(/<!(channel|here|everyone|subteam)|@(channel|here|everyone)\b|<@U0BOSS>/);
    for (const [seq] of text.matchAll(/<[^>]*>/g)) {
      expect(seq).toMatch(
        /^<!date\^\d+\^\{date_short_pretty\} at \{time\}\|[^|<>]+>$|^<https:\/\/[^|<>\s]+\|[^<>|]+>$/,
      );
      expect(seq.split('|')[0]).not.toContain('evil.example');
    }
  }
  expect(m.blocks[1].text.text).toContain('&lt;!channel&gt; @\u2060here');
});

test('the largest message the relay accepts fits every Slack limit, linking to what does not fit', () => {
  const big = largestMessage();
  const m = reply({ message: big, author: largestAgent(big.from) });
  expectWithinSlackLimits(m);
  const text = allText(m).join('\n');
  expect(text).toContain(`<${INBOX}|Read the whole message in the inbox>`);
  expect(text).toMatch(/\+\d+ more artifacts: <[^>]+\|view them in the inbox>/);
  expect(text).toContain(':page_facing_up: *Diff*');
  expect(text).toContain(':scroll: *API contract*'); // a long contract URL does not crowd out the rest
  expect(big.artifacts).toHaveLength(LIMITS.artifacts);
});

test('snapshot: a reply with a body and one of each artifact', () => {
  const m = reply({
    message: message({
      body: 'Switched to cursors.\nSee the diff and the contract.',
      artifacts: [
        {
          type: 'file_diff',
          path: 'src/api/users.ts',
          diff: '-  const offset = page * size;\n+  const cursor = decode(req.query.cursor);',
        },
        { type: 'file_ref', path: 'src/api/users.ts', lines: '12-40', git_sha: '0123456789abcdef' },
        { type: 'test_command', command: 'npm test -- users', cwd: 'services/api' },
        {
          type: 'api_contract',
          schema_url: 'https://example.com/openapi.yaml',
          inline: 'paths:\n  /users:\n    get: {}',
        },
        { type: 'link', url: 'https://github.com/acme/api/pull/42', title: 'PR #42' },
      ],
    }),
  });
  expect(preview(m)).toMatchSnapshot();
  expect(m).toMatchSnapshot();
});
