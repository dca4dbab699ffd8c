// Fake Slack Web API, driven by a real @slack/web-api WebClient: the errors a real client sees are Slack's.

import { ErrorCode, LogLevel, WebClient } from '@slack/web-api';
import { WebSocket } from 'undici';
import { BLOCK_LIMITS, checkBlocks, findBlockProblem, findViewProblem } from '../../scripts/fake-slack/block-limits';
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';

const ALICE = 'U0ALICE';
const BOB = 'U0BOB';

let fake: FakeSlack;
let client: WebClient;

/** The client logs every refused call at error level; the assertions here are about those refusals. */
const quietLogger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  setLevel() {},
  getLevel: () => LogLevel.ERROR,
  setName() {},
};

function webClient(token: string | undefined, options: ConstructorParameters<typeof WebClient>[1] = {}): WebClient {
  return new WebClient(token, { slackApiUrl: fake.url, retryConfig: { retries: 0 }, logger: quietLogger, ...options });
}

/** Calls a method the way any caller could, bypassing the typed argument checks. */
function call(method: string, args: Record<string, unknown>, c: WebClient = client) {
  return c.apiCall(method, args);
}

async function expectSlackError(promise: Promise<unknown>, error: string): Promise<void> {
  await expect(promise).rejects.toMatchObject({ code: ErrorCode.PlatformError, data: { ok: false, error } });
}

const text = (n: number, ch = 'x') => ch.repeat(n);
const section = (t: string) => ({ type: 'section', text: { type: 'mrkdwn', text: t } });
const button = (over: Record<string, unknown> = {}) => ({
  type: 'button',
  text: { type: 'plain_text', text: 'Accept' },
  action_id: 'accept',
  value: 'thread-1',
  ...over,
});
const modal = (over: Record<string, unknown> = {}) => ({
  type: 'modal',
  title: { type: 'plain_text', text: 'New handoff' },
  blocks: [section('hi')],
  ...over,
});

async function openIm(user: string): Promise<string> {
  const res = await client.conversations.open({ users: user });
  return (res.channel as { id: string }).id;
}

beforeAll(async () => {
  fake = await startFakeSlack();
  fake.addUser(ALICE, { real_name: 'Alice Doe', name: 'alice' });
  fake.addUser(BOB, { real_name: 'Bob Roe', name: 'bob', display_name: 'bobby' });
  client = webClient(fake.token);
});

afterEach(() => fake.reset());

afterAll(() => fake.close());

describe('fake Slack: transport and auth', () => {
  test('url is the Web API base with a trailing slash', () => {
    expect(fake.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/$/);
  });

  test('auth.test answers with the bot identity', async () => {
    const res = await client.auth.test();
    expect(res).toMatchObject({ ok: true, user_id: fake.botUserId, bot_id: fake.botId, team_id: fake.teamId });
    expect(typeof res.url).toBe('string');
    expect(res.response_metadata?.scopes).toEqual([
      'chat:write',
      'im:write',
      'commands',
      'users:read',
      'im:history',
      'channels:history',
      'groups:history',
      'links:read',
      'links:write',
    ]);
  });

  test('a missing token is not_authed and a wrong one invalid_auth, on every method', async () => {
    await expectSlackError(webClient(undefined).auth.test(), 'not_authed');
    await expectSlackError(webClient('xoxb-wrong').chat.postMessage({ channel: ALICE, text: 'hi' }), 'invalid_auth');
    expect(fake.calls.map((c) => c.response.error)).toEqual(['not_authed', 'invalid_auth']);
    expect(fake.callsTo('chat.postMessage')).toEqual([]);
  });

  test('a token passed per call (as Bolt does) is accepted', async () => {
    await expect(webClient(undefined).auth.test({ token: fake.token })).resolves.toMatchObject({ ok: true });
  });

  test('an unknown method is unknown_method', async () => {
    await expectSlackError(call('chat.meMessage', { channel: 'D1', text: 'hi' }), 'unknown_method');
  });

  test('form fields holding JSON are recorded parsed, other fields as strings', async () => {
    const channel = await openIm(ALICE);
    const blocks = [section('*hello*')];
    await client.chat.postMessage({ channel, text: 'hello', blocks, unfurl_links: false });
    const [posted] = fake.callsTo('chat.postMessage');
    expect(posted.args).toMatchObject({ channel, text: 'hello', blocks, unfurl_links: 'false' });
  });

  test('a JSON body is accepted with a bearer token, but a token inside JSON is not', async () => {
    const post = (body: unknown, headers: Record<string, string>) =>
      fetch(`${fake.url}auth.test`, { method: 'POST', headers, body: JSON.stringify(body) }).then((r) => r.json());
    expect(
      await post({}, { 'content-type': 'application/json; charset=utf-8', authorization: `Bearer ${fake.token}` }),
    ).toMatchObject({
      ok: true,
    });
    expect(await post({ token: fake.token }, { 'content-type': 'application/json' })).toMatchObject({
      ok: false,
      error: 'not_authed',
    });
  });

  test('bodies Slack cannot read get Slack’s errors', async () => {
    const post = (body: string, headers: Record<string, string>) =>
      fetch(`${fake.url}auth.test`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fake.token}`, ...headers },
        body,
      }).then((r) => r.json());
    expect(await post('{', { 'content-type': 'application/json' })).toMatchObject({ error: 'invalid_json' });
    expect(await post('[1]', { 'content-type': 'application/json' })).toMatchObject({ error: 'json_not_object' });
    expect(await post('a=1', { 'content-type': 'text/csv' })).toMatchObject({ error: 'invalid_post_type' });
    expect(await post('a=1', { 'content-type': 'application/x-www-form-urlencoded; charset=koi8-r' })).toMatchObject({
      error: 'invalid_charset',
    });
  });
});

describe('fake Slack: conversations.open', () => {
  test('opens an IM idempotently: same user, same D channel', async () => {
    const first = await client.conversations.open({ users: ALICE });
    const second = await client.conversations.open({ users: ALICE });
    expect(first.channel?.id).toMatch(/^D[A-Z0-9]+$/);
    expect(second.channel?.id).toBe(first.channel?.id);
    expect(second).toMatchObject({ already_open: true });
    expect(first.channel?.id).toBe(fake.imChannelId(ALICE));
    expect(await openIm(BOB)).not.toBe(first.channel?.id);
  });

  test('an unknown user is user_not_found; no users is users_list_not_supplied', async () => {
    await expectSlackError(client.conversations.open({ users: 'U0NOBODY' }), 'user_not_found');
    await expectSlackError(call('conversations.open', {}), 'users_list_not_supplied');
  });

  test('a group DM needs a scope the app does not have; the bot cannot DM itself', async () => {
    await expectSlackError(client.conversations.open({ users: `${ALICE},${BOB}` }), 'missing_scope');
    await expectSlackError(client.conversations.open({ users: fake.botUserId }), 'cannot_dm_bot');
  });
});

describe('fake Slack: chat.postMessage', () => {
  test('posts with increasing unique ts and shows the message', async () => {
    const channel = await openIm(ALICE);
    const blocks = [section('hello *Alice*')];
    const a = await client.chat.postMessage({ channel, text: 'hello Alice', blocks });
    const b = await client.chat.postMessage({ channel, text: 'second' });
    expect(a).toMatchObject({ ok: true, channel, message: { text: 'hello Alice', blocks, bot_id: fake.botId } });
    expect(a.ts).toMatch(/^\d{10}\.\d{6}$/);
    expect(Number(b.ts)).toBeGreaterThan(Number(a.ts));
    expect(fake.messages.get(channel)).toEqual([
      { ts: a.ts, text: 'hello Alice', blocks, updated: 0 },
      { ts: b.ts, text: 'second', blocks: [], updated: 0 },
    ]);
  });

  test('a user id as channel posts into the app DM with that user', async () => {
    const res = await client.chat.postMessage({ channel: ALICE, text: 'hi' });
    expect(res.channel).toBe(fake.imChannelId(ALICE));
    expect(fake.messages.get(fake.imChannelId(ALICE))).toHaveLength(1);
  });

  test('replies in an existing thread; an unknown thread_ts is thread_not_found', async () => {
    const channel = await openIm(ALICE);
    const parent = await client.chat.postMessage({ channel, text: 'parent' });
    const reply = await client.chat.postMessage({ channel, text: 'reply', thread_ts: parent.ts as string });
    expect(reply.message).toMatchObject({ thread_ts: parent.ts });
    expect(fake.messages.get(channel)?.[1]).toMatchObject({ text: 'reply', thread_ts: parent.ts });
    await expectSlackError(
      client.chat.postMessage({ channel, text: 'lost', thread_ts: '1600000000.000100' }),
      'thread_not_found',
    );
  });

  test('an unknown or missing channel is channel_not_found', async () => {
    await expectSlackError(client.chat.postMessage({ channel: 'C0NOWHERE', text: 'hi' }), 'channel_not_found');
    await expectSlackError(client.chat.postMessage({ channel: 'D0NEVEROPENED', text: 'hi' }), 'channel_not_found');
    await expectSlackError(call('chat.postMessage', { text: 'hi' }), 'channel_not_found');
  });

  test('no text and no blocks, or blocks without a text fallback, is no_text', async () => {
    const channel = await openIm(ALICE);
    await expectSlackError(call('chat.postMessage', { channel }), 'no_text');
    await expectSlackError(call('chat.postMessage', { channel, blocks: [section('hi')] }), 'no_text');
    await expectSlackError(call('chat.postMessage', { channel, text: '', blocks: [section('hi')] }), 'no_text');
    await expectSlackError(call('chat.postMessage', { channel, text: '  ', blocks: [section('hi')] }), 'no_text');
  });

  test('text over 40000 characters is msg_too_long', async () => {
    const channel = await openIm(ALICE);
    await expect(client.chat.postMessage({ channel, text: text(40000) })).resolves.toMatchObject({ ok: true });
    await expectSlackError(client.chat.postMessage({ channel, text: text(40001) }), 'msg_too_long');
  });

  test('blocks that are not JSON or not an array are invalid_blocks', async () => {
    const channel = await openIm(ALICE);
    await expectSlackError(call('chat.postMessage', { channel, text: 'hi', blocks: '[{"type":' }), 'invalid_blocks');
    await expectSlackError(
      call('chat.postMessage', { channel, text: 'hi', blocks: { type: 'divider' } }),
      'invalid_blocks',
    );
  });

  const invalid: Array<[string, unknown[]]> = [
    ['51 blocks', Array.from({ length: 51 }, () => ({ type: 'divider' }))],
    ['section text of 3001', [section(text(3001))]],
    [
      '11 section fields',
      [{ type: 'section', fields: Array.from({ length: 11 }, () => ({ type: 'mrkdwn', text: 'f' })) }],
    ],
    ['a section field of 2001', [{ type: 'section', fields: [{ type: 'mrkdwn', text: text(2001) }] }]],
    ['an empty section text', [section('')]],
    ['header of 151', [{ type: 'header', text: { type: 'plain_text', text: text(151) } }]],
    ['mrkdwn header', [{ type: 'header', text: { type: 'mrkdwn', text: 'hi' } }]],
    ['button text of 76', [{ type: 'actions', elements: [button({ text: { type: 'plain_text', text: text(76) } })] }]],
    ['button value of 2001', [{ type: 'actions', elements: [button({ value: text(2001) })] }]],
    ['action_id of 256', [{ type: 'actions', elements: [button({ action_id: text(256) })] }]],
    ['block_id of 256', [{ type: 'divider', block_id: text(256) }]],
    [
      'duplicate block_id',
      [
        { type: 'divider', block_id: 'a' },
        { type: 'divider', block_id: 'a' },
      ],
    ],
    ['duplicate action_id in a block', [{ type: 'actions', elements: [button(), button()] }]],
    [
      '26 actions elements',
      [{ type: 'actions', elements: Array.from({ length: 26 }, (_, i) => button({ action_id: `a${i}` })) }],
    ],
    [
      '11 context elements',
      [{ type: 'context', elements: Array.from({ length: 11 }, () => ({ type: 'mrkdwn', text: 'c' })) }],
    ],
    ['an unknown block type', [{ type: 'carousel' }]],
    ['an unknown property', [{ type: 'section', text: { type: 'mrkdwn', text: 'hi' }, accesory: button() }]],
    ['a bad button style', [{ type: 'actions', elements: [button({ style: 'green' })] }]],
  ];
  test.each(invalid)('%s is invalid_blocks', async (_name, blocks) => {
    const channel = await openIm(ALICE);
    await expectSlackError(
      client.chat.postMessage({ channel, text: 'fallback', blocks: blocks as never }),
      'invalid_blocks',
    );
    expect(fake.messages.get(channel) ?? []).toEqual([]);
  });

  test('invalid_blocks names the offending field the way Slack does', async () => {
    const channel = await openIm(ALICE);
    const error = await client.chat
      .postMessage({ channel, text: 'x', blocks: [{ type: 'divider' }, section(text(3001))] })
      .catch((e) => e);
    expect(error.data.response_metadata.messages[0]).toMatch(/\[json-pointer:\/blocks\/1\/text\/text\]$/);
  });

  test('blocks at every limit are accepted', async () => {
    const channel = await openIm(ALICE);
    const blocks = [
      { type: 'header', text: { type: 'plain_text', text: text(150) } },
      section(text(3000)),
      { type: 'section', fields: Array.from({ length: 10 }, () => ({ type: 'mrkdwn', text: text(200) })) },
      {
        type: 'actions',
        block_id: text(255, 'b'),
        elements: Array.from({ length: 25 }, (_, i) =>
          button({
            action_id: `${i}`.padEnd(255, 'a'),
            text: { type: 'plain_text', text: text(75) },
            value: text(2000),
          }),
        ),
      },
      { type: 'context', elements: Array.from({ length: 10 }, () => ({ type: 'plain_text', text: 'c' })) },
      { type: 'divider' },
      { type: 'rich_text', elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text: 'rich' }] }] },
      { type: 'image', image_url: 'https://example.com/a.png', alt_text: 'a' },
      ...Array.from({ length: 42 }, () => ({ type: 'divider' })),
    ];
    expect(blocks).toHaveLength(50);
    await expect(
      client.chat.postMessage({ channel, text: 'fallback', blocks: blocks as never }),
    ).resolves.toMatchObject({ ok: true });
  });

  test('more than 12000 characters of block text in total is msg_blocks_too_long', async () => {
    const channel = await openIm(ALICE);
    const blocks = Array.from({ length: 5 }, () => section(text(2500)));
    await expectSlackError(client.chat.postMessage({ channel, text: 'fallback', blocks }), 'msg_blocks_too_long');
    await expect(
      client.chat.postMessage({ channel, text: 'fallback', blocks: blocks.slice(0, 4) }),
    ).resolves.toMatchObject({ ok: true });
  });
});

describe('fake Slack: chat.update', () => {
  test('replaces what the user sees; left-out blocks are kept, [] removes them', async () => {
    const channel = await openIm(ALICE);
    const posted = await client.chat.postMessage({ channel, text: 'pending', blocks: [section('pending')] });
    const ts = posted.ts as string;
    const res = await client.chat.update({ channel, ts, text: 'accepted', blocks: [section('accepted')] });
    expect(res).toMatchObject({ ok: true, channel, ts, text: 'accepted' });
    expect(fake.messages.get(channel)).toEqual([{ ts, text: 'accepted', blocks: [section('accepted')], updated: 1 }]);
    await client.chat.update({ channel, ts, text: 'accepted!' });
    expect(fake.messages.get(channel)?.[0]).toMatchObject({
      text: 'accepted!',
      blocks: [section('accepted')],
      updated: 2,
    });
    await client.chat.update({ channel, ts, text: 'plain', blocks: [] });
    expect(fake.messages.get(channel)?.[0]).toMatchObject({ text: 'plain', blocks: [], updated: 3 });
  });

  test('unknown channel, unknown ts, bad blocks and missing text are rejected', async () => {
    const channel = await openIm(ALICE);
    const { ts } = await client.chat.postMessage({ channel, text: 'pending' });
    await expectSlackError(
      client.chat.update({ channel: 'C0NOWHERE', ts: ts as string, text: 'x' }),
      'channel_not_found',
    );
    await expectSlackError(client.chat.update({ channel, ts: '1600000000.000100', text: 'x' }), 'message_not_found');
    await expectSlackError(
      client.chat.update({ channel, ts: ts as string, text: 'x', blocks: [section(text(3001))] }),
      'invalid_blocks',
    );
    await expectSlackError(call('chat.update', { channel, ts, blocks: [section('hi')] }), 'no_text');
    expect(fake.messages.get(channel)?.[0]).toMatchObject({ text: 'pending', updated: 0 });
  });
});

describe('fake Slack: chat.postEphemeral', () => {
  test('posts to a member of the channel', async () => {
    const channel = await openIm(ALICE);
    const res = await client.chat.postEphemeral({ channel, user: ALICE, text: 'only you' });
    expect(res).toMatchObject({ ok: true });
    expect(res.message_ts).toMatch(/^\d{10}\.\d{6}$/);
    fake.addChannel('C0GENERAL');
    await expect(client.chat.postEphemeral({ channel: 'C0GENERAL', user: BOB, text: 'hi' })).resolves.toMatchObject({
      ok: true,
    });
  });

  test('unknown channel, missing or unknown user, and a non-member are rejected', async () => {
    const channel = await openIm(ALICE);
    await expectSlackError(
      client.chat.postEphemeral({ channel: 'C0NOWHERE', user: ALICE, text: 'x' }),
      'channel_not_found',
    );
    await expectSlackError(call('chat.postEphemeral', { channel, text: 'x' }), 'user_not_found');
    await expectSlackError(client.chat.postEphemeral({ channel, user: 'U0NOBODY', text: 'x' }), 'user_not_found');
    await expectSlackError(client.chat.postEphemeral({ channel, user: BOB, text: 'x' }), 'user_not_in_channel');
    await expectSlackError(call('chat.postEphemeral', { channel, user: ALICE, blocks: [section('x')] }), 'no_text');
  });
});

describe('fake Slack: users.info', () => {
  test('answers with Slack’s user shape', async () => {
    const res = await client.users.info({ user: BOB });
    expect(res.user).toMatchObject({
      id: BOB,
      name: 'bob',
      real_name: 'Bob Roe',
      profile: { real_name: 'Bob Roe', display_name: 'bobby' },
    });
    const alice = await client.users.info({ user: ALICE });
    expect(alice.user?.profile).toMatchObject({ real_name: 'Alice Doe', display_name: '' });
  });

  test('an unknown user is user_not_found', async () => {
    await expectSlackError(client.users.info({ user: 'U0NOBODY' }), 'user_not_found');
  });

  test('addUser refuses ids Slack would never send', () => {
    expect(() => fake.addUser('alice')).toThrow(/Slack user id/);
  });
});

describe('fake Slack: views', () => {
  test('views.open opens a modal and views.update replaces it', async () => {
    const opened = await client.views.open({
      trigger_id: fake.triggerId(),
      view: modal({ callback_id: 'handoff_new' }) as never,
    });
    const view = opened.view as { id: string; hash: string; callback_id: string };
    expect(view.id).toMatch(/^V/);
    expect(view.callback_id).toBe('handoff_new');
    const updated = await client.views.update({
      view_id: view.id,
      hash: view.hash,
      view: modal({ title: { type: 'plain_text', text: 'Sent' } }) as never,
    });
    expect(updated.view).toMatchObject({ id: view.id, title: { text: 'Sent' } });
    await expectSlackError(
      client.views.update({ view_id: view.id, hash: view.hash, view: modal() as never }),
      'hash_conflict',
    );
    await expectSlackError(client.views.update({ view_id: 'V0NOTHERE', view: modal() as never }), 'not_found');
  });

  test('views.open rejects a missing trigger_id and views Slack would refuse', async () => {
    const open = (view: unknown) => call('views.open', { trigger_id: fake.triggerId(), view });
    await expectSlackError(call('views.open', { view: modal() }), 'invalid_arguments');
    await expectSlackError(open(modal({ title: { type: 'plain_text', text: text(25) } })), 'invalid_arguments');
    await expectSlackError(
      open(modal({ blocks: Array.from({ length: 101 }, () => ({ type: 'divider' })) })),
      'invalid_arguments',
    );
    await expectSlackError(open(modal({ type: 'home' })), 'invalid_arguments');
    const input = {
      type: 'input',
      block_id: 'summary',
      label: { type: 'plain_text', text: 'Summary' },
      element: { type: 'plain_text_input', action_id: 'value' },
    };
    await expectSlackError(open(modal({ blocks: [input] })), 'invalid_arguments');
    await expect(open(modal({ blocks: [input], submit: { type: 'plain_text', text: 'Send' } }))).resolves.toMatchObject(
      { ok: true },
    );
    await expect(
      open(modal({ blocks: Array.from({ length: 100 }, () => ({ type: 'divider' })) })),
    ).resolves.toMatchObject({ ok: true });
  });

  test('views.open takes only a trigger_id it issued, once, within 3 seconds', async () => {
    const open = (trigger_id: string) => call('views.open', { trigger_id, view: modal() });
    await expectSlackError(open('12345.98765.abcd2358fdea'), 'invalid_trigger_id');
    await expectSlackError(open(fake.triggerId({ issuedMsAgo: 3_500 })), 'expired_trigger_id');
    const trigger = fake.triggerId();
    await expect(open(trigger)).resolves.toMatchObject({ ok: true });
    await expectSlackError(open(trigger), 'exchanged_trigger_id');
  });

  test('views.publish publishes a Home tab per user', async () => {
    const home = { type: 'home', blocks: [section('Your inbox')] };
    const first = await client.views.publish({ user_id: ALICE, view: home as never });
    const second = await client.views.publish({
      user_id: ALICE,
      view: { ...home, blocks: [section('Still your inbox')] } as never,
    });
    expect(second.view?.id).toBe(first.view?.id);
    expect(fake.homeViews.get(ALICE)).toMatchObject({ type: 'home', blocks: [section('Still your inbox')] });
    await expectSlackError(client.views.publish({ user_id: 'U0NOBODY', view: home as never }), 'invalid_arguments');
    await expectSlackError(client.views.publish({ user_id: ALICE, view: modal() as never }), 'invalid_arguments');
    await expectSlackError(call('views.publish', { view: home }), 'invalid_arguments');
  });
});

describe('fake Slack: scripted failures', () => {
  test('429 with Retry-After reaches the client as a rate limit, then the next call succeeds', async () => {
    fake.failNext('chat.postMessage', {
      status: 429,
      headers: { 'Retry-After': '1' },
      body: { ok: false, error: 'ratelimited' },
    });
    const strict = webClient(fake.token, { rejectRateLimitedCalls: true });
    await expect(strict.chat.postMessage({ channel: ALICE, text: 'hi' })).rejects.toMatchObject({
      code: ErrorCode.RateLimitedError,
      retryAfter: 1,
    });
    await expect(strict.chat.postMessage({ channel: ALICE, text: 'hi' })).resolves.toMatchObject({ ok: true });
    expect(fake.calls.map((c) => c.response.error ?? 'ok')).toEqual(['ratelimited', 'ok']);
  });

  test('a client that retries gets through after the scripted failure', async () => {
    fake.failNext('chat.postMessage', {
      status: 429,
      headers: { 'Retry-After': '0' },
      body: { ok: false, error: 'ratelimited' },
    });
    const retrying = webClient(fake.token, { retryConfig: { retries: 1, minTimeout: 0, maxTimeout: 1 } });
    await expect(retrying.chat.postMessage({ channel: ALICE, text: 'hi' })).resolves.toMatchObject({ ok: true });
    expect(fake.calls).toHaveLength(2);
    expect(fake.callsTo('chat.postMessage')).toHaveLength(1);
  });

  test('an ok:false body and an HTTP 500 come out as given, once each', async () => {
    fake.failNext('users.info', { body: { ok: false, error: 'fatal_error' } });
    fake.failNext('users.info', { status: 500, body: { ok: false, error: 'internal_error' } });
    await expectSlackError(client.users.info({ user: ALICE }), 'fatal_error');
    await expect(client.users.info({ user: ALICE })).rejects.toMatchObject({
      code: ErrorCode.HTTPError,
      statusCode: 500,
    });
    await expect(client.users.info({ user: ALICE })).resolves.toMatchObject({ ok: true });
  });
});

describe('fake Slack: waitFor, reset, response_url', () => {
  test('waitFor resolves with a past or a future matching call', async () => {
    await client.chat.postMessage({ channel: ALICE, text: 'one' });
    await expect(fake.waitFor('chat.postMessage')).resolves.toMatchObject({ args: { text: 'one' } });
    const later = fake.waitFor('chat.postMessage', (c) => c.args.text === 'two');
    await client.chat.postMessage({ channel: ALICE, text: 'two' });
    await expect(later).resolves.toMatchObject({ args: { text: 'two' }, response: { ok: true } });
  });

  test('waitFor ignores failed calls and times out listing every call seen', async () => {
    await client.chat.postMessage({ channel: 'C0NOWHERE', text: 'lost' }).catch(() => undefined);
    const error: Error = await fake.waitFor('chat.postMessage', undefined, 50).catch((e) => e);
    expect(error.message).toMatch(/no successful chat\.postMessage call within 50 ms/);
    expect(error.message).toMatch(/#1 chat\.postMessage → ERROR channel_not_found .*channel="C0NOWHERE"/);
  });

  test('reset clears calls and messages but keeps users and opened IMs', async () => {
    const channel = await openIm(ALICE);
    await client.chat.postMessage({ channel, text: 'hi' });
    fake.failNext('auth.test', { body: { ok: false, error: 'fatal_error' } });
    fake.reset();
    expect(fake.calls).toEqual([]);
    expect(fake.messages.size).toBe(0);
    await expect(client.auth.test()).resolves.toMatchObject({ ok: true });
    await expect(client.chat.postMessage({ channel, text: 'still there' })).resolves.toMatchObject({ ok: true });
    await expect(client.users.info({ user: ALICE })).resolves.toMatchObject({ ok: true });
  });

  test('a response_url records what respond() sends, with the message rules', async () => {
    const url = fake.responseUrl('cmd-1');
    const post = (body: unknown) =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await post({ text: 'Handoff sent', response_type: 'ephemeral' })).status).toBe(200);
    expect((await post({ blocks: [section('no fallback')] })).status).toBe(400);
    const [seen] = fake.callsTo('response_url');
    expect(seen.args).toMatchObject({ text: 'Handoff sent', response_url: 'cmd-1' });
  });
});

// --- slack-delivery additions: rate limits, lost responses, metadata, history and replies --------

describe('fake Slack: rate limits and lost responses', () => {
  const strict = () => webClient(fake.token, { rejectRateLimitedCalls: true });

  test('rateLimitNext answers 429 with Retry-After N times for that method only, changing nothing', async () => {
    const channel = await openIm(ALICE);
    fake.rateLimitNext('chat.postMessage', { times: 2, retryAfterSeconds: 3 });
    for (let i = 0; i < 2; i += 1) {
      await expect(strict().chat.postMessage({ channel, text: 'hi' })).rejects.toMatchObject({
        code: ErrorCode.RateLimitedError,
        retryAfter: 3,
      });
    }
    await expect(strict().users.info({ user: ALICE })).resolves.toMatchObject({ ok: true });
    expect(fake.messages.get(channel) ?? []).toEqual([]);
    await expect(strict().chat.postMessage({ channel, text: 'hi' })).resolves.toMatchObject({ ok: true });
    expect(fake.messages.get(channel)).toHaveLength(1);
  });

  test('dropResponseNext: the post happens but the caller only sees a broken connection', async () => {
    const channel = await openIm(ALICE);
    fake.dropResponseNext('chat.postMessage');
    await expect(client.chat.postMessage({ channel, text: 'lost answer' })).rejects.toBeDefined();
    expect(fake.messages.get(channel)).toMatchObject([{ text: 'lost answer' }]);
    expect(fake.callsTo('chat.postMessage')).toMatchObject([{ response: { ok: true, response_lost: true } }]);
    await expect(client.chat.postMessage({ channel, text: 'answered' })).resolves.toMatchObject({ ok: true });
  });

  test('holdNext: the matching call is neither applied nor answered until released; others go through meanwhile', async () => {
    const alice = await openIm(ALICE);
    const bob = await openIm(BOB);
    const hold = fake.holdNext('chat.postMessage', (args) => args.channel === bob);
    const held = client.chat.postMessage({ channel: bob, text: 'slow' });
    expect(await hold.arrived).toMatchObject({ channel: bob, text: 'slow' });
    await expect(client.chat.postMessage({ channel: alice, text: 'fast' })).resolves.toMatchObject({ ok: true });
    expect(fake.messages.get(bob) ?? []).toHaveLength(0);
    hold.release();
    await expect(held).resolves.toMatchObject({ ok: true });
    expect(fake.messages.get(bob)).toMatchObject([{ text: 'slow' }]);
    // Only the next matching call was held.
    await expect(client.chat.postMessage({ channel: bob, text: 'again' })).resolves.toMatchObject({ ok: true });
  });
});

describe('fake Slack: message metadata, conversations.history and conversations.replies', () => {
  const metadata = (marker: string) => ({
    event_type: 'handoff_relay',
    event_payload: { thread_id: 't-1', kind: 'recipient', marker },
  });

  test('ts is Slack-like: wall-clock seconds with six decimals, increasing', async () => {
    const before = Math.floor(Date.now() / 1000);
    const a = await client.chat.postMessage({ channel: ALICE, text: 'a' });
    const b = await client.chat.postMessage({ channel: ALICE, text: 'b' });
    expect(Number(a.ts)).toBeGreaterThanOrEqual(before);
    expect(Number(a.ts)).toBeLessThanOrEqual(Date.now() / 1000 + 1);
    expect(Number(b.ts)).toBeGreaterThan(Number(a.ts));
  });

  test('metadata is stored and read back only with include_all_metadata', async () => {
    const channel = await openIm(ALICE);
    const posted = await client.chat.postMessage({ channel, text: 'dm', metadata: metadata('m1') });
    const plain = await client.conversations.history({ channel });
    expect(plain.messages).toHaveLength(1);
    expect(plain.messages?.[0]).not.toHaveProperty('metadata');
    const withMeta = await client.conversations.history({ channel, include_all_metadata: true });
    expect(withMeta.messages?.[0]).toMatchObject({ ts: posted.ts, metadata: metadata('m1') });
  });

  test('malformed metadata is refused and posts nothing', async () => {
    const channel = await openIm(ALICE);
    await expectSlackError(
      call('chat.postMessage', { channel, text: 'x', metadata: 'nope' }),
      'invalid_metadata_format',
    );
    await expectSlackError(
      call('chat.postMessage', { channel, text: 'x', metadata: { event_type: 'has space', event_payload: {} } }),
      'invalid_metadata_format',
    );
    await expectSlackError(
      call('chat.postMessage', { channel, text: 'x', metadata: { event_type: 'ok', event_payload: [] } }),
      'invalid_metadata_format',
    );
    await expectSlackError(
      call('chat.postMessage', { channel, text: 'x', metadata: { ...metadata('m'), extra: 1 } }),
      'invalid_metadata_schema',
    );
    expect(fake.messages.get(channel) ?? []).toEqual([]);
  });

  test('history is newest first, leaves thread replies out, and honours oldest, limit and cursor', async () => {
    const channel = await openIm(ALICE);
    const first = await client.chat.postMessage({ channel, text: 'one' });
    await client.chat.postMessage({ channel, text: 'reply', thread_ts: first.ts as string });
    const second = await client.chat.postMessage({ channel, text: 'two' });
    const third = await client.chat.postMessage({ channel, text: 'three' });
    const all = await client.conversations.history({ channel });
    expect(all.messages?.map((m) => m.text)).toEqual(['three', 'two', 'one']);
    expect(all.messages?.[2]).toMatchObject({ thread_ts: first.ts, reply_count: 1 });
    const newer = await client.conversations.history({ channel, oldest: second.ts as string });
    expect(newer.messages?.map((m) => m.ts)).toEqual([third.ts]);
    const inclusive = await client.conversations.history({ channel, oldest: second.ts as string, inclusive: true });
    expect(inclusive.messages?.map((m) => m.text)).toEqual(['three', 'two']);
    const page1 = await client.conversations.history({ channel, limit: 2 });
    expect(page1).toMatchObject({ has_more: true });
    const page2 = await client.conversations.history({
      channel,
      limit: 2,
      cursor: page1.response_metadata?.next_cursor,
    });
    expect([...page1.messages!, ...page2.messages!].map((m) => m.text)).toEqual(['three', 'two', 'one']);
    expect(page2).toMatchObject({ has_more: false, response_metadata: { next_cursor: '' } });
  });

  test('history refuses unknown channels, channels the bot is not in, and bad arguments', async () => {
    const channel = await openIm(ALICE);
    fake.addChannel('C0OUTSIDE', undefined, { botMember: false });
    await expectSlackError(client.conversations.history({ channel: 'D0NEVEROPENED' }), 'channel_not_found');
    await expectSlackError(client.conversations.history({ channel: 'C0OUTSIDE' }), 'not_in_channel');
    await expectSlackError(client.conversations.history({ channel, oldest: 'yesterday' }), 'invalid_ts_oldest');
    await expectSlackError(client.conversations.history({ channel, cursor: 'garbage' }), 'invalid_cursor');
    await expectSlackError(call('conversations.history', { channel, limit: 'ten' }), 'invalid_limit');
  });

  test('a channel the bot is not in: postMessage and update are not_in_channel until it is invited', async () => {
    fake.addChannel('C0TEAMWEB', undefined, { botMember: false });
    await expectSlackError(client.chat.postMessage({ channel: 'C0TEAMWEB', text: 'hello' }), 'not_in_channel');
    fake.setBotMember('C0TEAMWEB', true);
    const posted = await client.chat.postMessage({ channel: 'C0TEAMWEB', text: 'hello' });
    expect((await client.conversations.history({ channel: 'C0TEAMWEB' })).messages?.map((m) => m.text)).toEqual([
      'hello',
    ]);
    fake.setBotMember('C0TEAMWEB', false);
    await expectSlackError(
      client.chat.update({ channel: 'C0TEAMWEB', ts: posted.ts as string, text: 'edited' }),
      'not_in_channel',
    );
  });

  test('replies: the parent then its replies in order, from the parent ts or a reply ts, with metadata on request', async () => {
    const channel = await openIm(ALICE);
    const parent = await client.chat.postMessage({ channel, text: 'dm' });
    const r1 = await client.chat.postMessage({
      channel,
      text: 'r1',
      thread_ts: parent.ts as string,
      metadata: metadata('r1'),
    });
    // A reply to a reply lands in the parent's thread.
    await client.chat.postMessage({ channel, text: 'r2', thread_ts: r1.ts as string });
    await client.chat.postMessage({ channel, text: 'elsewhere' });
    const thread = await client.conversations.replies({ channel, ts: parent.ts as string, include_all_metadata: true });
    expect(thread.messages?.map((m) => m.text)).toEqual(['dm', 'r1', 'r2']);
    expect(thread.messages?.[0]).toMatchObject({ reply_count: 2 });
    expect(thread.messages?.[1]).toMatchObject({ thread_ts: parent.ts, metadata: metadata('r1') });
    const fromReply = await client.conversations.replies({ channel, ts: r1.ts as string });
    expect(fromReply.messages?.map((m) => m.text)).toEqual(['dm', 'r1', 'r2']);
    expect(fromReply.messages?.[1]).not.toHaveProperty('metadata');
    await expectSlackError(client.conversations.replies({ channel, ts: '1600000000.000100' }), 'thread_not_found');
  });

  test('a reply must name a message of the same channel', async () => {
    const alice = await openIm(ALICE);
    const bob = await openIm(BOB);
    const parent = await client.chat.postMessage({ channel: alice, text: 'dm' });
    await expectSlackError(
      client.chat.postMessage({ channel: bob, text: 'wrong channel', thread_ts: parent.ts as string }),
      'thread_not_found',
    );
    expect(fake.messages.get(bob) ?? []).toEqual([]);
  });
});

describe('fake Slack: Socket Mode', () => {
  test('apps.connections.open takes only the app-level token, and the app token is good for nothing else', async () => {
    await expectSlackError(call('apps.connections.open', {}), 'not_allowed_token_type');
    await expectSlackError(
      webClient(fake.appToken).chat.postMessage({ channel: ALICE, text: 'hi' }),
      'not_allowed_token_type',
    );
    await expectSlackError(webClient('xapp-1-wrong').apiCall('apps.connections.open'), 'invalid_auth');
    const opened = await webClient(fake.appToken).apps.connections.open({});
    expect(opened.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/link\/\?ticket=/);
  });

  test('a ticket opens one socket that gets hello, envelopes are acked by id, and a used ticket is refused', async () => {
    const { url } = (await webClient(fake.appToken).apps.connections.open({})) as { url: string };
    const ws = new WebSocket(url);
    const hello = await new Promise<any>((resolve, reject) => {
      ws.onmessage = (e) => resolve(JSON.parse(String(e.data)));
      ws.onerror = () => reject(new Error('socket failed'));
    });
    expect(hello).toMatchObject({ type: 'hello', connection_info: { app_id: expect.any(String) } });
    await fake.socketConnected();
    ws.onmessage = (e) => {
      const envelope = JSON.parse(String(e.data));
      ws.send(JSON.stringify({ envelope_id: envelope.envelope_id, payload: { seen: envelope.type } }));
    };
    await expect(fake.sendEnvelope('slash_commands', { command: '/handoff', text: 'help' })).resolves.toMatchObject({
      payload: { seen: 'slash_commands' },
    });
    ws.close();
    const again = new WebSocket(url);
    await expect(
      new Promise(
        (resolve, reject) => ((again.onopen = resolve), (again.onerror = () => reject(new Error('refused')))),
      ),
    ).rejects.toThrow('refused');
  });
});

// --- end slack-delivery additions ---------------------------------------------------------------

describe('fake Slack: permalinks, unfurls and time zones (slacklive)', () => {
  test('chat.getPermalink names a message of a known channel, with its thread for a reply', async () => {
    fake.addChannel('C0LINKS');
    const ts = fake.addUserMessage('C0LINKS', ALICE, 'hello');
    const reply = fake.addUserMessage('C0LINKS', BOB, 'hi', { thread_ts: ts });
    await expect(call('chat.getPermalink', { channel: 'C0LINKS', message_ts: ts })).resolves.toMatchObject({
      permalink: `https://handoff-relay-test.slack.com/archives/C0LINKS/p${ts.replace('.', '')}`,
    });
    await expect(call('chat.getPermalink', { channel: 'C0LINKS', message_ts: reply })).resolves.toMatchObject({
      permalink: expect.stringContaining(`?thread_ts=${ts}&cid=C0LINKS`),
    });
    await expectSlackError(call('chat.getPermalink', { channel: 'C0NOPE', message_ts: ts }), 'channel_not_found');
    await expectSlackError(
      call('chat.getPermalink', { channel: 'C0LINKS', message_ts: '1.000001' }),
      'message_not_found',
    );
    await expectSlackError(call('chat.getPermalink', { channel: 'C0LINKS' }), 'invalid_arguments');
  });

  test('chat.unfurl unfurls only links shared in that message, by channel + ts or unfurl_id + source, with valid blocks', async () => {
    fake.addChannel('C0UNFURL');
    const shared = fake.shareLinks('C0UNFURL', ALICE, ['https://relay.test/inbox/1']);
    const good = { 'https://relay.test/inbox/1': { blocks: [section('a handoff')] } };
    await expect(
      call('chat.unfurl', { channel: 'C0UNFURL', ts: shared.message_ts, unfurls: good }),
    ).resolves.toMatchObject({ ok: true });
    await expect(
      call('chat.unfurl', { unfurl_id: shared.unfurl_id, source: shared.source, unfurls: good }),
    ).resolves.toMatchObject({ ok: true });
    expect(fake.unfurls.get(`C0UNFURL:${shared.message_ts}`)?.get('https://relay.test/inbox/1')).toEqual(
      good['https://relay.test/inbox/1'],
    );
    await expectSlackError(
      call('chat.unfurl', {
        channel: 'C0UNFURL',
        ts: shared.message_ts,
        unfurls: { 'https://other.test/': { blocks: [] } },
      }),
      'cannot_unfurl_url',
    );
    await expectSlackError(call('chat.unfurl', { channel: 'C0UNFURL', ts: shared.message_ts }), 'missing_unfurls');
    await expectSlackError(
      call('chat.unfurl', { channel: 'C0UNFURL', ts: shared.message_ts, unfurls: '[1]' }),
      'invalid_unfurls_format',
    );
    await expectSlackError(
      call('chat.unfurl', { channel: 'C0UNFURL', ts: '1.000001', unfurls: good }),
      'cannot_unfurl_message',
    );
    await expectSlackError(call('chat.unfurl', { ts: shared.message_ts, unfurls: good }), 'missing_channel');
    await expectSlackError(call('chat.unfurl', { unfurl_id: shared.unfurl_id, unfurls: good }), 'invalid_arguments');
    await expectSlackError(
      call('chat.unfurl', {
        channel: 'C0UNFURL',
        ts: shared.message_ts,
        unfurls: { 'https://relay.test/inbox/1': { blocks: [section(text(3001))] } },
      }),
      'invalid_blocks',
    );
  });

  test('users.info reports the time zone a user was added with, and its current offset', async () => {
    fake.addUser('U0TOKYO', { tz: 'Asia/Tokyo' });
    const res = (await client.users.info({ user: 'U0TOKYO' })) as { user: { tz: string; tz_offset: number } };
    expect(res.user).toMatchObject({ tz: 'Asia/Tokyo', tz_offset: 9 * 3600 });
    expect(() => fake.addUser('U0NOWHERE', { tz: 'Mars/Olympus' })).toThrow(/not an IANA time zone/);
  });
});

describe('checkBlocks', () => {
  test('accepts valid blocks and an empty list', () => {
    expect(checkBlocks([], 'message')).toBeNull();
    expect(checkBlocks([section('hi'), { type: 'actions', elements: [button()] }], 'message')).toBeNull();
  });

  test('message surfaces allow 50 blocks, modal and home 100', () => {
    const blocks = (n: number) => Array.from({ length: n }, () => ({ type: 'divider' }));
    expect(checkBlocks(blocks(50), 'message')).toBeNull();
    expect(checkBlocks(blocks(51), 'message')).toBe('invalid_blocks');
    expect(checkBlocks(blocks(100), 'modal')).toBeNull();
    expect(checkBlocks(blocks(100), 'home')).toBeNull();
    expect(checkBlocks(blocks(101), 'home')).toBe('invalid_blocks');
  });

  test('rejects what is not a list of known blocks', () => {
    expect(checkBlocks('[]', 'message')).toBe('invalid_blocks');
    expect(checkBlocks({}, 'message')).toBe('invalid_blocks');
    expect(checkBlocks([null], 'message')).toBe('invalid_blocks');
    expect(checkBlocks([{ type: 'video' }], 'message')).toBe('invalid_blocks');
    expect(checkBlocks([{ type: 'section' }], 'message')).toBe('invalid_blocks');
    expect(checkBlocks([{ type: 'actions', elements: [] }], 'message')).toBe('invalid_blocks');
    expect(
      checkBlocks([{ type: 'actions', elements: [{ type: 'plain_text_input', action_id: 'x' }] }], 'message'),
    ).toBe('invalid_blocks');
  });

  test('applies every text limit at its boundary', () => {
    const cases: Array<[string, (n: number) => unknown, number]> = [
      ['section text', (n) => section(text(n)), BLOCK_LIMITS.sectionText],
      [
        'section field',
        (n) => ({ type: 'section', fields: [{ type: 'plain_text', text: text(n) }] }),
        BLOCK_LIMITS.sectionFieldText,
      ],
      ['header', (n) => ({ type: 'header', text: { type: 'plain_text', text: text(n) } }), BLOCK_LIMITS.headerText],
      [
        'button text',
        (n) => ({ type: 'actions', elements: [button({ text: { type: 'plain_text', text: text(n) } })] }),
        BLOCK_LIMITS.buttonText,
      ],
      ['button value', (n) => ({ type: 'actions', elements: [button({ value: text(n) })] }), BLOCK_LIMITS.buttonValue],
      ['action_id', (n) => ({ type: 'actions', elements: [button({ action_id: text(n) })] }), BLOCK_LIMITS.id],
      ['block_id', (n) => ({ type: 'divider', block_id: text(n) }), BLOCK_LIMITS.id],
      [
        'input label',
        (n) => ({ type: 'input', label: { type: 'plain_text', text: text(n) }, element: { type: 'plain_text_input' } }),
        BLOCK_LIMITS.inputLabel,
      ],
    ];
    for (const [name, make, limit] of cases) {
      expect([name, checkBlocks([make(limit)], 'modal')]).toEqual([name, null]);
      expect([name, checkBlocks([make(limit + 1)], 'modal')]).toEqual([name, 'invalid_blocks']);
    }
  });

  test('counts elements in fields, actions and context', () => {
    const fields = (n: number) => [
      { type: 'section', fields: Array.from({ length: n }, () => ({ type: 'mrkdwn', text: 'f' })) },
    ];
    const actions = (n: number) => [
      { type: 'actions', elements: Array.from({ length: n }, (_, i) => button({ action_id: `a${i}` })) },
    ];
    const context = (n: number) => [
      { type: 'context', elements: Array.from({ length: n }, () => ({ type: 'mrkdwn', text: 'c' })) },
    ];
    expect([checkBlocks(fields(10), 'message'), checkBlocks(fields(11), 'message')]).toEqual([null, 'invalid_blocks']);
    expect([checkBlocks(actions(25), 'message'), checkBlocks(actions(26), 'message')]).toEqual([
      null,
      'invalid_blocks',
    ]);
    expect([checkBlocks(context(10), 'message'), checkBlocks(context(11), 'message')]).toEqual([
      null,
      'invalid_blocks',
    ]);
  });

  test('total block text over 12000 is msg_blocks_too_long in messages only', () => {
    const blocks = Array.from({ length: 5 }, () => section(text(2401)));
    expect(checkBlocks(blocks, 'message')).toBe('msg_blocks_too_long');
    expect(checkBlocks(blocks, 'home')).toBeNull();
    expect(checkBlocks(blocks.slice(0, 4), 'message')).toBeNull();
  });

  test('findBlockProblem and findViewProblem point at the field', () => {
    expect(findBlockProblem([{ type: 'divider' }, section(text(3001))], 'message')).toEqual({
      error: 'invalid_blocks',
      pointer: '/blocks/1/text/text',
      message: 'must be less than 3001 characters',
    });
    expect(findViewProblem(modal({ title: { type: 'plain_text', text: text(25) } }), 'modal')).toMatchObject({
      error: 'invalid_arguments',
      pointer: '/view/title/text',
    });
    expect(findViewProblem({ type: 'home', blocks: [] }, 'home')).toBeNull();
  });
});

describe('text streaming (chat.startStream / appendStream / stopStream)', () => {
  test('a stream is a reply that grows chunk by chunk and ends once; the limits and states are Slack’s', async () => {
    const dm = await openIm(ALICE);
    const parent = await client.chat.postMessage({ channel: dm, text: 'the handoff', blocks: [section('hi')] });
    // thread_ts is required; text is required to start; 12,000 characters at most per chunk.
    await expectSlackError(call('chat.startStream', { channel: dm, markdown_text: 'x' }), 'invalid_arguments');
    await expectSlackError(call('chat.startStream', { channel: dm, thread_ts: parent.ts }), 'invalid_arguments');
    await expectSlackError(
      client.chat.startStream({ channel: dm, thread_ts: parent.ts!, markdown_text: text(12_001) }),
      'msg_too_long',
    );
    await expectSlackError(
      client.chat.startStream({ channel: dm, thread_ts: '1.000001', markdown_text: 'x' }),
      'thread_not_found',
    );
    const started = await client.chat.startStream({ channel: dm, thread_ts: parent.ts!, markdown_text: 'step 1\n' });
    await client.chat.appendStream({ channel: dm, ts: started.ts!, markdown_text: 'step 2\n' });
    await expectSlackError(call('chat.appendStream', { channel: dm, ts: started.ts }), 'invalid_arguments');
    await client.chat.stopStream({ channel: dm, ts: started.ts!, markdown_text: 'done' });
    await expectSlackError(
      client.chat.appendStream({ channel: dm, ts: started.ts!, markdown_text: 'late' }),
      'message_not_in_streaming_state',
    );
    await expectSlackError(client.chat.stopStream({ channel: dm, ts: started.ts! }), 'message_not_in_streaming_state');
    const streamed = fake.messages.get(dm)!.find((m) => m.ts === started.ts)!;
    expect(streamed).toMatchObject({
      thread_ts: parent.ts,
      streaming: false,
      text: 'step 1\nstep 2\ndone',
      chunks: ['step 1\n', 'step 2\n', 'done'],
    });
  });

  test('outside a DM the recipient is required; without streaming the methods are unknown', async () => {
    fake.addChannel('C0STREAMS', [ALICE]);
    const parent = await client.chat.postMessage({ channel: 'C0STREAMS', text: 'in a channel' });
    await expectSlackError(
      client.chat.startStream({ channel: 'C0STREAMS', thread_ts: parent.ts!, markdown_text: 'x' }),
      'invalid_arguments',
    );
    await client.chat.startStream({
      channel: 'C0STREAMS',
      thread_ts: parent.ts!,
      markdown_text: 'x',
      recipient_user_id: ALICE,
      recipient_team_id: fake.teamId,
    });
    fake.setStreaming(false);
    try {
      await expectSlackError(
        client.chat.startStream({ channel: 'C0STREAMS', thread_ts: parent.ts!, markdown_text: 'x' }),
        'unknown_method',
      );
    } finally {
      fake.setStreaming(true);
    }
  });
});

describe('fake Slack: install anywhere (OAuth v2)', () => {
  const app = { clientId: '1111111111.2222222222', clientSecret: 'client-secret-0123' };
  const redirectUri = 'http://127.0.0.1:9/slack/oauth_redirect';

  beforeAll(() => {
    fake.enableOAuth(app);
    fake.addWorkspace('T0OTHER', 'Other Co');
    fake.addUser('U0OTHERPERSON', { team: 'T0OTHER' });
  });

  /** The person presses Allow for `team`: the code the redirect carries. */
  async function allow(team: string, over: Record<string, string> = {}): Promise<string> {
    const url = new URL(fake.url.replace(/api\/$/, 'oauth/v2/authorize'));
    const query = {
      client_id: app.clientId,
      scope: 'chat:write,im:write',
      redirect_uri: redirectUri,
      state: 's1',
      ...over,
    };
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    const response = await fetch(fake.authorizeUrlFor(url.toString(), team), { redirect: 'manual' });
    expect(response.status).toBe(302);
    const back = new URL(response.headers.get('location')!);
    expect(back.searchParams.get('state')).toBe('s1');
    return back.searchParams.get('code')!;
  }

  const exchange = (args: Record<string, unknown>) =>
    call('oauth.v2.access', args, webClient(undefined)) as Promise<{ ok: boolean; access_token?: string }>;

  test('oauth.v2.access checks the client, the redirect_uri of the authorize step, and takes each code once', async () => {
    const code = await allow('T0OTHER');
    await expectSlackError(
      exchange({ client_id: 'wrong.1', client_secret: app.clientSecret, code, redirect_uri: redirectUri }),
      'invalid_client_id',
    );
    await expectSlackError(
      exchange({ client_id: app.clientId, client_secret: 'nope-nope', code, redirect_uri: redirectUri }),
      'bad_client_secret',
    );
    const ok = await exchange({
      client_id: app.clientId,
      client_secret: app.clientSecret,
      code,
      redirect_uri: redirectUri,
    });
    expect(ok).toMatchObject({ ok: true, token_type: 'bot', team: { id: 'T0OTHER', name: 'Other Co' } });
    expect(fake.installedTokens.get('T0OTHER')).toBe(ok.access_token);
    await expectSlackError(
      exchange({ client_id: app.clientId, client_secret: app.clientSecret, code, redirect_uri: redirectUri }),
      'invalid_code',
    );
    const other = await allow('T0OTHER');
    await expectSlackError(
      exchange({
        client_id: app.clientId,
        client_secret: app.clientSecret,
        code: other,
        redirect_uri: 'http://127.0.0.1:9/elsewhere',
      }),
      'bad_redirect_uri',
    );
  });

  test('the authorize page refuses an unknown client, workspace or scope', async () => {
    const base = new URL(fake.url.replace(/api\/$/, 'oauth/v2/authorize'));
    for (const [query, why] of [
      [{ client_id: 'wrong.1', scope: 'chat:write' }, 'invalid client_id'],
      [{ client_id: app.clientId, scope: 'admin' }, 'invalid scope admin'],
    ] as const) {
      const url = new URL(base);
      for (const [k, v] of Object.entries({ ...query, redirect_uri: redirectUri })) url.searchParams.set(k, v);
      const response = await fetch(fake.authorizeUrlFor(url.toString(), 'T0OTHER'), { redirect: 'manual' });
      expect([response.status, await response.text()]).toEqual([400, `fake Slack: ${why}`]);
    }
    const nowhere = await fetch(fake.authorizeUrlFor(base.toString(), 'T0NOWHERE'), { redirect: 'manual' });
    expect(nowhere.status).toBe(400);
  });

  test('a workspace’s token sees only its people; the default token only the default workspace’s; an uninstall revokes it', async () => {
    const code = await allow('T0OTHER');
    const { access_token: token } = await exchange({
      client_id: app.clientId,
      client_secret: app.clientSecret,
      code,
      redirect_uri: redirectUri,
    });
    const other = webClient(token as string);
    expect((await other.conversations.open({ users: 'U0OTHERPERSON' })).channel?.id).toBe(
      fake.imChannelId('U0OTHERPERSON'),
    );
    await expectSlackError(other.conversations.open({ users: ALICE }), 'user_not_found');
    await expectSlackError(
      other.chat.postMessage({ channel: fake.imChannelId(ALICE), text: 'hi' }),
      'channel_not_found',
    );
    await expectSlackError(client.users.info({ user: 'U0OTHERPERSON' }), 'user_not_found');
    await expectSlackError(
      client.chat.postMessage({ channel: fake.imChannelId('U0OTHERPERSON'), text: 'hi' }),
      'channel_not_found',
    );
    expect((await other.auth.test()).team_id).toBe('T0OTHER');
    expect(fake.uninstall('T0OTHER')).toEqual({ type: 'app_uninstalled' });
    await expectSlackError(other.auth.test(), 'token_revoked');
  });
});

describe('fake Slack: token rotation', () => {
  test('with rotation on, a code gives a refresh token; each refresh token works once; an expired token is refused', async () => {
    const app = { clientId: '3333333333.4444444444', clientSecret: 'rotating-secret-0123', rotation: true };
    fake.enableOAuth(app);
    fake.addWorkspace('T0ROTATE');
    const redirectUri = 'http://127.0.0.1:9/slack/oauth_redirect';
    const url = new URL(fake.url.replace(/api\/$/, 'oauth/v2/authorize'));
    for (const [k, v] of Object.entries({ client_id: app.clientId, scope: 'chat:write', redirect_uri: redirectUri }))
      url.searchParams.set(k, v);
    const consent = await fetch(fake.authorizeUrlFor(url.toString(), 'T0ROTATE'), { redirect: 'manual' });
    const code = new URL(consent.headers.get('location')!).searchParams.get('code')!;
    const creds = { client_id: app.clientId, client_secret: app.clientSecret };
    const anonymous = webClient(undefined);
    const first = (await call(
      'oauth.v2.access',
      { ...creds, code, redirect_uri: redirectUri },
      anonymous,
    )) as unknown as Record<string, string>;
    expect(first).toMatchObject({ refresh_token: expect.stringMatching(/^xoxe-1-/), expires_in: 43_200 });
    fake.expireToken('T0ROTATE');
    await expectSlackError(webClient(first.access_token).auth.test(), 'token_expired');
    const refreshed = (await call(
      'oauth.v2.access',
      { ...creds, grant_type: 'refresh_token', refresh_token: first.refresh_token },
      anonymous,
    )) as unknown as Record<string, string>;
    expect(refreshed.access_token).not.toBe(first.access_token);
    expect((await webClient(refreshed.access_token).auth.test()).team_id).toBe('T0ROTATE');
    await expectSlackError(
      call('oauth.v2.access', { ...creds, grant_type: 'refresh_token', refresh_token: first.refresh_token }, anonymous),
      'invalid_refresh_token',
    );
  });
});

describe('fake Slack: install flow and Enterprise Grid orgs', () => {
  const app = { clientId: '1111.2222', clientSecret: 'install-secret' };
  const redirect = 'http://127.0.0.1:9/slack/oauth_redirect';
  const authorize = (extra: Record<string, string> = {}) => {
    const url = new URL('/oauth/v2/authorize', fake.url);
    for (const [k, v] of Object.entries({
      client_id: app.clientId,
      scope: 'chat:write',
      redirect_uri: redirect,
      state: 's1',
      ...extra,
    }))
      url.searchParams.set(k, v);
    return fetch(url, { redirect: 'manual' });
  };
  const exchange = async (team: string) => {
    const allowed = await authorize({ team });
    expect(allowed.status).toBe(302);
    const code = new URL(allowed.headers.get('location')!).searchParams.get('code')!;
    return webClient(undefined).oauth.v2.access({
      client_id: app.clientId,
      client_secret: app.clientSecret,
      code,
      redirect_uri: redirect,
    });
  };

  beforeAll(() => {
    fake.enableOAuth(app);
    fake.addOrg('E0ACME', 'Acme Corp');
    fake.addWorkspace('T0EAST', 'East', { org: 'E0ACME' });
    fake.addWorkspace('T0WEST', 'West', { org: 'E0ACME' });
    fake.addWorkspace('T0SOLO', 'Solo');
    fake.addUser('U0EVE', { team: 'T0EAST' });
    fake.addUser('U0WALT', { team: 'T0WEST' });
    fake.addUser('U0SOL', { team: 'T0SOLO' });
  });

  test('a person at the authorize page (no team named) gets a consent page to choose a workspace or an org', async () => {
    const page = await authorize();
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('value="T0SOLO"');
    expect(html).toContain('Acme Corp (E0ACME, the whole org)');
    expect(html).toContain('id="allow"');
    expect(html).toContain(`name="redirect_uri" value="${redirect}"`);
    // Still strict before the page: a wrong client id is refused.
    expect((await authorize({ client_id: '9.9' })).status).toBe(400);
  });

  test('an org-wide install: one token for every workspace of the org, and nobody outside it', async () => {
    const installed = await exchange('E0ACME');
    expect(installed).toMatchObject({
      team: null,
      enterprise: { id: 'E0ACME', name: 'Acme Corp' },
      is_enterprise_install: true,
    });
    const org = webClient(installed.access_token);
    expect((await org.users.info({ user: 'U0EVE' })).user?.id).toBe('U0EVE');
    expect((await org.conversations.open({ users: 'U0WALT' })).channel?.id).toBe(fake.imChannelId('U0WALT'));
    await expectSlackError(org.users.info({ user: 'U0SOL' }), 'user_not_found');
    await expectSlackError(org.users.list({}), 'missing_argument');
    await expectSlackError(org.users.list({ team_id: 'T0SOLO' }), 'team_access_not_granted');
    expect((await org.users.list({ team_id: 'T0WEST' })).members!.map((m) => m.id)).toContain('U0WALT');
    expect((await org.auth.test()).is_enterprise_install).toBe(true);
    // A workspace of the org installed on its own names its org, and is not an org-wide install.
    expect(await exchange('T0EAST')).toMatchObject({
      team: { id: 'T0EAST' },
      enterprise: { id: 'E0ACME' },
      is_enterprise_install: false,
    });
    fake.uninstall('E0ACME');
    await expectSlackError(org.users.info({ user: 'U0EVE' }), 'token_revoked');
  });
});
