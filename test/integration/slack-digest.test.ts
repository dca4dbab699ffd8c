// The daily digest through the real worker, the fake Slack and an injected clock: each person's digest at 09:30 in
// their own Slack time zone (users.info), weekdays only, oldest first with the DM's buttons, skipped when there is
// nothing, off with its button, and posted exactly once per person and local day (also across a lost answer).
import { DIGEST_ACTION_IDS } from '../../bot/views/daily-digest';
import { startFakeSlack, type FakeSlack, type FakeSlackCall } from '../../scripts/fake-slack/fake-slack-api';
import { digestTicks, nextWeekdayMorning, type DigestTicks } from '../helpers/digest-ticks';
import { sendHandoff } from '../helpers/handoffs';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { clickButton } from '../../scripts/fake-slack/slack-requests';
import { slackQueueProbe, type SlackQueueProbe } from '../helpers/slack-queue';
import { TestClock } from '../helpers/test-clock';
import { waitUntil } from '../helpers/wait-until';

const ANA = 'U0ANA'; // Europe/Berlin
const BEN = 'U0BEN'; // America/New_York
const OLGA = 'U0OLGA'; // Europe/Berlin, turns the digest off
const EMMA = 'U0EMMA'; // Europe/Berlin, nothing waits on her or for her
const HOUR = 3600_000;
const DAY = 24 * HOUR;
let slack: FakeSlack;
let relay: TestRelay;
let clock: TestClock;
let probe: SlackQueueProbe;
let ticks: DigestTicks;
const ids: Record<string, string> = {};

/** Moves the relay's clock to `at` (never back). */
function moveTo(at: number): void {
  const now = clock.now().getTime();
  if (at < now) throw new Error('the test clock only moves forward');
  clock.advance(at - now);
}

const tick = () => ticks.tick();

const digests = (user?: string): FakeSlackCall[] =>
  slack
    .callsTo('chat.postMessage')
    .filter(
      (c) =>
        (c.args.metadata as any)?.event_payload?.kind === 'digest' &&
        (!user || c.args.channel === slack.imChannelId(user)),
    );

beforeAll(async () => {
  slack = await startFakeSlack();
  slack.addUser(ANA, { tz: 'Europe/Berlin' });
  slack.addUser(BEN, { tz: 'America/New_York' });
  slack.addUser(OLGA, { tz: 'Europe/Berlin' });
  slack.addUser(EMMA, { tz: 'Europe/Berlin' });
  clock = new TestClock();
  moveTo(nextWeekdayMorning(Date.now()));
  relay = await startTestRelay({ name: 'slack_digest', slack, clock, env: { RELAY_DIGEST_AT: '09:30' } });
  probe = slackQueueProbe(relay);
  // The ticks here are the test's own, taken before anyone is registered.
  ticks = await digestTicks(relay);
  const anaKey = await relay.register({ handle: 'ana@acme', slack_user_id: ANA });
  await relay.register({ handle: 'ben@acme', slack_user_id: BEN });
  await relay.register({ handle: 'olga@acme', slack_user_id: OLGA });
  await relay.register({ handle: 'emma@acme', slack_user_id: EMMA });
  const samKey = await relay.register({ handle: 'sam@acme' }); // no Slack: never gets a digest
  ids.anaFirst = await sendHandoff(relay, samKey, 'ana@acme', 'Digest: first for Ana');
  clock.advance(1_000);
  ids.anaSecond = await sendHandoff(relay, samKey, 'ana@acme', 'Digest: second for Ana');
  ids.benFromSam = await sendHandoff(relay, samKey, 'ben@acme', 'Digest: for Ben from Sam');
  ids.benFromAna = await sendHandoff(relay, anaKey, 'ben@acme', 'Digest: for Ben from Ana');
  ids.olga = await sendHandoff(relay, samKey, 'olga@acme', 'Digest: for Olga');
  await probe.settled();
}, 60_000);

afterAll(async () => {
  await ticks?.close();
  await probe?.close();
  await relay?.stop();
  await slack?.close();
});

const itemIds = (call: FakeSlackCall) =>
  (call.args.blocks as any[])
    .filter((b) => String(b.block_id ?? '').startsWith('thread_'))
    .map((b) => b.block_id.slice('thread_'.length));

test('at 09:45 in Berlin: the Berlin people with something waiting get their digest, New York (03:45) and an empty list do not', async () => {
  const result = await tick();
  expect(result.outcomes).toEqual({ 'ana@acme': 'posted', 'olga@acme': 'posted', 'emma@acme': 'skipped' });
  expect(digests(ANA)).toHaveLength(1);
  expect(digests(OLGA)).toHaveLength(1);
  expect(digests(EMMA)).toHaveLength(0);
  expect(digests(BEN)).toHaveLength(0);
  // Oldest first: what waits on Ana, then what she waits on, each with the DM's buttons for that side.
  const ana = digests(ANA)[0]!;
  expect(itemIds(ana)).toEqual([ids.anaFirst, ids.anaSecond, ids.benFromAna]);
  const buttons = (id: string) =>
    (ana.args.blocks as any[]).find((b) => b.block_id === `thread_${id}`).elements.map((e: any) => e.action_id);
  expect(buttons(ids.anaFirst!)).toEqual(['handoff_accept', 'handoff_decline', 'handoff_reply', 'handoff_open_inbox']);
  expect(buttons(ids.benFromAna!)).toEqual(['handoff_reply', 'handoff_open_inbox']);
  expect(ana.args.text).toBe('Daily handoff digest: 2 waiting on you, 1 you are waiting on.');
  expect(JSON.stringify(ana.args.blocks)).toContain(DIGEST_ACTION_IDS.off);
});

test('more ticks the same day, two at once too, post nothing more', async () => {
  const results = await Promise.all([tick(), tick(), tick()]);
  for (const r of results)
    for (const outcome of Object.values(r.outcomes)) expect(['already', 'busy']).toContain(outcome);
  expect(digests()).toHaveLength(2);
});

test("the digest's Accept button works on its thread (the digest is not an out-of-date copy of the DM)", async () => {
  const answer = await clickButton(`${relay.url}/slack/events`, relay.signingSecret, {
    user: ANA,
    channel: slack.imChannelId(ANA),
    messageTs: String(digests(ANA)[0]!.response.ts),
    actionId: 'handoff_accept',
    blockId: `thread_${ids.anaFirst}`,
    value: JSON.stringify({ t: ids.anaFirst, s: 'pending' }),
    responseUrl: slack.responseUrl('ana-accept'),
    triggerId: slack.triggerId(),
  });
  expect(answer.status).toBe(200);
  await waitUntil(
    async () => (await relay.relay.reads.threadById(ids.anaFirst!))?.status === 'accepted',
    'the accept from the digest',
  );
  expect(slack.calls.filter((c) => c.method === 'response_url' && c.args.response_url === 'ana-accept')).toHaveLength(
    0,
  );
});

test('Olga turns the digest off with its button; it is stored for her teammate and she is told', async () => {
  const answer = await clickButton(`${relay.url}/slack/events`, relay.signingSecret, {
    user: OLGA,
    channel: slack.imChannelId(OLGA),
    messageTs: String(digests(OLGA)[0]!.response.ts),
    actionId: DIGEST_ACTION_IDS.off,
    blockId: 'digest_settings',
    value: 'off',
    responseUrl: slack.responseUrl('olga-off'),
  });
  expect(answer.status).toBe(200);
  const told = await slack.waitFor('response_url', (c) => c.args.response_url === 'olga-off');
  expect(told.args.text).toBe('The daily digest is off for you.');
  expect(await relay.store.db.collection('slack_digest_prefs').findOne({ _id: 'olga@acme' as any })).toMatchObject({
    off: true,
  });
  // Her Home tab is drawn again with the setting, and the button to turn it back on.
  await waitUntil(
    async () => JSON.stringify(slack.homeViews.get(OLGA)?.blocks ?? []).includes(DIGEST_ACTION_IDS.on),
    'her Home tab to show the setting',
  );
  expect(JSON.stringify(slack.homeViews.get(OLGA)!.blocks)).toContain('Daily digest: *off*');
});

test('at 09:45 in New York Ben gets his (two waiting on him, oldest first); Ana none again', async () => {
  moveTo(clock.now().getTime() - (clock.now().getTime() % DAY) + 14 * HOUR + 45 * 60_000);
  const result = await tick();
  expect(result.outcomes['ben@acme']).toBe('posted');
  expect(result.outcomes['ana@acme']).toBe('already');
  expect(itemIds(digests(BEN)[0]!)).toEqual([ids.benFromSam, ids.benFromAna]);
  expect(digests(ANA)).toHaveLength(1);
});

test('a lost answer from Slack: the next tick after the lease finds the posted digest by its marker instead of posting again', async () => {
  moveTo(nextWeekdayMorning(clock.now().getTime()));
  slack.dropResponseNext('chat.postMessage');
  const lost = await tick();
  expect(lost.outcomes['ana@acme']).toBe('failed'); // ana comes first (handles in order): hers lost its answer
  expect(digests(ANA)).toHaveLength(2); // Slack has it
  expect((await tick()).outcomes['ana@acme']).toBe('busy'); // the claim is young: its poster may be posting
  clock.advance(61_000);
  expect((await tick()).outcomes['ana@acme']).toBe('found');
  expect(digests(ANA)).toHaveLength(2);
  // The next day: Olga has turned hers off, Emma still has nothing, Ben's comes at his own hour.
  expect(digests(OLGA)).toHaveLength(1);
  expect(digests(EMMA)).toHaveLength(0);
});

test('no digest on a weekend', async () => {
  let t = clock.now().getTime();
  while (new Date(t).getUTCDay() !== 6) t += DAY;
  moveTo(t);
  const before = digests().length;
  expect((await tick()).due).toBe(0);
  expect(digests()).toHaveLength(before);
});

test('the Home tab shows the setting with its hour, and turns the digest back on (for the clicker only)', async () => {
  const home = await clickButton(`${relay.url}/slack/events`, relay.signingSecret, {
    surface: 'home',
    user: OLGA,
    channel: '',
    messageTs: '',
    actionId: DIGEST_ACTION_IDS.on,
    blockId: 'digest_settings',
    value: 'on',
  });
  expect(home.status).toBe(200);
  await waitUntil(
    async () => JSON.stringify(slack.homeViews.get(OLGA)?.blocks ?? []).includes('weekdays at 09:30 your time'),
    'the Home tab to say on',
  );
  expect(await relay.store.db.collection('slack_digest_prefs').findOne({ _id: 'olga@acme' as any })).toMatchObject({
    off: false,
  });
  expect(await relay.store.db.collection('slack_digest_prefs').findOne({ _id: 'ana@acme' as any })).toBeNull();
});
