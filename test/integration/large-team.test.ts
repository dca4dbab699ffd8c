// The daily digest in a team of more than 500 teammates, most of them not on Slack: every linked teammate whose hour
// has come gets a digest, wherever its handle sorts, and a tick reads the Slack links and only the teammates due
// (it read every teammate's document, the first 500 by handle only, every 15 minutes); many people linked at once
// have their time zones read from users.list pages (it was one users.info call each).
import type { CommandStartedEvent } from 'mongodb';
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { digestTicks, nextWeekdayMorning, type DigestTicks } from '../helpers/digest-ticks';
import { sendHandoff } from '../helpers/handoffs';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { slackQueueProbe, type SlackQueueProbe } from '../helpers/slack-queue';
import { TestClock } from '../helpers/test-clock';
import { testMongoUrl } from '../helpers/test-env';
import { waitUntil } from '../helpers/wait-until';

const ZOE = 'U0ZOE'; // Europe/Berlin
const ZACK = 'U0ZACK'; // Europe/Berlin
const YARA = 'U0YARA'; // Europe/Berlin, disabled
const NICK = 'U0NICK'; // America/New_York: not due at 09:45 Berlin
const FILLERS = 505;

let slack: FakeSlack;
let relay: TestRelay;
let clock: TestClock;
let probe: SlackQueueProbe;
let ticks: DigestTicks;

const digestsTo = (user: string) =>
  slack
    .callsTo('chat.postMessage')
    .filter(
      (c) =>
        (c.args.metadata as { event_payload?: { kind?: string } } | undefined)?.event_payload?.kind === 'digest' &&
        c.args.channel === slack.imChannelId(user),
    );

beforeAll(async () => {
  slack = await startFakeSlack();
  for (const user of [ZOE, ZACK, YARA]) slack.addUser(user, { tz: 'Europe/Berlin' });
  slack.addUser(NICK, { tz: 'America/New_York' });
  clock = new TestClock();
  clock.advance(nextWeekdayMorning(Date.now()) - clock.now().getTime());
  const url = new URL(testMongoUrl());
  url.searchParams.set('monitorCommands', 'true');
  relay = await startTestRelay({
    name: 'slack_digest_team',
    slack,
    clock,
    env: { MONGODB_URL: url.toString(), RELAY_DIGEST_AT: '09:30' },
  });
  probe = slackQueueProbe(relay);
  // The ticks here are the test's own (test/helpers/digest-ticks.ts).
  ticks = await digestTicks(relay);
  // 505 teammates without Slack whose handles sort first, then the linked ones.
  for (let start = 0; start < FILLERS; start += 25) {
    await Promise.all(
      Array.from({ length: Math.min(25, FILLERS - start) }, (_, i) =>
        relay.register({ handle: `aa${String(start + i).padStart(3, '0')}@acme` }),
      ),
    );
  }
  const senderKey = await relay.register({ handle: 'aa-sender@acme' });
  await relay.register({ handle: 'zoe@acme', slack_user_id: ZOE });
  await relay.register({ handle: 'zack@acme', slack_user_id: ZACK });
  await relay.register({ handle: 'yara@acme', slack_user_id: YARA });
  await relay.register({ handle: 'nick@acme', slack_user_id: NICK });
  for (const to of ['zoe@acme', 'zack@acme', 'yara@acme', 'nick@acme'])
    await sendHandoff(relay, senderKey, to, `Digest team: for ${to}`);
  expect((await relay.rest('POST', '/admin/agents/yara@acme/disable', relay.adminKey)).status).toBe(200);
  await probe.settled();
  // And every event's webhook fan-out done (its outbox entry goes with its last job): a fan-out reads cards too, and on
  // a slower engine one still running during the tick was counted as the tick's.
  await waitUntil(async () => (await relay.store.outbox.count()) === 0, "every event's jobs finished");
}, 120_000);

afterAll(async () => {
  await ticks?.close();
  await probe?.close();
  await relay?.stop();
  await slack?.close();
});

test('past the 500th teammate, each linked teammate whose hour has come gets a digest; a tick reads only the teammates due', async () => {
  const agentReads: string[] = [];
  const started = (event: CommandStartedEvent) => {
    if (event.commandName === 'find' && event.command.find === 'agents')
      agentReads.push(String(event.command.filter?._id));
  };
  relay.store.db.client.on('commandStarted', started);
  let result;
  try {
    result = await ticks.tick();
  } finally {
    relay.store.db.client.off('commandStarted', started);
  }
  expect(result.outcomes).toEqual({ 'zoe@acme': 'posted', 'zack@acme': 'posted' });
  expect(digestsTo(ZOE)).toHaveLength(1);
  expect(JSON.stringify(digestsTo(ZACK)[0]!.args.blocks)).toContain('Digest team: for zack@acme');
  expect(digestsTo(YARA)).toHaveLength(0);
  expect(digestsTo(NICK)).toHaveLength(0);
  // At most Zoe, Zack and Yara (disabled: read, then skipped) and the sender their digests name, unless cached (on a
  // slower engine the set-up outlasts the card cache); never the 505 without Slack, nor Nick, whose hour has not come.
  expect(
    agentReads.filter((id) => !['zoe@acme', 'zack@acme', 'yara@acme', 'aa-sender@acme'].includes(id.split(':')[0]!)),
  ).toEqual([]);
});

test('many people linked since the last tick get their time zones from users.list, a page of 200 at a time, not a users.info call each', async () => {
  // A workspace of about 365 people: 300 not on the team come first, so the newly linked ones are on the second page.
  for (let i = 0; i < 300; i++) slack.addUser(`U0WS${String(i).padStart(3, '0')}`, { tz: 'Asia/Tokyo' });
  const linked = Array.from({ length: 60 }, (_, i) => `U0NEW${String(i).padStart(2, '0')}`);
  for (const user of linked) slack.addUser(user, { tz: 'Europe/Berlin' });
  for (let start = 0; start < linked.length; start += 20) {
    await Promise.all(
      linked
        .slice(start, start + 20)
        .map((user, i) => relay.register({ handle: `new${start + i}@acme`, slack_user_id: user })),
    );
  }
  const infoBefore = slack.callsTo('users.info').length;
  const listBefore = slack.callsTo('users.list').length;

  const result = await ticks.tick();

  const pages = slack.callsTo('users.list').slice(listBefore);
  expect(pages.map((c) => [String(c.args.limit), Boolean(c.args.cursor)])).toEqual([
    ['200', false],
    ['200', true],
  ]);
  expect(
    slack
      .callsTo('users.info')
      .slice(infoBefore)
      .map((c) => c.args.user),
  ).toEqual([]);
  // Their digest hour (09:30 Berlin) has come, so each of them was due.
  expect(linked.map((_, i) => result.outcomes[`new${i}@acme`])).toEqual(linked.map(() => expect.any(String)));
});
