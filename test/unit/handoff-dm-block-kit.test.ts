// The small pieces every Slack surface is built from: escaping and cutting teammate text, Block Kit helpers,
// and the view-limit checker the modal and Home builders are tested with.
import { isWellFormedText } from '../../relay-core/domain/schemas';
import { actions, button, context, header, section, SLACK_LIMITS } from '../../bot/blocks/block-kit';
import {
  codeBlock,
  escapeMrkdwn,
  escapeWithin,
  fencedLines,
  inlineCode,
  link,
  linkUrl,
  plainSafe,
  truncate,
} from '../../bot/blocks/mrkdwn';
import { checkViewLimits, findBlockProblem } from '../../scripts/fake-slack/block-limits';

const unescape = (s: string) =>
  s
    .replace(/[\u2060\u200b]/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

test('escaping turns every special sequence into text and breaks broadcasts and fences', () => {
  expect(escapeMrkdwn('<!channel> <@U1> a & b <https://x|y>')).toBe(
    '&lt;!channel&gt; &lt;@U1&gt; a &amp; b &lt;https://x|y&gt;',
  );
  expect(escapeMrkdwn('@here @channel @everyone @hereford')).toBe(
    '@\u2060here @\u2060channel @\u2060everyone @hereford',
  );
  for (let n = 3; n <= 9; n++) expect(escapeMrkdwn('`'.repeat(n))).not.toContain('```');
  expect(codeBlock('a\n``````\nb')).toBe('```a\n``\u200b``\u200b``\nb```');
  expect(plainSafe('<!here> @here')).toBe('‹!here› @\u2060here');
});

test('cutting escaped text never splits an entity or a surrogate pair, and never passes the limit', () => {
  const samples = [
    '&'.repeat(500),
    '<a>&'.repeat(300),
    'x&@here '.repeat(200),
    '😀'.repeat(400),
    '```'.repeat(400),
    'plain words '.repeat(100),
  ];
  for (const sample of samples) {
    for (const max of [1, 2, 7, 50, 301, 1000]) {
      const { text, cut } = escapeWithin(sample, max);
      expect(text.length).toBeLessThanOrEqual(max);
      expect(isWellFormedText(text)).toBe(true);
      expect(cut).toBe(escapeMrkdwn(sample).length > max);
      if (cut) {
        expect(text.endsWith('…')).toBe(true);
        expect(sample.startsWith(unescape(text.slice(0, -1)))).toBe(true); // a clean prefix: no half "&am"
      }
    }
  }
  expect(isWellFormedText(truncate('😀'.repeat(100), 51))).toBe(true);
  expect(truncate('abc', 3)).toBe('abc');
  expect(truncate('abcd', 3)).toBe('ab…');
});

test('a fenced excerpt keeps whole lines within its room and says whether it cut', () => {
  const text = Array.from({ length: 100 }, (_, i) => `line ${i} <tag>`).join('\n');
  const { text: fenced, cut, lines, totalLines } = fencedLines(text, 300);
  expect(fenced.length).toBeLessThanOrEqual(300);
  expect(cut).toBe(true);
  expect(totalLines).toBe(100);
  expect(fenced).toBe('```' + Array.from({ length: lines }, (_, i) => `line ${i} &lt;tag&gt;`).join('\n') + '```');
  expect(fencedLines('short', 300)).toEqual({ text: '```short```', cut: false, lines: 1, totalLines: 1 });
  const oneLongLine = fencedLines('y'.repeat(1000), 300);
  expect(oneLongLine.cut).toBe(true);
  expect(oneLongLine.text.length).toBeLessThanOrEqual(300);
});

test('links: the URL cannot end early or inject, the label is one escaped line', () => {
  expect(linkUrl('https://x.example/a|b>c<d e&f')).toBe('https://x.example/a%7Cb%3Ec%3Cd%20e&amp;f');
  expect(link('https://x.example/', 'A | B\n<!here>')).toBe('<https://x.example/|A ∣ B &lt;!here&gt;>');
  expect(link('javascript:alert(1)', 'click')).toBe('click'); // only http(s) becomes a link
  expect(inlineCode('a`b\nc', 100)).toBe('`aˋb c`');
});

test('block helpers keep text within Slack limits and never send empty text', () => {
  const blocks = [
    header('h'.repeat(500)),
    section('s'.repeat(5000)),
    section(''),
    context(...Array.from({ length: 12 }, () => 'c'.repeat(4000))),
    actions([
      button({ actionId: 'a', text: 'b'.repeat(100), value: 'v'.repeat(SLACK_LIMITS.buttonValue) }),
      button({
        actionId: 'b',
        text: 'Go',
        url: 'https://example.com',
        confirm: { title: 't'.repeat(200), text: 'x'.repeat(500), confirm: 'y'.repeat(50), deny: 'n' },
      }),
    ]),
  ];
  expect(findBlockProblem(blocks, 'message')).toMatchObject({ error: 'msg_blocks_too_long' }); // only the total is over
  expect(findBlockProblem(blocks.slice(0, 3).concat(blocks.slice(4)), 'message')).toBeNull();
  expect((blocks[0] as any).text.text).toHaveLength(150);
  expect((blocks[2] as any).text.text).toBe('–');
  expect((blocks[3] as any).elements).toHaveLength(10);
  expect(() => button({ actionId: 'x', text: 'x', value: 'v'.repeat(SLACK_LIMITS.buttonValue + 1) })).toThrow(
    /value is 2001 characters/,
  );
});

describe('checkViewLimits', () => {
  const input = (label: string) => ({
    type: 'input',
    block_id: `b${label.length}`,
    label: { type: 'plain_text', text: label },
    element: { type: 'plain_text_input', action_id: 'v' },
  });
  const modal = (overrides: Record<string, unknown> = {}) => ({
    type: 'modal',
    callback_id: 'handoff_decline_modal',
    title: { type: 'plain_text', text: 'Decline handoff' },
    submit: { type: 'plain_text', text: 'Decline' },
    close: { type: 'plain_text', text: 'Cancel' },
    blocks: [input('Why are you declining?')],
    ...overrides,
  });

  test('accepts a modal and a Home view Slack would accept', () => {
    expect(checkViewLimits(modal())).toBeNull();
    expect(
      checkViewLimits({ type: 'home', blocks: Array.from({ length: 100 }, () => ({ type: 'divider' })) }, 'home'),
    ).toBeNull();
  });

  test.each([
    [
      '101 blocks',
      { blocks: Array.from({ length: 101 }, () => ({ type: 'divider' })) },
      /no more than 100 items \[json-pointer:\/view\/blocks\]/,
    ],
    ['a 25-character title', { title: { type: 'plain_text', text: 't'.repeat(25) } }, /\/view\/title\/text/],
    ['a 25-character submit', { submit: { type: 'plain_text', text: 's'.repeat(25) } }, /\/view\/submit\/text/],
    ['a 25-character close', { close: { type: 'plain_text', text: 'c'.repeat(25) } }, /\/view\/close\/text/],
    ['a 2001-character input label', { blocks: [input('l'.repeat(2001))] }, /\/view\/blocks\/0\/label\/text/],
    ['inputs without submit', { submit: undefined }, /"submit" is required/],
    ['3001 characters of private_metadata', { private_metadata: 'm'.repeat(3001) }, /\/view\/private_metadata/],
    ['a mrkdwn title', { title: { type: 'mrkdwn', text: 'Decline' } }, /\/view\/title\/type/],
  ])('refuses %s, naming where', (_name, overrides, problem) => {
    const view = JSON.parse(JSON.stringify(modal(overrides)));
    expect(checkViewLimits(view)).toMatch(problem);
  });
});
