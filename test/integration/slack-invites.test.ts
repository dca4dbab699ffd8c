// `/handoff invite` and `/handoff join` through the real Bolt receiver with signed requests, a real relay and the
// strict fake Slack: a workspace admin or owner makes an invitation (anyone else is refused), a person redeems one
// and is linked to the new teammate in the same step, with its key shown once; every refusal changes nothing.
import { startFakeSlack, type FakeSlack, type FakeSlackCall } from '../../scripts/fake-slack/fake-slack-api';
import { sendSlashCommand } from '../../scripts/fake-slack/slack-requests';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { TestClock } from '../helpers/test-clock';
import { waitUntil } from '../helpers/wait-until';

const ADMIN = 'U0ADMIN';
const OWNER = 'U0OWNER';
const MEMBER = 'U0MEMBER';
const clock = new TestClock();
let slack: FakeSlack;
let relay: TestRelay;
let seq = 0;
/** Every code this file was given, to look for in the logs. */
const codes: string[] = [];

beforeAll(async () => {
  slack = await startFakeSlack();
  slack.addUser(ADMIN, { name: 'ada', real_name: 'Ada Admin', is_admin: true });
  slack.addUser(OWNER, { name: 'otto', real_name: 'Otto Owner', is_owner: true });
  slack.addUser(MEMBER, { name: 'mia', real_name: 'Mia Member' });
  for (const [id, name] of [
    ['U0LENA', 'lena'],
    ['U0FRANK', 'frank'],
    ['U0GRACE', 'grace'],
    ['U0HUGO', 'hugo'],
    ['U0IDA', 'ida'],
    ['U0JO', 'jo'],
    ['U0KIM', 'kim'],
  ]) {
    slack.addUser(id!, { name: name!, real_name: `${name![0]!.toUpperCase()}${name!.slice(1)} Example` });
  }
  relay = await startTestRelay({ name: 'slack_invites', slack, env: { RELAY_TEAM: 'acme' }, captureLogs: true, clock });
  await relay.register({ handle: 'lena@acme', role: 'lead', slack_user_id: 'U0LENA' });
  await relay.register({ handle: 'taken@acme' });
});

afterAll(async () => {
  await relay?.stop();
  await slack?.close();
});

/** Runs `/handoff <text>` as user; returns a waiter for the app's ephemeral answer through response_url. */
async function handoff(user: string, text: string, triggerId = slack.triggerId()) {
  const name = `cmd-${++seq}`;
  const answer = await sendSlashCommand(`${relay.url}/slack/events`, relay.signingSecret, {
    user,
    text,
    responseUrl: slack.responseUrl(name),
    triggerId,
  });
  expect(answer.status).toBe(200);
  return {
    triggerId,
    name,
    reply: () =>
      slack
        .waitFor('response_url', (c) => c.args.response_url === name)
        .then((c) => c.args as { text: string; response_type: string }),
  };
}

async function restInvite(body: Record<string, unknown> = {}): Promise<{ id: string; token: string }> {
  const created = await relay.rest('POST', '/admin/invites', relay.adminKey, body);
  expect(created.status).toBe(201);
  codes.push(created.body.token);
  return { id: created.body.id, token: created.body.token };
}

const inviteCount = () => relay.store.invites.countDocuments({});
const inviteDoc = (id: string) => relay.store.invites.findOne({ _id: id });
/** The API key in a call's arguments, if any. */
const keyIn = (c: FakeSlackCall) => /hr_[0-9a-f]{12}_[A-Za-z0-9_-]{20,}/.exec(JSON.stringify(c.args))?.[0];

/** Runs `/handoff join …` and waits for the modal it opens to be filled in; returns the modal's final view. */
async function joinWithModal(user: string, text: string): Promise<{ view: string; key: string | undefined }> {
  const { triggerId } = await handoff(user, text);
  const opened = await slack.waitFor('views.open', (c) => c.args.trigger_id === triggerId);
  expect((opened.args.view as { callback_id: string }).callback_id).toBe('handoff_link_modal');
  const update = await slack.waitFor(
    'views.update',
    (c) => c.args.view_id === (opened.response.view as { id: string }).id,
  );
  return { view: JSON.stringify(update.args.view), key: keyIn(update) };
}

describe('/handoff invite', () => {
  test('a workspace admin makes an invitation: presets from the options, its code once and only to them', async () => {
    const before = await inviteCount();
    const answer = await (
      await handoff(
        ADMIN,
        'invite team:acme role:backend skills:go,sql repos:services/api/ lead:lena@acme expires:48h note:Frank, new backend',
      )
    ).reply();
    expect(answer.response_type).toBe('ephemeral');
    const code = /`(hri_[0-9a-f]{12}_[A-Za-z0-9_-]{43})`/.exec(answer.text)?.[1];
    expect(code).toBeDefined();
    codes.push(code!);
    expect(answer.text).toContain(`/handoff join ${code}`);
    expect(answer.text).toContain(`handoff-relay join ${code} --handle NAME`);
    expect(answer.text).toContain('shown only now');
    expect(await inviteCount()).toBe(before + 1);
    const doc = await inviteDoc(code!.slice(4, 16));
    expect(doc).toMatchObject({
      status: 'open',
      created_by: ADMIN,
      note: 'Frank, new backend',
      preset: {
        team: 'acme',
        role: 'backend',
        skills: ['go', 'sql'],
        repos_owned: ['services/api/'],
        lead: 'lena@acme',
      },
    });
    expect(doc!.expires_at.getTime() - doc!.created_at.getTime()).toBe(48 * 3_600_000);
    // Listed for the relay's admins like any other, never with its code.
    const listed = await relay.rest('GET', '/admin/invites', relay.adminKey);
    expect(listed.body.invites[0]).toMatchObject({ id: doc!._id, created_by: ADMIN });
    expect(JSON.stringify(listed.body)).not.toContain(code!.slice(17));
  });

  test('a workspace owner may too, with no option at all (the defaults)', async () => {
    const answer = await (await handoff(OWNER, 'invite')).reply();
    const code = /`(hri_\S+)`/.exec(answer.text)![1]!;
    codes.push(code);
    expect(await inviteDoc(code.slice(4, 16))).toMatchObject({ status: 'open', created_by: OWNER, preset: {} });
  });

  test('anyone else is refused with a clear ephemeral answer, and nothing is made', async () => {
    const before = await inviteCount();
    for (const user of [MEMBER, 'U0LENA']) {
      const answer = await (await handoff(user, 'invite role:backend')).reply();
      expect(answer).toMatchObject({
        response_type: 'ephemeral',
        text: expect.stringMatching(
          /^Only a workspace admin or owner can make invitations from Slack; nothing was created/,
        ),
      });
    }
    slack.failNext('users.info', { body: { ok: false, error: 'ratelimited' } });
    expect((await (await handoff(ADMIN, 'invite')).reply()).text).toContain(
      'Slack did not say whether you are a workspace admin (ratelimited); nothing was created',
    );
    expect(await inviteCount()).toBe(before);
  });

  test.each([
    [
      'an unknown option',
      'invite colour:red',
      /^Nothing was created: `colour:red` is not an option of `\/handoff invite`; the options are `team:`/,
    ],
    ['a word that is no option', 'invite backend', /^Nothing was created: `backend` is not an option/],
    ['an option without a value', 'invite role:', /^Nothing was created: `role:` needs a value/],
    ['an option twice', 'invite role:a role:b', /^Nothing was created: `role:` is given twice/],
    [
      'a bad duration',
      'invite expires:90d',
      /^Nothing was created: `expires:` must be a duration such as 30m, 24h or 7d \(at most 30d\)/,
    ],
    ['a malformed team', 'invite team:a+b', /^Nothing was created: `team:` must be a team like acme/],
    [
      'an unknown lead',
      'invite lead:ghost@acme',
      /^Nothing was created: `lead:` no active teammate with handle ghost@acme/,
    ],
  ])('%s is refused naming it, and nothing is made', async (_name, text, message) => {
    const before = await inviteCount();
    expect((await (await handoff(ADMIN, text)).reply()).text).toMatch(message);
    expect(await inviteCount()).toBe(before);
  });

  test('/handoff invite help shows its usage to anyone; /handoff help names invite and join', async () => {
    expect((await (await handoff(MEMBER, 'invite help')).reply()).text).toMatch(/^`\/handoff invite \[team:acme\]/);
    const help = (await (await handoff(MEMBER, 'help')).reply()).text;
    expect(help).toContain('/handoff join CODE [handle]');
    expect(help).toContain('/handoff invite');
  });
});

describe('/handoff join', () => {
  test('redeems the invitation: the Slack user is the new teammate at once, its key and MCP configuration shown once, and it works', async () => {
    const made = await (await handoff(ADMIN, 'invite team:acme role:backend skills:go lead:lena@acme')).reply();
    const code = /`(hri_\S+)`/.exec(made.text)![1]!;
    codes.push(code);
    const keysShownBefore = slack.calls.filter((c) => keyIn(c) !== undefined).length;
    const { view, key } = await joinWithModal('U0FRANK', `join ${code}`);
    expect(key).toBeDefined();
    expect(view).toContain('frank@acme');
    expect(view).toContain('claude mcp add');
    expect(view).toContain(`${relay.config.publicUrl}/mcp`);

    expect(await relay.relay.teammates.bySlackUser('U0FRANK')).toMatchObject({
      handle: 'frank@acme',
      name: 'Frank Example',
      role: 'backend',
      skills: ['go'],
      lead: 'lena@acme',
      slack_user_id: 'U0FRANK',
    });
    expect((await relay.rest('GET', '/agents/me', key)).body).toMatchObject({ handle: 'frank@acme' });
    expect(await inviteDoc(code.slice(4, 16))).toMatchObject({ status: 'redeemed', redeemed_by: 'frank@acme' });
    const audit = await relay.rest('GET', '/agents/me/audit', key);
    expect(audit.body.events).toEqual(
      expect.arrayContaining([expect.objectContaining({ action: 'invite.redeemed', via: 'slack' })]),
    );
    // The key went out once, in the modal, and nowhere else.
    expect(slack.calls.filter((c) => keyIn(c) !== undefined)).toHaveLength(keysShownBefore + 1);

    // Joining again: told who they are; the used code is refused as REST refuses it.
    expect((await (await handoff('U0FRANK', `join ${code}`)).reply()).text).toContain(
      'already linked to teammate `frank@acme`; the invitation was not used',
    );
    expect((await (await handoff('U0GRACE', `join ${code}`)).reply()).text).toBe(
      'This invitation was already used; ask an admin for a new one. Nothing was created.',
    );
    expect(await relay.relay.teammates.bySlackUser('U0GRACE')).toBeNull();
  });

  test('takes the handle given; an invitation without team or role gives RELAY_TEAM and member', async () => {
    const { id, token } = await restInvite({ skills: ['qa'] });
    const { view } = await joinWithModal('U0GRACE', `join ${token} gracie`);
    expect(view).toContain('gracie@acme');
    expect(await relay.relay.teammates.bySlackUser('U0GRACE')).toMatchObject({
      handle: 'gracie@acme',
      role: 'member',
      skills: ['qa'],
    });
    expect(await inviteDoc(id)).toMatchObject({ status: 'redeemed', redeemed_by: 'gracie@acme' });
  });

  test('revoked, expired and wrong codes answer as REST does; no window opens and nothing changes', async () => {
    const revoked = await restInvite({});
    await relay.rest('DELETE', `/admin/invites/${revoked.id}`, relay.adminKey);
    const expiring = await restInvite({ expires_in: '1h' });
    clock.advance(61 * 60_000);
    const rest = await relay.rest('POST', `/invites/${expiring.id}/redeem`, undefined, {
      token: expiring.token,
      handle: 'hugo',
      name: 'Hugo',
    });
    const cases: Array<[string, string]> = [
      [`join ${revoked.token}`, 'This invitation was revoked; ask an admin for a new one. Nothing was created.'],
      [`join ${expiring.token}`, `${rest.body.message}. Nothing was created.`],
      [
        `join ${revoked.token.slice(0, -4)}AAAA`,
        'No such invitation: check the code you were given (handoff-relay join hri_…). Nothing was created.',
      ],
      [
        `join hri_000000000000_${'A'.repeat(43)}`,
        'No such invitation: check the code you were given (handoff-relay join hri_…). Nothing was created.',
      ],
      [
        'join not-a-code',
        'No such invitation: check the code you were given (handoff-relay join hri_…). Nothing was created.',
      ],
    ];
    expect(rest.body.message).toMatch(/^This invitation expired at /);
    const opensBefore = slack.callsTo('views.open').length;
    for (const [text, message] of cases) {
      expect({ text, answer: (await (await handoff('U0HUGO', text)).reply()).text }).toEqual({ text, answer: message });
    }
    expect(slack.callsTo('views.open')).toHaveLength(opensBefore);
    expect(await relay.relay.teammates.bySlackUser('U0HUGO')).toBeNull();
    expect(await inviteDoc(revoked.id)).toMatchObject({ status: 'revoked' });
  });

  test('a bare /handoff join, or one with more than a handle, explains itself', async () => {
    expect((await (await handoff('U0HUGO', 'join')).reply()).text).toMatch(/^`\/handoff join CODE \[handle\]` redeems/);
    const { token } = await restInvite({});
    expect((await (await handoff('U0HUGO', `join ${token} hugo extra`)).reply()).text).toMatch(
      /^`\/handoff join` takes the code and at most a handle; nothing was created/,
    );
    expect(await relay.relay.teammates.bySlackUser('U0HUGO')).toBeNull();
  });

  test('a handle that does not fit the invitation is refused before anything is taken', async () => {
    const { id, token } = await restInvite({ team: 'acme' });
    const answer = (await (await handoff('U0IDA', `join ${token} ida@elsewhere`)).reply()).text;
    expect(answer).toBe(
      'Nothing was created: the handle this invitation is for team acme: the handle must end in @acme. Try `/handoff join CODE another-name`.',
    );
    expect(await inviteDoc(id)).toMatchObject({ status: 'open' });
  });

  test('a taken handle says so in the window and gives the invitation back; an already linked person keeps it open', async () => {
    const { id, token } = await restInvite({ role: 'qa' });
    const { view, key } = await joinWithModal('U0JO', `join ${token} taken`);
    expect(view).toContain('The handle taken@acme is taken. Choose another: /handoff join CODE another-name');
    expect(key).toBeUndefined();
    expect(await relay.relay.teammates.bySlackUser('U0JO')).toBeNull();
    expect(await inviteDoc(id)).toMatchObject({ status: 'open' });

    expect((await (await handoff('U0LENA', `join ${token}`)).reply()).text).toContain(
      'already linked to teammate `lena@acme`',
    );
    expect(await inviteDoc(id)).toMatchObject({ status: 'open' });
    // Still good for the person it was for.
    expect((await joinWithModal('U0JO', `join ${token} jo`)).view).toContain('jo@acme');
  });

  test('two /handoff join of one code at once make one teammate and show one key', async () => {
    const { token } = await restInvite({ team: 'race' });
    const keysBefore = slack.calls.filter((c) => keyIn(c) !== undefined).length;
    const updatesBefore = slack.callsTo('views.update').length;
    const names = (
      await Promise.all([handoff('U0KIM', `join ${token} kim`), handoff('U0HUGO', `join ${token} hugo`)])
    ).map((c) => c.name);
    // Each command ends either in an ephemeral refusal or in the window filled in (with the key, or why not).
    const refusals = () => slack.callsTo('response_url').filter((c) => names.includes(String(c.args.response_url)));
    const updates = () => slack.callsTo('views.update').slice(updatesBefore);
    await waitUntil(async () => refusals().length + updates().length === 2 || undefined, 'both join commands answered');
    expect(updates().filter((c) => keyIn(c) !== undefined)).toHaveLength(1);
    const lost = [
      ...refusals().map((c) => String(c.args.text)),
      ...updates()
        .filter((c) => keyIn(c) === undefined)
        .map((c) => JSON.stringify(c.args.view)),
    ];
    expect(lost).toHaveLength(1);
    expect(lost[0]).toMatch(/already used|being redeemed/);
    expect(await relay.store.agents.countDocuments({ team: 'race' })).toBe(1);
    expect(slack.calls.filter((c) => keyIn(c) !== undefined)).toHaveLength(keysBefore + 1);
  });
});

test('no invite code and no API key appears in the relay log', async () => {
  expect(codes.length).toBeGreaterThan(5);
  expect(relay.logs.some((line) => line.msg === 'invitation redeemed' && line.via === 'slack')).toBe(true);
  const logged = JSON.stringify(relay.logs);
  for (const code of codes) expect(logged).not.toContain(code.slice(17));
  expect(logged).not.toMatch(/hr_[0-9a-f]{12}_[A-Za-z0-9_-]{20,}/);
});
