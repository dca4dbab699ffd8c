// Install anywhere: two workspaces install the app through /slack/install → Slack's authorize → /slack/oauth_redirect
// (real relay, real Bolt receiver, the strict fake Slack's oauth.v2.access), each gets its DMs with its own token, an
// uninstall stops one workspace's deliveries and not the other's, and a bad or replayed state installs nothing.
import { randomBytes } from 'node:crypto';
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { postSignedEvent } from '../../scripts/fake-slack/slack-requests';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { sendHandoff, text } from '../helpers/handoffs';
import { deliveredHandoff, pressAndFinish } from '../helpers/slack-dm';
import { ACTION_IDS } from '../../bot/blocks/handoff-dm';
import { slackQueueProbe, type SlackQueueProbe } from '../helpers/slack-queue';
import { waitUntil } from '../helpers/wait-until';
import { WebClient } from '@slack/web-api';
import pino from 'pino';
import { MongoInstallationStore, type SlackInstallationDoc } from '../../bot/oauth/mongo-installation-store';
import { installationTokens, SlackWorkspaceNotNamedError, type SlackUserTeamDoc } from '../../bot/oauth/slack-clients';
import { TeamRoutingClient } from '../../bot/oauth/team-routing-client';

const CLIENT_ID = '1111111111.2222222222';
const CLIENT_SECRET = randomBytes(16).toString('hex');
const ALPHA = 'T0ALPHA';
const BRAVO = 'T0BRAVO';
/** An Enterprise Grid org and one of its workspaces. */
const GRID = 'E0GRID';
const CHARLIE = 'T0CHARLIE';

let slack: FakeSlack;
let relay: TestRelay;
let signingSecret: string;
let probe: SlackQueueProbe;
const keys: Record<string, string> = {};

/** What a browser does: follows the install page's "Add to Slack" link, Allows on Slack, lands on the redirect. */
async function install(team: string): Promise<{ status: number; page: string; redirect: string; cookie: string }> {
  const start = await fetch(`${relay.url}/slack/install`);
  const cookie = (start.headers.get('set-cookie') ?? '').split(';')[0]!;
  const html = await start.text();
  const href = /<a id="add-to-slack" href="([^"]+)">Add to Slack<\/a>/.exec(html)?.[1]?.replaceAll('&#38;', '&');
  if (!href) throw new Error(`no Add to Slack link on the install page: ${html}`);
  const consent = await fetch(slack.authorizeUrlFor(href, team), { redirect: 'manual' });
  const redirect = consent.headers.get('location');
  if (consent.status !== 302 || !redirect)
    throw new Error(`authorize refused: ${consent.status} ${await consent.text()}`);
  const landed = await fetch(redirect, { headers: { cookie }, redirect: 'manual' });
  return { status: landed.status, page: await landed.text(), redirect, cookie };
}

beforeAll(async () => {
  slack = await startFakeSlack();
  slack.enableOAuth({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, rotation: true });
  slack.addWorkspace(ALPHA, 'Alpha Inc');
  slack.addWorkspace(BRAVO, 'Bravo Ltd');
  slack.addUser('U0ANNA', { team: ALPHA });
  slack.addUser('U0ARNO', { team: ALPHA });
  slack.addUser('U0BEA', { team: BRAVO });
  slack.addUser('U0BORIS', { team: BRAVO });
  slack.addOrg(GRID, 'Grid Corp');
  slack.addWorkspace(CHARLIE, 'Charlie Division', { org: GRID });
  slack.addUser('U0CARL', { team: CHARLIE });
  signingSecret = randomBytes(16).toString('hex');
  const started = await startTestRelay({
    name: 'slack_install_anywhere',
    captureLogs: true,
    env: {
      SLACK_CLIENT_ID: CLIENT_ID,
      SLACK_CLIENT_SECRET: CLIENT_SECRET,
      SLACK_STATE_SECRET: randomBytes(16).toString('hex'),
      SLACK_SIGNING_SECRET: signingSecret,
      SLACK_API_URL: slack.url,
    },
  });
  // The signed requests of this file (clicks, events) use the secret it configured.
  relay = { ...started, signingSecret };
  probe = slackQueueProbe(relay);
  for (const [handle, user] of [
    ['anna@alpha', 'U0ANNA'],
    ['arno@alpha', 'U0ARNO'],
    ['bea@bravo', 'U0BEA'],
    ['boris@bravo', 'U0BORIS'],
    ['carl@charlie', 'U0CARL'],
  ] as const)
    keys[handle] = await relay.register({ handle, slack_user_id: user });
});

afterAll(async () => {
  await probe?.close();
  await relay?.stop();
  await slack?.close();
});

/** The DM a handoff got, once recorded, and the workspace whose token posted it. */
async function dmOf(threadId: string, slackUser: string) {
  const thread = await waitUntil(async () => {
    const doc = await relay.store.threads.findOne({ _id: threadId });
    return doc?.slack ? doc : undefined;
  }, `the DM of ${threadId}`);
  const post = await slack.waitFor(
    'chat.postMessage',
    (c) => c.args.channel === thread.slack!.channel && c.response.ts === thread.slack!.ts,
  );
  expect(thread.slack!.channel).toBe(slack.imChannelId(slackUser));
  return post;
}

describe('install anywhere (OAuth v2) against the fake Slack', () => {
  test('a state that is made up, or used once already, installs nothing and says so on the page', async () => {
    const forged = await fetch(`${relay.url}/slack/oauth_redirect?code=whatever&state=forged-state`);
    expect(forged.status).toBe(400);
    expect(await forged.text()).toMatch(/This install link has expired or was already used, so nothing was installed/);

    const first = await install(ALPHA);
    expect(first.status).toBe(200);
    expect(first.page).toMatch(/handoff-relay is installed in Alpha Inc/);
    // The same redirect again (same state, same cookie): refused, and nothing more is exchanged with Slack.
    const exchanges = slack.calls.filter((c) => c.method === 'oauth.v2.access').length;
    const replay = await fetch(first.redirect, { headers: { cookie: first.cookie }, redirect: 'manual' });
    expect(replay.status).toBe(400);
    expect(await replay.text()).toMatch(/expired or was already used/);
    expect(slack.calls.filter((c) => c.method === 'oauth.v2.access')).toHaveLength(exchanges);
    const stored = await relay.store.db.collection('slack_installations').find().toArray();
    expect(stored.map((d) => d._id)).toEqual([ALPHA]);
  });

  test('a second workspace installs too; each workspace’s DMs go out with its own token', async () => {
    const second = await install(BRAVO);
    expect(second.page).toMatch(/installed in Bravo Ltd/);
    const stored = await relay.store.db.collection('slack_installations').find().sort({ _id: 1 }).toArray();
    expect(stored.map((d) => [d._id, d.installation.bot.token])).toEqual([
      [ALPHA, slack.installedTokens.get(ALPHA)],
      [BRAVO, slack.installedTokens.get(BRAVO)],
    ]);

    const inAlpha = await sendHandoff(relay, keys['anna@alpha']!, 'arno@alpha', 'Alpha: the login page flickers');
    const inBravo = await sendHandoff(relay, keys['bea@bravo']!, 'boris@bravo', 'Bravo: rotate the signing key');
    const alphaDm = await dmOf(inAlpha, 'U0ARNO');
    const bravoDm = await dmOf(inBravo, 'U0BORIS');
    expect(alphaDm.team).toBe(ALPHA);
    expect(bravoDm.team).toBe(BRAVO);
    expect(JSON.stringify(slack.messages.get(slack.imChannelId('U0BORIS')))).toMatch(/rotate the signing key/);
    // The senders' own DMs too, each in their workspace.
    await probe.settled();
    const senderPosts = slack
      .callsTo('chat.postMessage')
      .filter((c) => [slack.imChannelId('U0ANNA'), slack.imChannelId('U0BEA')].includes(c.args.channel as string));
    expect(senderPosts.map((c) => [c.args.channel, c.team]).sort()).toEqual(
      [
        [slack.imChannelId('U0ANNA'), ALPHA],
        [slack.imChannelId('U0BEA'), BRAVO],
      ].sort(),
    );
  });

  test('a call about a whole workspace (users.list) goes out with the token of the workspace it names; naming none is refused in words', async () => {
    const store = new MongoInstallationStore(relay.store.db.collection<SlackInstallationDoc>('slack_installations'));
    const tokens = installationTokens({
      store,
      userTeams: relay.store.db.collection<SlackUserTeamDoc>('slack_user_teams'),
      newClient: (token) => new WebClient(token, { slackApiUrl: slack.url }),
      log: pino({ level: 'silent' }),
    });
    const client = new TeamRoutingClient(tokens, { slackApiUrl: slack.url, retryConfig: { retries: 0 } });
    expect((await tokens.teams()).sort()).toEqual([ALPHA, BRAVO]);
    const before = slack.callsTo('users.list').length;
    const alpha = await client.users.list({ team_id: ALPHA });
    const bravo = await client.users.list({ team_id: BRAVO });
    expect(alpha.members!.map((m) => m.id).filter((id) => id !== slack.botUserId)).toEqual(['U0ANNA', 'U0ARNO']);
    expect(bravo.members!.map((m) => m.id).filter((id) => id !== slack.botUserId)).toEqual(['U0BEA', 'U0BORIS']);
    expect(
      slack
        .callsTo('users.list')
        .slice(before)
        .map((c) => c.team),
    ).toEqual([ALPHA, BRAVO]);
    // Which workspace's members? With two installed there is no telling: refused, and nothing is asked of Slack.
    await expect(client.users.list({})).rejects.toThrow(new SlackWorkspaceNotNamedError('users.list', 2).message);
    expect(slack.callsTo('users.list')).toHaveLength(before + 2);
  });

  test('a handoff across workspaces: each side’s DM and replies go out with its own workspace’s token', async () => {
    const across = await sendHandoff(relay, keys['anna@alpha']!, 'bea@bravo', 'Across: review the Bravo release notes');
    const recipientDm = await dmOf(across, 'U0BEA');
    expect(recipientDm.team).toBe(BRAVO);
    const thread = await waitUntil(async () => {
      const doc = await relay.store.threads.findOne({ _id: across });
      return doc?.slack_sender ? doc : undefined;
    }, 'the sender’s DM');
    expect(thread.slack_sender!.channel).toBe(slack.imChannelId('U0ANNA'));
    const senderDm = await slack.waitFor('chat.postMessage', (c) => c.response.ts === thread.slack_sender!.ts);
    expect(senderDm.team).toBe(ALPHA);
    // A message on the thread: a reply under each DM, each in its own workspace.
    const { body } = await relay.rpc(keys['bea@bravo']!, 'message/send', {
      task_id: across,
      message: text('On it, which branch?'),
    });
    expect(body.error).toBeUndefined();
    const replies = await waitUntil(async () => {
      const found = slack
        .callsTo('chat.postMessage')
        .filter((c) => typeof c.args.thread_ts === 'string' && /which branch/.test(JSON.stringify(c.args)));
      return found.length === 2 ? found : undefined;
    }, 'the reply under both DMs');
    expect(replies.map((c) => [c.args.channel, c.team]).sort()).toEqual(
      [
        [slack.imChannelId('U0ANNA'), ALPHA],
        [slack.imChannelId('U0BEA'), BRAVO],
      ].sort(),
    );
  });

  test('a click in the Bravo workspace is answered with Bravo’s installation: Accept, and the DMs redrawn', async () => {
    const dm = await deliveredHandoff(relay, slack, keys['bea@bravo']!, {
      to: 'boris@bravo',
      recipientSlackUser: 'U0BORIS',
      summary: 'Bravo: pin the Node version',
    });
    await pressAndFinish(relay, dm.click(ACTION_IDS.accept, { teamId: BRAVO }));
    await waitUntil(async () => {
      const doc = await relay.store.threads.findOne({ _id: dm.threadId });
      return doc?.status === 'accepted' || undefined;
    }, 'the Bravo handoff to be accepted');
    const redraw = await slack.waitFor(
      'chat.update',
      (c) => c.args.ts === dm.ts && /Accepted by/.test(JSON.stringify(c.args.blocks)),
    );
    expect(redraw.team).toBe(BRAVO);
    expect(slack.calls.filter((c) => c.team === ALPHA && JSON.stringify(c.args).includes(dm.threadId))).toEqual([]);
  });

  test('token rotation: a bot token about to expire is refreshed before a job uses it, and stored', async () => {
    // The earlier tests' redraws first: they used the token this test lets expire.
    await probe.settled();
    const installations = relay.store.db.collection('slack_installations');
    const before = await installations.findOne({ _id: BRAVO as never });
    expect(before!.installation.bot).toMatchObject({ refreshToken: expect.stringMatching(/^xoxe-/) });
    expect(before!.installation.bot.expiresAt).toBeGreaterThan(Date.now() / 1000 + 3_600);
    // Twelve hours later, as far as the relay and Slack are concerned: the stored expiry has passed, Slack refuses the token.
    const oldToken = before!.installation.bot.token as string;
    await installations.updateOne(
      { _id: BRAVO as never },
      { $set: { 'installation.bot.expiresAt': Math.floor(Date.now() / 1000) } },
    );
    slack.expireToken(BRAVO);

    const rotated = await sendHandoff(relay, keys['boris@bravo']!, 'bea@bravo', 'Bravo after rotation');
    const dm = await dmOf(rotated, 'U0BEA');
    expect(dm.team).toBe(BRAVO);
    const after = await installations.findOne({ _id: BRAVO as never });
    expect(after!.installation.bot.token).toBe(slack.installedTokens.get(BRAVO));
    expect(after!.installation.bot.token).not.toBe(oldToken);
    expect(after!.installation.bot.expiresAt).toBeGreaterThan(Date.now() / 1000 + 3_600);
    expect(slack.calls.filter((c) => c.response.error === 'token_expired')).toEqual([]);
    expect(
      slack.calls.filter((c) => c.method === 'oauth.v2.access' && c.args.grant_type === 'refresh_token'),
    ).toHaveLength(1);
  });

  test('a token of one workspace cannot reach the other’s people (the fake keeps them apart)', async () => {
    const alphaToken = slack.installedTokens.get(ALPHA)!;
    const response = await fetch(`${slack.url}conversations.open`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alphaToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ users: 'U0BORIS' }),
    });
    expect(await response.json()).toMatchObject({ ok: false, error: 'user_not_found' });
  });

  test('after Alpha uninstalls, its deliveries fail for good with a clear log line, and Bravo keeps working', async () => {
    const event = slack.uninstall(ALPHA);
    const sent = await postSignedEvent(`${relay.url}/slack/events`, signingSecret, event, { teamId: ALPHA });
    expect(sent.status).toBe(200);
    await waitUntil(async () => {
      const doc = await relay.store.db.collection('slack_installations').findOne({ _id: ALPHA as never });
      return doc?.uninstalled_at ? doc : undefined;
    }, 'the Alpha installation to be marked uninstalled');
    const marked = await relay.store.db.collection('slack_installations').findOne({ _id: ALPHA as never });
    expect(marked).toMatchObject({ uninstall_reason: 'app_uninstalled', installation: null });

    const lost = await sendHandoff(relay, keys['arno@alpha']!, 'anna@alpha', 'Alpha after uninstall');
    const kept = await sendHandoff(relay, keys['boris@bravo']!, 'bea@bravo', 'Bravo after Alpha left');
    const bravoDm = await dmOf(kept, 'U0BEA');
    expect(bravoDm.team).toBe(BRAVO);
    await probe.settled();
    const jobs = (await probe.finished()).filter((j) => j.threadId === lost);
    expect(jobs.length).toBeGreaterThan(0);
    for (const job of jobs) {
      expect(job.failedReason).toMatch(/has not installed the app \(or uninstalled it/);
      expect(job.attemptsMade).toBe(1);
    }
    expect(relay.logs).toContainEqual(
      expect.objectContaining({ msg: 'slack delivery stopped: the workspace is not installed', thread_id: lost }),
    );
    const lostThread = await relay.store.threads.findOne({ _id: lost });
    expect(lostThread).toMatchObject({ summary: 'Alpha after uninstall' });
    expect(lostThread!.slack ?? null).toBeNull();
    expect(JSON.stringify(slack.messages.get(slack.imChannelId('U0ANNA')) ?? [])).not.toMatch(/Alpha after uninstall/);
    // The handoff across workspaces: Bea's message still reaches her own (Bravo) DM; Anna's side is skipped.
    const across = await relay.store.threads.findOne({ summary: 'Across: review the Bravo release notes' });
    const said = await relay.rpc(keys['bea@bravo']!, 'message/send', {
      task_id: across!._id,
      message: text('Still there?'),
    });
    expect(said.body.error).toBeUndefined();
    const reply = await slack.waitFor('chat.postMessage', (c) => /Still there\?/.test(JSON.stringify(c.args)));
    expect([reply.args.channel, reply.team]).toEqual([slack.imChannelId('U0BEA'), BRAVO]);
    await probe.settled();
    const acrossJobs = (await probe.finished()).filter((j) => j.threadId === across!._id);
    expect(acrossJobs.filter((j) => j.failedReason)).toEqual([]);
    // Nothing went to Slack for Alpha after the uninstall: the revoked token was never even tried.
    expect(slack.calls.filter((c) => c.response.error === 'token_revoked')).toEqual([]);
  });

  test('tokens_revoked for Bravo’s bot marks its installation too', async () => {
    const sent = await postSignedEvent(
      `${relay.url}/slack/events`,
      signingSecret,
      { type: 'tokens_revoked', tokens: { bot: [slack.botUserId] } },
      { teamId: BRAVO },
    );
    expect(sent.status).toBe(200);
    const marked = await waitUntil(async () => {
      const doc = await relay.store.db.collection('slack_installations').findOne({ _id: BRAVO as never });
      return doc?.uninstalled_at ? doc : undefined;
    }, 'the Bravo installation to be marked');
    expect(marked).toMatchObject({ uninstall_reason: 'tokens_revoked', installation: null });
  });

  test('installing Alpha again brings its deliveries back', async () => {
    const again = await install(ALPHA);
    expect(again.status).toBe(200);
    const back = await sendHandoff(relay, keys['arno@alpha']!, 'anna@alpha', 'Alpha is back');
    const dm = await dmOf(back, 'U0ANNA');
    expect(dm.team).toBe(ALPHA);
  });

  test('a 429 for one workspace’s token holds only that job: the other workspace’s DMs go out meanwhile', async () => {
    expect((await install(BRAVO)).status).toBe(200);
    slack.rateLimitNext('chat.postMessage', { times: 1, retryAfterSeconds: 5 });
    const held = await sendHandoff(relay, keys['arno@alpha']!, 'anna@alpha', 'Alpha rate limited');
    const limited = await waitUntil(
      async () =>
        slack.calls.find(
          (c) =>
            c.method === 'chat.postMessage' &&
            c.response.error === 'ratelimited' &&
            JSON.stringify(c.args).includes('Alpha rate limited'),
        ),
      'Alpha’s DM rate-limited',
    );
    expect(limited.args.channel).toBe(slack.imChannelId('U0ANNA'));
    const kept = await sendHandoff(relay, keys['boris@bravo']!, 'bea@bravo', 'Bravo meanwhile');
    const bravoDm = await dmOf(kept, 'U0BEA');
    expect(bravoDm.team).toBe(BRAVO);
    // BullMQ's limiter would have held the whole lane (every workspace) for the 5 s.
    expect(bravoDm.at - limited.at).toBeLessThan(5_000);
    const alphaDm = await dmOf(held, 'U0ANNA');
    expect(alphaDm.at - limited.at).toBeGreaterThanOrEqual(5_000);
    await probe.settled();
    const jobs = (await probe.finished()).filter((j) => j.threadId === held || j.threadId === kept);
    expect(jobs.map((j) => [j.type, j.attemptsMade, j.failedReason ?? null])).toEqual([
      ['thread.created', 1, null],
      ['thread.created', 1, null],
    ]);
    expect(
      slack.calls.filter(
        (c) =>
          c.method === 'chat.postMessage' && c.response.ok && JSON.stringify(c.args).includes('Alpha rate limited'),
      ).length,
    ).toBe(2);
  });

  test('an org-wide (Enterprise Grid) install answers for a workspace of the org: a DM with the org’s token, then uninstall', async () => {
    const org = await install(GRID);
    expect(org.status).toBe(200);
    expect(org.page).toMatch(/handoff-relay is installed in Grid Corp/);
    const stored = await relay.store.db.collection('slack_installations').findOne({ _id: GRID as never });
    expect(stored).toMatchObject({
      team_id: null,
      enterprise_id: GRID,
      installation: { isEnterpriseInstall: true, bot: { token: slack.installedTokens.get(GRID) } },
    });
    // Carl is in Charlie, a workspace of the org: the org's token reaches him (a workspace token would not).
    const toCarl = await sendHandoff(relay, keys['arno@alpha']!, 'carl@charlie', 'Grid: check the SSO settings');
    const dm = await dmOf(toCarl, 'U0CARL');
    expect(dm.team).toBe(GRID);
    expect(JSON.stringify(slack.messages.get(slack.imChannelId('U0CARL')))).toMatch(/check the SSO settings/);
    await probe.settled();

    // The org uninstalls: Slack says so for the org (its authorization names no team), and only the org is marked.
    const event = slack.uninstall(GRID);
    const sent = await postSignedEvent(`${relay.url}/slack/events`, signingSecret, event, {
      teamId: CHARLIE,
      enterpriseId: GRID,
      isEnterpriseInstall: true,
    });
    expect(sent.status).toBe(200);
    const marked = await waitUntil(async () => {
      const doc = await relay.store.db.collection('slack_installations').findOne({ _id: GRID as never });
      return doc?.uninstalled_at ? doc : undefined;
    }, 'the org installation to be marked uninstalled');
    expect(marked).toMatchObject({ uninstall_reason: 'app_uninstalled', installation: null });
    expect(await relay.store.db.collection('slack_installations').findOne({ _id: CHARLIE as never })).toBeNull();
    const lost = await sendHandoff(relay, keys['arno@alpha']!, 'carl@charlie', 'Grid after uninstall');
    await probe.settled();
    // Carl's side is left out (his workspace's org is not installed any more), and nothing tried the revoked token;
    // Alpha's side of it (Arno's own DM) still went out with Alpha's token.
    const jobs = (await probe.finished()).filter((j) => j.threadId === lost);
    expect(jobs.map((j) => j.failedReason ?? null)).toEqual([null]);
    expect((await relay.store.threads.findOne({ _id: lost }))!.slack ?? null).toBeNull();
    expect(JSON.stringify(slack.messages.get(slack.imChannelId('U0CARL')))).not.toMatch(/Grid after uninstall/);
    expect(slack.calls.filter((c) => c.response.error === 'token_revoked')).toEqual([]);
    const arno = await waitUntil(async () => {
      const doc = await relay.store.threads.findOne({ _id: lost });
      return doc?.slack_sender ? doc : undefined;
    }, 'Arno’s DM of the handoff to Carl');
    expect((await slack.waitFor('chat.postMessage', (c) => c.response.ts === arno.slack_sender!.ts)).team).toBe(ALPHA);
  });
});
