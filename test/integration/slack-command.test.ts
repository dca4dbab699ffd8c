// /handoff through the real Bolt receiver with signed requests, a real relay and the strict fake Slack: help, the
// new-handoff modal and its submission, quick send, inbox, link; every failure path answers clearly and changes nothing.
import { startFakeSlack, type FakeSlack, type FakeSlackCall } from '../../scripts/fake-slack/fake-slack-api';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import {
  clickButton,
  sendSlashCommand,
  submitViewState,
  type ViewStateSubmission,
} from '../../scripts/fake-slack/slack-requests';
import { waitUntil } from '../helpers/wait-until';

const ALICE = 'U0ALICE';
const BOB = 'U0BOB';
const CAROL = 'U0CAROL'; // in the workspace, never linked
let slack: FakeSlack;
let relay: TestRelay;
let aliceKey: string;
let bobKey: string;
let eventsUrl: string;
let seq = 0;

beforeAll(async () => {
  slack = await startFakeSlack();
  for (const [id, name] of [
    [ALICE, 'alice'],
    [BOB, 'bob'],
    [CAROL, 'carol'],
    ['U0DAVE', 'dave'],
    ['U0ERIN', 'erin'],
    ['U0FRANK', 'frank'],
    ['U0GINA', 'gina'],
  ]) {
    slack.addUser(id!, { name: name!, real_name: `${name![0]!.toUpperCase()}${name!.slice(1)} Example` });
  }
  relay = await startTestRelay({ name: 'slack_command', slack, env: { RELAY_TEAM: 'acme' } });
  eventsUrl = `${relay.url}/slack/events`;
  aliceKey = await relay.register({ handle: 'alice@acme', slack_user_id: ALICE });
  bobKey = await relay.register({ handle: 'bob@acme', slack_user_id: BOB });
});

afterAll(async () => {
  await relay?.stop();
  await slack?.close();
});

/** Runs `/handoff <text>` as user; returns the HTTP answer and a waiter for the app's response_url answer. */
async function handoff(user: string, text: string, triggerId = slack.triggerId()) {
  const name = `cmd-${++seq}`;
  const answer = await sendSlashCommand(eventsUrl, relay.signingSecret, {
    user,
    text,
    responseUrl: slack.responseUrl(name),
    triggerId,
  });
  expect(answer.status).toBe(200);
  return {
    answer,
    name,
    reply: () => slack.waitFor('response_url', (c) => c.args.response_url === name).then((c) => c.args),
  };
}

const threadsFrom = (handle: string) => relay.store.threads.find({ from: handle }).sort({ created_at: 1 }).toArray();
const buttonsOf = (blocks: any[]) => blocks.flatMap((b) => (b.type === 'actions' ? b.elements : []));

describe('help', () => {
  test('/handoff help lists every subcommand, ephemerally', async () => {
    const { reply } = await handoff(ALICE, 'help');
    const answer = await reply();
    expect(answer.response_type).toBe('ephemeral');
    for (const sub of ['/handoff inbox', '/handoff link', '/handoff @someone']) expect(answer.text).toContain(sub);
  });

  test('an unknown subcommand says so on its own line, then shows the help', async () => {
    const answer = await (await handoff(ALICE, 'frobnicate now')).reply();
    expect(String(answer.text).split('\n')[0]).toBe('`/handoff frobnicate` is not a handoff-relay command.');
    expect(answer.text).toContain('/handoff inbox');
  });
});

describe('/handoff opens the new-handoff modal', () => {
  test('for a linked user, with the command trigger', async () => {
    const triggerId = slack.triggerId();
    await handoff(ALICE, '', triggerId);
    const open = await slack.waitFor('views.open', (c) => c.args.trigger_id === triggerId);
    expect((open.args.view as any).callback_id).toBe('handoff_new_modal');
  });

  test('an unlinked user is told how to link instead', async () => {
    const triggerId = slack.triggerId();
    const answer = await (await handoff(CAROL, '   ', triggerId)).reply();
    expect(answer.text).toContain('/handoff link');
    expect(slack.calls.some((c) => c.method === 'views.open' && c.args.trigger_id === triggerId)).toBe(false);
  });

  test('a trigger Slack no longer honours gets a clear message to retry', async () => {
    const answer = await (await handoff(ALICE, '', slack.triggerId({ issuedMsAgo: 4_000 }))).reply();
    expect(answer.text).toContain('expired_trigger_id');
    expect(answer.text).toContain('run `/handoff` again');
  });
});

describe('submitting the new-handoff modal', () => {
  const text = (value?: string) => ({ type: 'plain_text_input', value: value ?? null });
  function values(form: {
    to?: string | null;
    intent?: string;
    summary?: string;
    question?: string;
    description?: string;
    files?: string;
    rationale?: string;
    links?: string;
  }) {
    return {
      recipient: { recipient: { type: 'users_select', selected_user: form.to === undefined ? BOB : form.to } },
      intent: {
        intent: {
          type: 'static_select',
          selected_option: { text: { type: 'plain_text', text: 'x' }, value: form.intent ?? 'inform' },
        },
      },
      summary: { summary: text(form.summary ?? 'Summary') },
      question: { question: text(form.question) },
      action_description: { action_description: text(form.description) },
      action_files: { action_files: text(form.files) },
      action_rationale: { action_rationale: text(form.rationale) },
      links: { links: text(form.links) },
    };
  }
  const submission = (
    form: Parameters<typeof values>[0],
    extra: Partial<ViewStateSubmission> = {},
  ): ViewStateSubmission => ({
    user: ALICE,
    viewId: `V0SUBMIT${++seq}`,
    callbackId: 'handoff_new_modal',
    values: values(form),
    ...extra,
  });
  async function submit(s: ViewStateSubmission) {
    const answer = await submitViewState(eventsUrl, relay.signingSecret, s);
    expect(answer.status).toBe(200);
    return answer.text
      ? (JSON.parse(answer.text) as { response_action?: string; errors?: Record<string, string> })
      : {};
  }

  test('creates the handoff as the caller, with link artifacts, closes the modal and DMs a confirmation', async () => {
    const s = submission({
      summary: 'Rate limiter moved to Redis',
      links: 'https://github.com/acme/api/pull/7\n\n  https://acme.dev/adr/12  ',
    });
    expect(await submit(s)).toEqual({});
    const thread = (await threadsFrom('alice@acme')).find((t) => t.summary === 'Rate limiter moved to Redis')!;
    expect(thread).toMatchObject({ to: 'bob@acme', intent: 'inform', status: 'pending' });
    expect(thread.status_history[0]).toMatchObject({ by: 'alice@acme', via: 'slack' });
    expect(thread.artifacts).toEqual([
      { type: 'link', url: 'https://github.com/acme/api/pull/7' },
      { type: 'link', url: 'https://acme.dev/adr/12' },
    ]);
    const dm = await slack.waitFor(
      'chat.postMessage',
      (c) => c.args.channel === ALICE && String(c.args.text).includes('bob@acme'),
    );
    expect(dm.args.text).toContain(thread._id);
  });

  test("Slack's retry of the same submission creates one thread", async () => {
    const s = submission({ summary: 'Retried submission' });
    const answers = await Promise.all([submit(s), submit(s), submit(s)]);
    expect(answers).toEqual([{}, {}, {}]);
    expect((await threadsFrom('alice@acme')).filter((t) => t.summary === 'Retried submission')).toHaveLength(1);
  });

  test('propose_action carries description, target files and rationale', async () => {
    const s = submission({
      intent: 'propose_action',
      summary: 'Proposal',
      description: 'Rename the flag',
      files: 'src/a.ts\nsrc/b.ts',
      rationale: 'Clarity',
    });
    expect(await submit(s)).toEqual({});
    const thread = (await threadsFrom('alice@acme')).find((t) => t.summary === 'Proposal')!;
    expect(thread.proposed_action).toEqual({
      description: 'Rename the flag',
      target_files: ['src/a.ts', 'src/b.ts'],
      rationale: 'Clarity',
    });
  });

  test.each([
    ['ask_question without a question', { intent: 'ask_question' }, 'question', 'A question is required'],
    [
      'a question on an inform',
      { question: 'Why?' },
      'question',
      'question is only allowed when intent is "ask_question" (got "inform").',
    ],
    [
      'an action on an inform',
      { description: 'Do it', files: 'src/a.ts' },
      'action_files',
      'proposed_action is only allowed when intent is "propose_action" (got "inform").',
    ],
    [
      'propose_action without a rationale',
      { intent: 'propose_action', description: 'Do it' },
      'action_rationale',
      'Say why',
    ],
    [
      'a link that is not an http(s) URL',
      { links: 'https://ok.example\nftp://files.example/x' },
      'links',
      'Line 2: must be an http(s) URL',
    ],
    ['a summary longer than the relay takes', { summary: 'x'.repeat(8_001) }, 'summary', 'at most 8000 characters'],
    ['a recipient with no linked teammate', { to: CAROL }, 'recipient', 'no handoff-relay teammate linked'],
    ['no recipient', { to: null }, 'recipient', 'Choose who'],
  ])('%s is refused on its field and creates nothing', async (_name, form, field, message) => {
    const before = (await threadsFrom('alice@acme')).length;
    const answer = await submit(submission(form as never));
    expect(answer.response_action).toBe('errors');
    expect(answer.errors?.[field]).toContain(message);
    expect((await threadsFrom('alice@acme')).length).toBe(before);
  });

  test('an unlinked user submitting gets the linking message on the form', async () => {
    const answer = await submit(submission({}, { user: CAROL }));
    expect(answer.errors?.recipient).toContain('/handoff link');
    expect(await threadsFrom('carol@acme')).toHaveLength(0);
  });
});

describe('/handoff @someone text sends a quick inform handoff', () => {
  test('with the escaped mention Slack sends (should_escape: true), text decoded', async () => {
    const answer = await (
      await handoff(ALICE, '<@U0BOB|bob> please review &amp; merge <https://acme.dev/pr/9|PR 9> with <@U0CAROL|carol>')
    ).reply();
    expect(answer.text).toContain('Sent to `bob@acme`');
    const thread = (await threadsFrom('alice@acme')).find((t) => t.summary.startsWith('please review'))!;
    expect(thread).toMatchObject({
      to: 'bob@acme',
      intent: 'inform',
      summary: 'please review & merge https://acme.dev/pr/9 with @carol',
    });
    expect(thread.status_history[0]!.via).toBe('slack');
  });

  test('with a handle (works whether or not Slack escapes)', async () => {
    await (await handoff(ALICE, '@bob@acme handle form')).reply();
    expect((await threadsFrom('alice@acme')).find((t) => t.summary === 'handle form')?.to).toBe('bob@acme');
  });

  test.each([
    ['a plain @name (unescaped)', '@bob hello', 'sent `@bob` as plain text'],
    ['a Slack user with no teammate', '<@U0CAROL|carol> hello', 'has no handoff-relay teammate'],
    ['a handle nobody has', 'nobody@acme hello', 'No active teammate with handle nobody@acme'],
    ['no text', '<@U0BOB|bob>   ', 'Say what you hand over'],
  ])('%s: clear message, nothing sent', async (_name, text, message) => {
    const before = (await threadsFrom('alice@acme')).length;
    const answer = await (await handoff(ALICE, text)).reply();
    expect(answer.text).toContain(message);
    expect((await threadsFrom('alice@acme')).length).toBe(before);
  });

  test('an unlinked sender is told to link', async () => {
    const answer = await (await handoff(CAROL, '<@U0BOB|bob> hi')).reply();
    expect(answer.text).toContain('not linked');
    expect(await threadsFrom('carol@acme')).toHaveLength(0);
  });
});

describe('/handoff inbox', () => {
  let pendingId: string;
  let acceptedId: string;
  let completedId: string;
  beforeAll(async () => {
    const send = async (summary: string) =>
      (
        await relay.rpc(aliceKey, 'message/send', {
          recipient: 'bob@acme',
          intent: 'inform',
          message: { parts: [{ text: summary }] },
        })
      ).body.result.task_id as string;
    pendingId = await send('inbox pending');
    acceptedId = await send('inbox accepted');
    completedId = await send('inbox completed');
    for (const [id, transitions] of [
      [acceptedId, ['accept']],
      [completedId, ['accept', 'complete']],
    ] as const) {
      for (const transition of transitions)
        expect((await relay.rpc(bobKey, 'tasks/update', { task_id: id, transition })).body.result).toBeDefined();
    }
  });

  test("shows the caller's pending and accepted handoffs with the DM's buttons, ephemerally", async () => {
    const answer = await (await handoff(BOB, 'inbox')).reply();
    expect(answer.response_type).toBe('ephemeral');
    const blocks = answer.blocks as any[];
    const byThread = (id: string) => buttonsOf(blocks.filter((b) => b.block_id === `thread_${id}`));
    expect(byThread(pendingId).map((b: any) => b.action_id)).toEqual([
      'handoff_accept',
      'handoff_decline',
      'handoff_reply',
      'handoff_open_inbox',
    ]);
    expect(byThread(acceptedId).map((b: any) => b.action_id)).toEqual([
      'handoff_complete',
      'handoff_reply',
      'handoff_open_inbox',
    ]);
    expect(JSON.parse(byThread(pendingId)[0].value)).toEqual({ t: pendingId, s: 'pending' });
    expect(byThread(completedId)).toEqual([]);
    expect(JSON.stringify(blocks)).not.toContain('inbox completed');
  });

  test("the inbox buttons act only as their owner: others are refused, the owner's Accept goes through", async () => {
    const answer = await (await handoff(BOB, 'inbox')).reply();
    const accept = buttonsOf((answer.blocks as any[]).filter((b) => b.block_id === `thread_${pendingId}`))[0];
    const click = (user: string, name: string) =>
      clickButton(eventsUrl, relay.signingSecret, {
        surface: 'ephemeral',
        user,
        channel: 'C0GENERAL',
        messageTs: '1700000000.000999',
        actionId: accept.action_id,
        value: accept.value,
        responseUrl: slack.responseUrl(name),
        triggerId: slack.triggerId(),
      });
    for (const [user, name, message] of [
      [ALICE, 'alice-click', 'Only the recipient (bob@acme) can accept'],
      [CAROL, 'carol-click', 'not linked'],
    ] as const) {
      expect((await click(user, name)).status).toBe(200);
      const refusal = await slack.waitFor('response_url', (c) => c.args.response_url === name);
      expect(refusal.args.text).toContain(message);
      expect((await relay.store.threads.findOne({ _id: pendingId }))!.status).toBe('pending');
    }
    expect((await click(BOB, 'bob-click')).status).toBe(200);
    await waitUntil(
      async () => (await relay.store.threads.findOne({ _id: pendingId }))?.status === 'accepted' || undefined,
      "Bob's accept",
    );
  });

  test('an unlinked user is told to link', async () => {
    expect((await (await handoff(CAROL, 'inbox')).reply()).text).toContain('/handoff link');
  });
});

describe('/handoff link', () => {
  /** The API key in a link modal's blocks, if any. */
  const keyIn = (c: FakeSlackCall) =>
    /hr_[0-9a-f]{12}_[A-Za-z0-9_-]{20,}/.exec(JSON.stringify(c.args.view ?? c.args))?.[0];

  test('creates a teammate bound to the caller, shows its key once with MCP configuration, and the key works on /a2a', async () => {
    const triggerId = slack.triggerId();
    await handoff('U0DAVE', 'link', triggerId);
    const opened = await slack.waitFor('views.open', (c) => c.args.trigger_id === triggerId);
    expect((opened.args.view as any).callback_id).toBe('handoff_link_modal');
    const viewId = opened.response.view as { id: string };
    const shown = await slack.waitFor('views.update', (c) => c.args.view_id === viewId.id);
    const key = keyIn(shown)!;
    expect(key).toBeDefined();
    const modal = JSON.stringify(shown.args.view);
    expect(modal).toContain('dave@acme');
    expect(modal).toContain('claude mcp add');
    expect(modal).toContain(`${relay.config.publicUrl}/mcp`);

    const agent = await relay.relay.teammates.bySlackUser('U0DAVE');
    expect(agent).toMatchObject({ handle: 'dave@acme', name: 'Dave Example', slack_user_id: 'U0DAVE' });
    const list = await relay.rpc(key, 'tasks/list', { filter: { role: 'recipient' } });
    expect(list.status).toBe(200);
    expect(list.body.result.items).toEqual([]);

    // Linking again: told who they are, no second key anywhere.
    const again = await (await handoff('U0DAVE', 'link')).reply();
    expect(again.text).toContain('already linked to teammate `dave@acme`; no new key was made');
    expect(slack.calls.filter((c) => keyIn(c) !== undefined)).toHaveLength(1);
    expect(await relay.store.apiKeys.countDocuments({ handle: 'dave@acme' })).toBe(1);
  });

  test('takes a handle from the argument', async () => {
    await handoff('U0ERIN', 'link erin.k');
    await waitUntil(
      async () => (await relay.relay.teammates.bySlackUser('U0ERIN'))?.handle === 'erin.k@acme' || undefined,
      'erin linked',
    );
  });

  test('a taken handle creates nothing and says so in the modal', async () => {
    const triggerId = slack.triggerId();
    await handoff('U0FRANK', 'link alice', triggerId);
    const opened = await slack.waitFor('views.open', (c) => c.args.trigger_id === triggerId);
    const update = await slack.waitFor(
      'views.update',
      (c) => c.args.view_id === (opened.response.view as { id: string }).id,
    );
    expect(JSON.stringify(update.args.view)).toContain('alice@acme is taken');
    expect(keyIn(update)).toBeUndefined();
    expect(await relay.relay.teammates.bySlackUser('U0FRANK')).toBeNull();
  });

  test('Slack refusing the profile lookup creates nothing and says so', async () => {
    slack.failNext('users.info', { body: { ok: false, error: 'ratelimited' } });
    expect((await (await handoff('U0GINA', 'link')).reply()).text).toContain(
      'Slack did not give handoff-relay your profile (ratelimited)',
    );
    expect(await relay.relay.teammates.bySlackUser('U0GINA')).toBeNull();
  });

  test.each([
    ['another team', 'link gina@elsewhere', 'must end in `@acme`'],
    ['an invalid handle', 'link gina!', 'cannot be a handle'],
  ])('%s: ephemeral explanation, nothing created', async (_name, text, message) => {
    expect((await (await handoff('U0GINA', text)).reply()).text).toContain(message);
    expect(await relay.relay.teammates.bySlackUser('U0GINA')).toBeNull();
  });

  test('two concurrent /handoff link make one teammate and one key', async () => {
    const updatesBefore = slack.callsTo('views.update').length;
    const names = (await Promise.all([handoff('U0GINA', 'link'), handoff('U0GINA', 'link')])).map((c) => c.name);
    // Each command ends either in an ephemeral answer or in the link modal's final content.
    const updates = () => slack.callsTo('views.update').slice(updatesBefore);
    const outcomes = () =>
      slack.callsTo('response_url').filter((c) => names.includes(String(c.args.response_url))).length +
      updates().length;
    await waitUntil(async () => outcomes() === 2 || undefined, 'both link commands answered');
    expect(await relay.store.apiKeys.countDocuments({ handle: 'gina@acme' })).toBe(1);
    expect(await relay.store.agents.countDocuments({ slack_user_id: 'U0GINA' })).toBe(1);
    expect(
      slack.calls.filter((c) => keyIn(c) !== undefined && JSON.stringify(c.args).includes('gina@acme')),
    ).toHaveLength(1);
    // The loser is told it is already linked, in whichever way it lost.
    const told = [
      ...slack
        .callsTo('response_url')
        .filter((c) => names.includes(String(c.args.response_url)))
        .map((c) => String(c.args.text)),
      ...updates()
        .map((c) => JSON.stringify(c.args.view))
        .filter((v) => v.includes('already linked')),
    ];
    expect(told).toHaveLength(1);
    expect(told[0]).toMatch(/already linked .*no new key was made/);
  });
});
