// Pasted inbox links: signed link_shared events into the real Bolt receiver. Everyone in the conversation sees an
// unfurl that says only "a handoff" (chat.unfurl at the fake Slack); each participant in the conversation gets the
// compact card (status, summary, participants) as an ephemeral message; nobody else learns anything.
import { randomUUID } from 'node:crypto';
import { postSignedEvent } from '../../scripts/fake-slack/slack-requests';
import { RECIPIENT, SENDER, STRANGER, startSlackTeam, type SlackTeam } from '../helpers/slack-team';

const EVERYONE = 'C0EVERYONE'; // sender, recipient and a stranger
const SENDER_ONLY = 'C0SENDERS'; // the sender and the stranger
let team: SlackTeam;
let threadId: string;
const SUMMARY = 'Unfurl: the billing export moved to S3';

beforeAll(async () => {
  team = await startSlackTeam('slack_unfurl');
  team.slack.addChannel(EVERYONE, [SENDER, RECIPIENT, STRANGER]);
  team.slack.addChannel(SENDER_ONLY, [SENDER, STRANGER]);
  ({ threadId } = await team.handoff(SUMMARY));
}, 60_000);

afterAll(async () => {
  await team?.close();
});

async function paste(channel: string, user: string, urls: string[], source?: 'composer') {
  const shared = team.slack.shareLinks(channel, user, urls);
  const answer = await postSignedEvent(`${team.relay.url}/slack/events`, team.relay.signingSecret, {
    type: 'link_shared',
    channel,
    user,
    message_ts: shared.message_ts,
    unfurl_id: shared.unfurl_id,
    source: source ?? shared.source,
    is_bot_user_member: true,
    links: shared.links,
  });
  expect(answer.status).toBe(200);
  return shared;
}

const unfurled = (channel: string, ts: string) => team.slack.unfurls.get(`${channel}:${ts}`);
const ephemeralsIn = (channel: string, since: number) =>
  team.slack
    .callsTo('chat.postEphemeral')
    .slice(since)
    .filter((c) => c.args.channel === channel);
const ephemeralAttempts = (since: number) =>
  team.slack.calls.filter((c) => c.method === 'chat.postEphemeral').slice(since);

test('everyone sees only that it is a handoff; the two participants in the channel each get the card, the stranger nothing', async () => {
  const signed = team.relay.relay.links.url(threadId, 'sender@acme');
  const plain = team.relay.relay.links.url(threadId);
  const before = team.slack.callsTo('chat.postEphemeral').length;
  const shared = await paste(EVERYONE, SENDER, [signed, plain]);
  await team.slack.waitFor('chat.unfurl', (c) => c.args.unfurl_id === shared.unfurl_id);
  const cards = await waitForCount(() => ephemeralsIn(EVERYONE, before), 2);

  const unfurls = unfurled(EVERYONE, shared.message_ts)!;
  expect([...unfurls.keys()].sort()).toEqual([signed, plain].sort());
  for (const unfurl of unfurls.values()) {
    const shown = JSON.stringify(unfurl);
    expect(shown).toContain('A handoff on handoff-relay');
    for (const secret of ['billing', 'sender@acme', 'recipient@acme', 'pending', threadId, SENDER, RECIPIENT])
      expect(shown).not.toContain(secret);
  }

  expect(cards.map((c) => c.args.user).sort()).toEqual([RECIPIENT, SENDER].sort());
  for (const card of cards) {
    const shown = JSON.stringify(card.args.blocks);
    expect(shown).toContain(SUMMARY);
    expect(shown).toContain(':hourglass_flowing_sand: pending');
    expect(shown).toContain(`<@${SENDER}> → <@${RECIPIENT}>`);
    // Each participant's button opens the inbox signed for them, not for whoever pasted the link.
    const viewer = card.args.user === SENDER ? 'sender@acme' : 'recipient@acme';
    expect(shown).toContain(team.relay.relay.links.url(threadId, viewer));
    // The pasted link was signed for the sender: both are told it opens the thread as them for anyone.
    expect(shown).toContain('signed for `sender@acme`');
  }
});

test('a participant who is not in the conversation gets no card (Slack refuses it), the one who is does', async () => {
  const before = team.slack.callsTo('chat.postEphemeral').length;
  const attempts = team.slack.calls.filter((c) => c.method === 'chat.postEphemeral').length;
  const shared = await paste(SENDER_ONLY, STRANGER, [team.relay.relay.links.url(threadId)]);
  await team.slack.waitFor('chat.unfurl', (c) => c.args.unfurl_id === shared.unfurl_id);
  await waitForCount(() => ephemeralAttempts(attempts), 2);
  expect(ephemeralsIn(SENDER_ONLY, before).map((c) => c.args.user)).toEqual([SENDER]);
  expect(ephemeralAttempts(attempts).find((c) => c.args.user === RECIPIENT)?.response.error).toBe(
    'user_not_in_channel',
  );
  expect(JSON.stringify(ephemeralsIn(SENDER_ONLY, before)[0]!.args.blocks)).not.toContain('signed for');
});

test('a link to no thread, or with a forged signature, unfurls the same and tells nobody anything', async () => {
  const attempts = team.slack.calls.filter((c) => c.method === 'chat.postEphemeral').length;
  const missing = team.relay.relay.links.url(randomUUID(), 'sender@acme');
  const forged = `${team.relay.relay.links.url(threadId)}?as=stranger%40acme&sig=${'A'.repeat(43)}`;
  const shared = await paste(EVERYONE, STRANGER, [missing, forged]);
  await team.slack.waitFor('chat.unfurl', (c) => c.args.unfurl_id === shared.unfurl_id);
  const unfurls = unfurled(EVERYONE, shared.message_ts)!;
  expect(JSON.stringify(unfurls.get(missing))).toEqual(JSON.stringify(unfurls.get(forged)));
  // The forged link names a real thread: its participants in the channel get their own card (they may read it anyway),
  // which says nothing about the forged signature's viewer.
  const cards = await waitForCount(() => ephemeralAttempts(attempts), 2);
  expect(cards.map((c) => c.args.user).sort()).toEqual([RECIPIENT, SENDER].sort());
  expect(cards.every((c) => !JSON.stringify(c.args.blocks).includes('stranger@acme'))).toBe(true);
});

test('links to other sites are left alone; a link still in the composer unfurls by unfurl_id, with no cards', async () => {
  const calls = team.slack.calls.length;
  const other = await paste(EVERYONE, SENDER, ['https://example.org/inbox/' + threadId, `${team.relay.url}/healthz`]);
  const composed = await paste(EVERYONE, SENDER, [team.relay.relay.links.url(threadId)], 'composer');
  const unfurl = await team.slack.waitFor('chat.unfurl', (c) => c.args.unfurl_id === composed.unfurl_id);
  expect(unfurl.args.source).toBe('composer');
  expect(unfurl.args.channel).toBeUndefined();
  const later = team.slack.calls.slice(calls);
  expect(later.filter((c) => c.method === 'chat.unfurl')).toHaveLength(1);
  expect(later.some((c) => c.method === 'chat.unfurl' && c.args.unfurl_id === other.unfurl_id)).toBe(false);
  expect(later.filter((c) => c.method === 'chat.postEphemeral')).toHaveLength(0);
});

async function waitForCount<T>(read: () => T[], n: number): Promise<T[]> {
  for (let i = 0; i < 400; i += 1) {
    const got = read();
    if (got.length >= n) return got;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`expected ${n} calls, saw ${read().length}`);
}
