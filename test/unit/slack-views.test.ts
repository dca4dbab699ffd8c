// The /handoff and App Home view builders without Slack: the largest cases stay within Slack's view and message
// limits, teammate text is escaped, and the modal's reading of a submission refuses what the relay refuses.
import { randomUUID } from 'node:crypto';
import { checkViewLimits, findBlockProblem, formatProblem } from '../../scripts/fake-slack/block-limits';
import {
  homeView,
  inboxMessage,
  unlinkedHomeView,
  HOME_PAGE_SIZE,
  INBOX_PAGE_SIZE,
  type ThreadPage,
} from '../../bot/views/home';
import { linkedModal, linkFailedModal, linkingModal } from '../../bot/views/link-modal';
import { mcpClientSnippets } from '../../mcp/client-config';
import {
  newHandoffFromForm,
  newHandoffModal,
  readNewHandoffState,
  type NewHandoffForm,
} from '../../bot/views/new-handoff-modal';
import { parseHandoffCommand, slackTextToPlain } from '../../bot/listeners/commands/parse-command';
import { toHandleLocal } from '../../bot/listeners/commands/new-teammate-modal';
import { parseInviteOptions } from '../../bot/listeners/commands/invite-command';
import { LIMITS } from '../../relay-core/domain/schemas';
import type { ListItem } from '../../relay-core/service/wire-views';

const inboxUrl = (id: string) => `https://relay.example.com/inbox/${id}`;

/** A list item as large as the relay makes one: a 200-character preview of pure `&` (5x when escaped), long names. */
function item(status: ListItem['status'], i: number): ListItem {
  const party = (h: string) => ({
    handle: `${h}${'x'.repeat(100)}@acme`,
    name: `<!channel> ${'N'.repeat(190)}`,
    role: 'dev',
  });
  return {
    thread_id: randomUUID(),
    sender: party('s'),
    recipient: party('r'),
    summary_preview: `${'&'.repeat(199)}…`,
    intent: i % 2 ? 'propose_action' : 'ask_question',
    status,
    unread_messages: i,
    created_at: new Date(Date.UTC(2026, 10, 30, 10, 0, i)).toISOString(),
    updated_at: new Date().toISOString(),
  };
}
const page = (n: number, status: ListItem['status'], more = true): ThreadPage => ({
  items: Array.from({ length: n }, (_, i) => item(i % 2 ? status : 'pending', i)),
  next_cursor: more ? Buffer.from(JSON.stringify([Date.now(), randomUUID()])).toString('base64url') : null,
});

function expectViewOk(view: unknown, kind: 'modal' | 'home') {
  const problem = checkViewLimits(view, kind);
  if (problem) throw new Error(problem);
}

describe('Home view', () => {
  test('two full pages on an older page (every paging button) stay within 100 blocks and the view limits', () => {
    const view = homeView({
      handle: 'hana@acme',
      waiting: page(HOME_PAGE_SIZE, 'accepted'),
      sent: page(HOME_PAGE_SIZE, 'completed'),
      page: { w: 'c1', s: 'c2' },
      inboxUrl,
    });
    expectViewOk(view, 'home');
    expect(view.blocks.length).toBeLessThanOrEqual(100);
    const labels = (view.blocks as any[])
      .flatMap((b) => (b.type === 'actions' ? b.elements : []))
      .map((e) => e.text.text);
    expect(labels).toEqual(expect.arrayContaining(['Show older waiting', 'Show older sent', 'Back to newest']));
  });

  test('more items than a page are cut to the page, never past the limit', () => {
    const view = homeView({
      handle: 'h@acme',
      waiting: page(60, 'pending'),
      sent: page(60, 'declined'),
      page: {},
      inboxUrl,
    });
    expectViewOk(view, 'home');
  });

  test('teammate text is escaped: no @channel, no forged link', () => {
    const view = homeView({
      handle: 'h@acme',
      waiting: page(1, 'pending', false),
      sent: page(0, 'pending', false),
      page: {},
      inboxUrl,
    });
    const text = JSON.stringify(view.blocks);
    expect(text).not.toContain('<!channel>');
    expect(text).toContain('&lt;!channel&gt;');
  });

  test('empty lists say so; an unlinked user is pointed at /handoff link', () => {
    const empty = homeView({
      handle: 'h@acme',
      waiting: page(0, 'pending', false),
      sent: page(0, 'pending', false),
      page: {},
      inboxUrl,
    });
    expect(JSON.stringify(empty.blocks)).toContain('Nothing is waiting for you.');
    expectViewOk(unlinkedHomeView(), 'home');
    expect(JSON.stringify(unlinkedHomeView().blocks)).toContain('/handoff link');
  });
});

describe('/handoff inbox message', () => {
  test('the largest page stays within the 50-block and 12k-text message limits and says more are waiting', () => {
    const message = inboxMessage({ handle: 'bob@acme', page: page(INBOX_PAGE_SIZE, 'accepted'), inboxUrl });
    const problem = findBlockProblem(message.blocks, 'message');
    if (problem) throw new Error(formatProblem(problem));
    expect(message.text).toMatch(/\+ unclaimed, pending or accepted/);
    expect(JSON.stringify(message.blocks)).toContain('More are waiting');
  });

  test('an empty inbox is one clear line', () => {
    expect(inboxMessage({ handle: 'bob@acme', page: { items: [], next_cursor: null }, inboxUrl }).text).toBe(
      'Your handoff inbox is empty.',
    );
  });
});

describe('link modals', () => {
  test('the key modal holds the key, every MCP snippet, and fits a modal', () => {
    const key = `hr_0123456789ab_${'k'.repeat(43)}`;
    const snippets = mcpClientSnippets({ handle: 'dave@acme', apiKey: key, relayUrl: 'https://relay.example.com' });
    const view = linkedModal({ handle: 'dave@acme', apiKey: key, snippets });
    expectViewOk(view, 'modal');
    const text = JSON.stringify(view.blocks);
    expect(text).toContain(key);
    expect(text).toContain('https://relay.example.com/mcp');
    expect(text).toContain('mcp_servers.handoff-relay');
  });

  test('the linking and failure modals fit and escape', () => {
    expectViewOk(linkingModal('a@b'), 'modal');
    const failed = linkFailedModal('The handle <!here> is taken');
    expectViewOk(failed, 'modal');
    expect(JSON.stringify(failed.blocks)).not.toContain('<!here>');
  });
});

describe('new-handoff modal', () => {
  test('fits a modal and carries its callback_id', () => {
    const view = newHandoffModal({ privateMetadata: 'x'.repeat(3000) });
    expectViewOk(view, 'modal');
    expect(view.callback_id).toBe('handoff_new_modal');
  });

  const form = (over: Partial<NewHandoffForm> = {}): NewHandoffForm => ({
    recipientSlackUser: 'U0BOB',
    intent: 'inform',
    summary: 'Summary',
    files: [],
    links: [],
    ...over,
  });

  test('a valid form becomes the relay input, with the idempotency key', () => {
    const result = newHandoffFromForm(
      form({ intent: 'ask_question', question: 'Why?', links: ['https://a.example/1'] }),
      'bob@acme',
      'slack-view:V1',
    );
    expect(result).toEqual({
      handoff: expect.objectContaining({
        to: 'bob@acme',
        intent: 'ask_question',
        question: 'Why?',
        artifacts: [{ type: 'link', url: 'https://a.example/1' }],
        idempotency_key: 'slack-view:V1',
      }),
    });
  });

  test.each([
    ['summary', form({ summary: 'x'.repeat(LIMITS.summary + 1) }), `at most ${LIMITS.summary} characters`],
    [
      'question',
      form({ intent: 'ask_question', question: 'q'.repeat(LIMITS.question + 1) }),
      `at most ${LIMITS.question} characters`,
    ],
    [
      'action_files',
      form({ intent: 'propose_action', description: 'd', rationale: 'r', files: ['ok', 'p'.repeat(LIMITS.path + 1)] }),
      'Line 2:',
    ],
    [
      'links',
      form({ links: Array.from({ length: LIMITS.artifacts + 1 }, (_, i) => `https://a.example/${i}`) }),
      `At most ${LIMITS.artifacts} links`,
    ],
    ['links', form({ links: ['javascript:alert(1)'] }), 'Line 1: must be an http(s) URL'],
    ['intent', form({ intent: 'shout' }), 'Choose an intent'],
  ])('%s: refused with the relay limit', (field, f, message) => {
    const result = newHandoffFromForm(f, 'bob@acme', 'k') as { errors: Record<string, string> };
    expect(result.errors[field]).toContain(message);
  });

  test('a state that is not this modal is refused, not guessed', () => {
    expect(readNewHandoffState({ summary: { summary: { type: 'plain_text_input', value: 'x' } } })).toBeNull();
  });
});

describe('command text', () => {
  test.each([
    ['', { kind: 'modal' }],
    ['  HELP ', { kind: 'help' }],
    ['inbox', { kind: 'inbox' }],
    ['link', { kind: 'link' }],
    ['link bob', { kind: 'link', handle: 'bob' }],
    ['join', { kind: 'join' }],
    ['join hri_x bob', { kind: 'join', code: 'hri_x', handle: 'bob' }],
    ['join hri_x bob more', { kind: 'join', code: 'hri_x', handle: 'bob', extra: 'more' }],
    ['invite role:qa note:R&amp;D', { kind: 'invite', options: 'role:qa note:R&D' }],
    ['<@U0BOB|bob> hi there', { kind: 'send', to: { slackUser: 'U0BOB' }, text: 'hi there' }],
    ['<@U0BOB> hi', { kind: 'send', to: { slackUser: 'U0BOB' }, text: 'hi' }],
    ['@bob@acme hi', { kind: 'send', to: { handle: 'bob@acme' }, text: 'hi' }],
    ['@bob hi', { kind: 'unresolved_mention', name: '@bob' }],
    ['deploy now', { kind: 'unknown', word: 'deploy' }],
  ])('%j', (text, expected) => {
    expect(parseHandoffCommand(text)).toEqual(expected);
  });

  test('/handoff invite options become the invitation; what is wrong is named by its option', () => {
    expect(parseInviteOptions('team:acme skills:go,sql repos:a/,b/, expires:2h note: for  Frank, backend ')).toEqual({
      input: {
        team: 'acme',
        skills: ['go', 'sql'],
        repos_owned: ['a/', 'b/'],
        expires_in: 2 * 3_600_000,
        note: 'for  Frank, backend',
      },
    });
    expect(parseInviteOptions('')).toEqual({ input: { expires_in: 7 * 86_400_000 } });
    expect(parseInviteOptions('skills:go, sql')).toEqual({
      problem: expect.stringMatching(/^`sql` is not an option of `\/handoff invite`/),
    });
    expect(parseInviteOptions('skills:,')).toEqual({ problem: '`skills:` needs a value, e.g. `skills:…`' });
    expect(parseInviteOptions('role:a role:b')).toEqual({ problem: '`role:` is given twice' });
    expect(parseInviteOptions('expires:never')).toEqual({
      problem: expect.stringMatching(/^`expires:` must be a duration/),
    });
  });

  test('Slack markup becomes plain text', () => {
    expect(slackTextToPlain('a &lt;b&gt; &amp; <#C012|eng> <!here> <https://x.y/z|z> <mailto:a@b.c|mail>')).toBe(
      'a <b> & #eng @here https://x.y/z mailto:a@b.c',
    );
  });

  test('a Slack name becomes a handle local part', () => {
    expect(toHandleLocal('  José Núñez!! ')).toBe('jose-nunez');
    expect(toHandleLocal('数据')).toBe('');
  });
});
