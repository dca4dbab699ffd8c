// The /handoff command (each subcommand), every event and the message shortcut registerListeners registers, called as
// Bolt calls them with the fake Slack's payloads: ack first where Slack wants one, the use case called with the
// request's arguments, the answer through respond or the client, and a refusal told in words.
import { RelayError } from '../../relay-core/domain/errors';
import { registerListeners, type SlackAppDeps } from '../../bot/slack-app';
import { HANDOFF_COMMAND, HANDOFF_HELP, NOT_LINKED } from '../../bot/listeners/commands/handoff-command';
import { MESSAGE_SHORTCUT_CALLBACK_ID, NEW_HANDOFF_CALLBACK_ID } from '../../bot/views/new-handoff-modal';
import { NOW } from '../fakes/use-case-ports';
import { recipient, sender, SlackListenerKit, storedThread, STRANGER } from '../fakes/slack-listener-kit';

let kit: SlackListenerKit;
beforeEach(() => {
  kit = new SlackListenerKit();
});

const covered = new Set<string>();
function describeListener(key: string, tests: () => void): void {
  covered.add(key);
  describe(key, tests);
}

test('every command, event and shortcut registerListeners registers has a fast test here (buttons and modals have theirs)', () => {
  const registered = kit.registered().filter((k) => !k.startsWith('action:') && !k.startsWith('view:'));
  expect(registered.sort()).toEqual([...covered].sort());
  // Nothing is registered but through the five kinds the kit knows (a sixth would fail to record here).
  const kinds = new Set<string>();
  registerListeners(
    new Proxy({}, { get: (_t, kind) => () => void kinds.add(String(kind)) }) as never,
    {} as SlackAppDeps,
  );
  expect([...kinds].sort()).toEqual(['action', 'command', 'event', 'shortcut', 'view']);
});

describeListener(`command:${HANDOFF_COMMAND}`, () => {
  /** Runs `/handoff <text>` (as the recipient unless `user` says) and checks it acked before anything else. */
  async function run(text: string, over: { user?: string; channel?: string } = {}) {
    await kit.listener('command', HANDOFF_COMMAND)(kit.command({ text, ...over }));
    expect(kit.whats()[0]).toBe('ack');
    expect(kit.calls('ack')).toEqual([[]]);
  }

  test('help answers the help, ephemerally', async () => {
    await run('help');
    expect(kit.calls('respond')).toEqual([[{ response_type: 'ephemeral', text: HANDOFF_HELP }]]);
  });

  test('refused: an unknown word says so, with the help', async () => {
    await run('frobnicate');
    expect(kit.told()).toEqual([`\`/handoff frobnicate\` is not a handoff-relay command.\n\n${HANDOFF_HELP}`]);
  });

  test('refused: a mention Slack sent as plain text names nobody', async () => {
    await run('@bob have a look');
    expect(kit.told()).toEqual([expect.stringMatching(/^Slack sent `@bob` as plain text/)]);
  });

  test('alone, opens the new-handoff modal with the command’s trigger', async () => {
    await run('');
    expect(kit.calls('views.open')).toEqual([
      [{ trigger_id: 'trigger-1', view: expect.objectContaining({ callback_id: NEW_HANDOFF_CALLBACK_ID }) }],
    ]);
  });

  test('refused: Slack will not open the modal, and the caller is told why', async () => {
    kit.refuseSlack('views.open', 'expired_trigger_id');
    await run('');
    expect(kit.told()).toEqual(['Slack did not open the handoff form (expired_trigger_id); run `/handoff` again.']);
  });

  test('refused: an unlinked caller is told to link first, and nothing else happens', async () => {
    await run('', { user: STRANGER });
    expect(kit.told()).toEqual([NOT_LINKED]);
    expect(kit.calls('views.open')).toEqual([]);
  });

  test('`@someone text` sends a quick inform handoff under the trigger id and says where it went', async () => {
    kit.script('creates.create', async () => ({
      task_id: 't1',
      status: { state: 'pending' },
      created_at: NOW.toISOString(),
      inbox_url: 'https://relay.test/inbox/t1',
      recipient: sender.handle,
    }));
    await run(`<@${sender.slack_user_id}|api> the client pages now &amp; more`);
    expect(kit.calls('creates.create')).toEqual([
      [
        expect.objectContaining({ handle: recipient.handle }),
        expect.objectContaining({
          to: sender.handle,
          intent: 'inform',
          summary: 'the client pages now & more',
          idempotency_key: 'slack-command:trigger-1',
        }),
        'slack',
      ],
    ]);
    expect(kit.told()).toEqual([
      ':outbox_tray: Sent to `api-dev@acme` as an _inform_ handoff. <https://relay.test/inbox/t1|View it in the inbox>',
    ]);
  });

  test('refused: the relay’s refusal of the quick send is told in its words', async () => {
    kit.script('creates.create', async () => {
      throw new RelayError('recipient_not_found', 'No teammate matches role:mobile');
    });
    await run('role:mobile please look');
    expect(kit.told()).toEqual(['Nothing was sent: No teammate matches role:mobile.']);
  });

  test('inbox lists what waits for the caller, ephemerally', async () => {
    kit.script('reads.listThreads', async () => ({ items: [], next_cursor: null }));
    await run('inbox');
    expect(kit.calls('reads.listThreads')).toEqual([
      [
        expect.objectContaining({ handle: recipient.handle }),
        expect.objectContaining({ role: 'recipient', status: ['unclaimed', 'pending', 'accepted'] }),
      ],
    ]);
    expect(kit.calls('respond')).toEqual([[expect.objectContaining({ response_type: 'ephemeral' })]]);
  });

  test('link makes a teammate for an unlinked caller and shows its key in the modal it opened', async () => {
    kit.script('teammates.register', async () => ({ card: {}, api_key: 'hr_new' }));
    kit.script('users.info', () => ({ ok: true, user: { name: 'sam', real_name: 'Sam Doe', profile: {} } }));
    await run('link', { user: STRANGER });
    expect(kit.calls('teammates.register')).toEqual([
      [
        {
          handle: 'sam@acme',
          name: 'Sam Doe',
          role: 'member',
          slack_user_id: STRANGER,
          skills: [],
          repos_owned: [],
          tools: [],
        },
      ],
    ]);
    expect(kit.whats().filter((w) => w.startsWith('views.'))).toEqual(['views.open', 'views.update']);
    expect(JSON.stringify(kit.calls('views.update'))).toContain('hr_new');
  });

  test('refused: a linked caller gets no second key', async () => {
    await run('link');
    expect(kit.told()).toEqual([
      `Your Slack account is already linked to teammate \`${recipient.handle}\`; no new key was made.`,
    ]);
  });

  test('join redeems the code for the caller with the handle asked for', async () => {
    kit.script('invites.usable', async () => ({ doc: { preset: {} }, now: NOW }));
    kit.script('invites.redeem', async () => ({ card: { handle: 'sam@acme' }, api_key: 'hr_joined' }));
    kit.script('users.info', () => ({ ok: true, user: { name: 'sam', real_name: 'Sam Doe', profile: {} } }));
    await run('join hri_code sam@acme', { user: STRANGER });
    expect(kit.calls('invites.redeem')).toEqual([
      [
        'hri_code',
        { handle: 'sam@acme', name: 'Sam Doe' },
        expect.objectContaining({ via: 'slack', slackUserId: STRANGER }),
      ],
    ]);
    expect(JSON.stringify(kit.calls('views.update'))).toContain('hr_joined');
  });

  test('refused: a used code is told in the relay’s words before any window opens', async () => {
    kit.script('invites.usable', async () => {
      throw new RelayError('conflict', 'This invitation was already used');
    });
    await run('join hri_code', { user: STRANGER });
    expect(kit.told()).toEqual(['This invitation was already used. Nothing was created.']);
    expect(kit.calls('views.open')).toEqual([]);
  });

  test('invite: a workspace admin makes an invitation with the options typed, its code shown once', async () => {
    kit.script('users.info', () => ({ ok: true, user: { name: 'ada', is_admin: true } }));
    kit.script('invites.create', async () => ({
      id: 'inv1',
      token: 'hri_secret',
      expires_at: '2026-03-09T10:00:00.000Z',
      preset: { role: 'backend' },
      note: null,
    }));
    await run('invite role:backend expires:48h');
    expect(kit.calls('invites.create')).toEqual([
      [expect.objectContaining({ role: 'backend', expires_in: 48 * 3_600_000 }), recipient.slack_user_id],
    ]);
    expect(kit.told()[0]).toContain('`hri_secret`');
  });

  test('refused: invite by someone who is not a workspace admin creates nothing', async () => {
    await run('invite role:backend');
    expect(kit.told()).toEqual([expect.stringMatching(/^Only a workspace admin or owner can make invitations/)]);
    expect(kit.calls('invites.create')).toEqual([]);
  });

  test('channel <target>, in a channel, posts a notice there and binds the target to it', async () => {
    kit.script('channels.bind', async () => ({ previous: null }));
    await run('channel role:frontend', { channel: 'C0WEB' });
    expect(kit.calls('chat.postMessage')).toEqual([[expect.objectContaining({ channel: 'C0WEB' })]]);
    expect(kit.calls('channels.bind')).toEqual([['role:frontend', 'C0WEB', recipient.handle]]);
    expect(kit.told()[0]).toMatch(/^Bound `role:frontend` to <#C0WEB>/);
  });

  test('refused: a channel the app is not in binds nothing', async () => {
    kit.refuseSlack('chat.postMessage', 'not_in_channel');
    await run('channel role:frontend', { channel: 'C0WEB' });
    expect(kit.told()[0]).toMatch(/^handoff-relay cannot post in this channel \(not_in_channel\)/);
    expect(kit.calls('channels.bind')).toEqual([]);
  });
});

describeListener('event:app_home_opened', () => {
  test('publishes the caller’s Home tab: what waits for them and what they sent', async () => {
    kit.script('reads.listThreads', async () => ({ items: [], next_cursor: null }));
    await kit.listener(
      'event',
      'app_home_opened',
    )(kit.event({ type: 'app_home_opened', user: recipient.slack_user_id, tab: 'home' }));
    expect(kit.calls('reads.listThreads').map(([, request]) => (request as { role: string }).role)).toEqual([
      'recipient',
      'sender',
    ]);
    expect(kit.calls('views.publish')).toEqual([[expect.objectContaining({ user_id: recipient.slack_user_id })]]);
  });

  test('the Messages tab draws nothing; an unlinked user is shown how to link', async () => {
    await kit.listener(
      'event',
      'app_home_opened',
    )(kit.event({ type: 'app_home_opened', user: STRANGER, tab: 'messages' }));
    expect(kit.steps).toEqual([]);
    await kit.listener('event', 'app_home_opened')(kit.event({ type: 'app_home_opened', user: STRANGER, tab: 'home' }));
    expect(JSON.stringify(kit.calls('views.publish'))).toContain('/handoff link');
  });
});

describeListener('event:link_shared', () => {
  test('an inbox link unfurls as a bare "handoff", and each participant gets the card only they see', async () => {
    const doc = await kit.insert(storedThread('pending'));
    const url = kit.links.url(doc._id);
    kit.script('reads.threadForInboxLink', async () => null);
    await kit.listener(
      'event',
      'link_shared',
    )(
      kit.event({
        type: 'link_shared',
        channel: 'C0GENERAL',
        message_ts: '1.2',
        links: [{ url, domain: 'relay.test' }],
      }),
    );
    expect(kit.calls('chat.unfurl')).toEqual([[expect.objectContaining({ channel: 'C0GENERAL', ts: '1.2' })]]);
    expect(JSON.stringify(kit.calls('chat.unfurl'))).not.toContain(doc.summary);
    expect(kit.calls('chat.postEphemeral').map(([a]) => (a as { user: string }).user)).toEqual([
      sender.slack_user_id,
      recipient.slack_user_id,
    ]);
  });

  test('refused: a link that is not this relay’s inbox is left alone; a participant not in the channel gets no card', async () => {
    await kit.listener(
      'event',
      'link_shared',
    )(
      kit.event({
        type: 'link_shared',
        channel: 'C0GENERAL',
        message_ts: '1.2',
        links: [{ url: 'https://example.com/x' }],
      }),
    );
    expect(kit.steps).toEqual([]);
    const doc = await kit.insert(storedThread('pending'));
    kit.refuseSlack('chat.postEphemeral', 'user_not_in_channel');
    await kit.listener(
      'event',
      'link_shared',
    )(
      kit.event({
        type: 'link_shared',
        channel: 'C0GENERAL',
        message_ts: '1.3',
        links: [{ url: kit.links.url(doc._id) }],
      }),
    );
    expect(kit.calls('chat.postEphemeral')).toHaveLength(2);
  });
});

describe.each([
  ['app_uninstalled', { type: 'app_uninstalled' }],
  ['tokens_revoked', { type: 'tokens_revoked', tokens: { bot: ['B0FAKE'] } }],
] as const)('event:%s', (type, event) => {
  covered.add(`event:${type}`);
  test('marks the workspace’s installation gone (OAuth mode)', async () => {
    kit = new SlackListenerKit((k) => ({ installations: k.use('installations') }));
    kit.script('installations.markUninstalled', async () => true);
    await kit.listener('event', type)(kit.event(event, { team_id: 'T0ACME' }));
    expect(kit.calls('installations.markUninstalled')).toEqual([['T0ACME', type]]);
  });

  test('in single-token mode there is no installation to mark: it only logs', async () => {
    await kit.listener('event', type)(kit.event(event, { team_id: 'T0ACME' }));
    expect(kit.steps).toEqual([]);
  });
});

describeListener(`shortcut:${MESSAGE_SHORTCUT_CALLBACK_ID}`, () => {
  const use = (user = recipient.slack_user_id!) =>
    kit.listener(
      'shortcut',
      MESSAGE_SHORTCUT_CALLBACK_ID,
    )(
      kit.shortcut({
        user,
        callbackId: MESSAGE_SHORTCUT_CALLBACK_ID,
        message: { ts: '1700000000.000300', text: 'Can <@U0SEND|api> look at &lt;this&gt;?', user: 'U0SEND' },
      }),
    );

  test('acks, then opens the new-handoff modal prefilled with the message and its permalink', async () => {
    await use();
    expect(kit.whats()[0]).toBe('ack');
    expect(kit.calls('chat.getPermalink')).toEqual([[{ channel: 'C0GENERAL', message_ts: '1700000000.000300' }]]);
    const [[open]] = kit.calls('views.open') as [[any]];
    expect(open.trigger_id).toBe('trigger-1');
    const shown = JSON.stringify(open.view);
    expect(shown).toContain('Can @api look at <this>?');
    expect(shown).toContain('https://acme.slack.test/archives/C0GENERAL/p1700000000000300');
  });

  test('refused: an unlinked user is told to link, and no modal opens', async () => {
    await use(STRANGER);
    expect(kit.whats()[0]).toBe('ack');
    expect(kit.told()).toEqual([NOT_LINKED]);
    expect(kit.calls('views.open')).toEqual([]);
  });
});
