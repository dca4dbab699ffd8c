// Unclaimed handoffs in Slack through the real Bolt receiver (signed requests), a real relay (FerretDB + Redis) and
// the fake Slack: channel bindings (`/handoff channel …`), Claim cards in the bound channel or each candidate's DM,
// the first claim winning (20 concurrent clicks), every copy redrawn in place, and clicks that must change nothing.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ThreadDoc } from '../../relay-core/domain/documents';
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { sendHandoff } from '../helpers/handoffs';
import { connectMcpHttp, toolOk } from '../helpers/mcp-http-client';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { dmText, explanations, press, threadDoc, waitForExplanation } from '../helpers/slack-dm';
import {
  postSignedEvent,
  sendSlashCommand,
  submitViewState,
  type ButtonClick,
} from '../../scripts/fake-slack/slack-requests';
import { waitUntil } from '../helpers/wait-until';

const SENDER = 'U0SENDER';
const ANA = 'U0ANA';
const BEN = 'U0BEN';
const CY = 'U0CY';
const STRANGER = 'U0STRANGER';
const WEB_CHANNEL = 'C0TEAMWEB';
const OWNERS_CHANNEL = 'C0WEBOWNERS';
const OUTSIDE = 'C0OUTSIDE';

let slack: FakeSlack;
let relay: TestRelay;
const keys: Record<string, string> = {};
const clients: Client[] = [];
let seq = 0;

beforeAll(async () => {
  slack = await startFakeSlack();
  for (const user of [SENDER, ANA, BEN, CY, STRANGER]) slack.addUser(user);
  slack.addChannel(WEB_CHANNEL);
  slack.addChannel(OWNERS_CHANNEL);
  slack.addChannel(OUTSIDE, undefined, { botMember: false });
  relay = await startTestRelay({ name: 'slack_claim', slack });
  keys.sender = await relay.register({ handle: 'sender@acme', role: 'backend', slack_user_id: SENDER });
  keys.ana = await relay.register({
    handle: 'ana@acme',
    name: 'Ana',
    role: 'frontend',
    skills: ['react'],
    repos_owned: ['apps/web/'],
    slack_user_id: ANA,
  });
  keys.ben = await relay.register({
    handle: 'ben@acme',
    name: 'Ben',
    role: 'frontend',
    skills: ['react'],
    repos_owned: ['apps/web/'],
    slack_user_id: BEN,
  });
  keys.cy = await relay.register({
    handle: 'cy@acme',
    name: 'Cy',
    role: 'design',
    skills: ['react'],
    slack_user_id: CY,
  });
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await relay?.stop();
  await slack?.close();
});

/** Runs `/handoff <text>` as user in channel; resolves with the app's ephemeral answer. */
async function command(user: string, text: string, channel = WEB_CHANNEL): Promise<Record<string, unknown>> {
  const name = `cmd-${++seq}`;
  const answer = await sendSlashCommand(`${relay.url}/slack/events`, relay.signingSecret, {
    user,
    text,
    channel,
    responseUrl: slack.responseUrl(name),
    triggerId: slack.triggerId(),
  });
  expect(answer.status).toBe(200);
  return (await slack.waitFor('response_url', (c) => c.args.response_url === name)).args;
}

interface Card {
  channel: string;
  ts: string;
}

/** The thread once its claim cards are recorded (`copies`: 'channel' or the candidates' Slack ids). */
async function cardsOf(threadId: string, copies: string[]): Promise<Record<string, Card>> {
  const doc = await waitUntil(
    async () => {
      const d = await relay.store.threads.findOne({ _id: threadId });
      return d && copies.every((c) => d.slack_claims?.[c]) ? d : undefined;
    },
    `claim cards ${copies.join(', ')}`,
  );
  return doc.slack_claims as Record<string, Card>;
}

const buttons = (card: Card) =>
  (slack.messages.get(card.channel)?.find((m) => m.ts === card.ts)?.blocks as any[]).flatMap((b) =>
    b.type === 'actions' ? b.elements : [],
  );

function claimClick(card: Card, user: string, over: Partial<ButtonClick> = {}): ButtonClick {
  const value = buttons(card).find((b: any) => b.action_id === 'handoff_claim')?.value ?? '{}';
  return {
    user,
    channel: card.channel,
    messageTs: card.ts,
    actionId: 'handoff_claim',
    value,
    responseUrl: slack.responseUrl(`claim-${++seq}`),
    ...over,
  };
}

async function until(threadId: string, check: (doc: ThreadDoc) => boolean, what: string): Promise<ThreadDoc> {
  return waitUntil(async () => {
    const doc = await threadDoc(relay, threadId);
    return check(doc) ? doc : undefined;
  }, what);
}

describe('one candidate', () => {
  test('role:design names only Cy: the normal DM with Accept, no claim card', async () => {
    const id = await sendHandoff(relay, keys.sender!, 'role:design', 'one designer');
    const doc = await until(id, (d) => d.slack !== null, 'the recipient DM');
    expect(doc).toMatchObject({ status: 'pending', to: 'cy@acme', to_target: 'role:design' });
    expect(doc.slack_claims).toBeUndefined();
    expect(dmText(slack, doc.slack!.channel, doc.slack!.ts)).toContain('handoff_accept');
    expect(doc.slack!.channel).toBe(slack.imChannelId(CY));
  });
});

describe('several candidates, no channel bound', () => {
  test('a DM with Claim to each candidate; one click claims; every copy says who and when; the claimer gets the DM', async () => {
    const id = await sendHandoff(relay, keys.sender!, 'skill:react', 'react bug in the table');
    const cards = await cardsOf(id, [ANA, BEN, CY]);
    expect(cards[ANA]!.channel).toBe(slack.imChannelId(ANA));
    for (const user of [ANA, BEN, CY]) {
      const shown = dmText(slack, cards[user]!.channel, cards[user]!.ts);
      expect(shown).toContain('handoff_claim');
      expect(shown).toContain('Unclaimed');
      expect(shown).toContain('react bug in the table');
    }
    // The sender's DM says it waits for a claim.
    const sent = await until(id, (d) => Boolean(d.slack_sender), 'the sender DM');
    expect(dmText(slack, sent.slack_sender!.channel, sent.slack_sender!.ts)).toContain(
      'Waiting for someone (skill:react) to claim it',
    );

    const click = claimClick(cards[BEN]!, BEN);
    expect((await press(relay, click)).status).toBe(200);
    await waitForExplanation(slack, click.responseUrl!, /You claimed this handoff/);
    const claimed = await until(id, (d) => d.slack !== null, 'the claimer DM');
    expect(claimed).toMatchObject({ status: 'pending', to: 'ben@acme', claimed_by: 'ben@acme' });
    expect(claimed.slack!.channel).toBe(slack.imChannelId(BEN));
    const dm = dmText(slack, claimed.slack!.channel, claimed.slack!.ts);
    expect(dm).toContain('handoff_accept');
    expect(dm).toContain('handoff_decline');
    for (const user of [ANA, BEN, CY]) {
      await waitUntil(
        async () => dmText(slack, cards[user]!.channel, cards[user]!.ts).includes(`Claimed by <@${BEN}>`) || undefined,
        `${user}'s copy redrawn`,
      );
      expect(buttons(cards[user]!).map((b: any) => [b.action_id, b.url])).toEqual([
        ['handoff_open_inbox', `${relay.url}/inbox/${id}`],
      ]);
      expect(dmText(slack, cards[user]!.channel, cards[user]!.ts)).toMatch(
        /Claimed by <@\w+>\* · <!date\^\d+\^\{date_short_pretty\} at \{time\}\|\d{4}-\d\d-\d\d \d\d:\d\d UTC>/,
      );
    }

    // A second click by Ben, a late click by Ana: explained, nothing changes.
    const again = claimClick(cards[ANA]!, BEN, { value: JSON.stringify({ t: id, s: 'unclaimed' }) });
    await press(relay, again);
    await waitForExplanation(slack, again.responseUrl!, /You already claimed this handoff/);
    const late = claimClick(cards[ANA]!, ANA, { value: JSON.stringify({ t: id, s: 'unclaimed' }) });
    await press(relay, late);
    await waitForExplanation(
      slack,
      late.responseUrl!,
      /^Already claimed by ben@acme <!date\^\d+\^\{date_short_pretty\} at \{time\}\|[^>]+ UTC>\. Nothing was changed\.$/,
    );
    expect(await threadDoc(relay, id)).toMatchObject({ status: 'pending', to: 'ben@acme', claimed_by: 'ben@acme' });
    expect((await threadDoc(relay, id)).status_history).toHaveLength(2);
  });
});

describe('none', () => {
  test('/handoff role:security … names nobody: nothing sent, the roles that exist listed', async () => {
    const answer = await command(SENDER, 'role:security please review');
    expect(answer.text).toMatch(
      /^Nothing was sent: No active teammate matches role:security; roles that exist: backend, design, frontend/,
    );
  });

  test('/handoff role: … is a malformed target: what it lacks is explained', async () => {
    const answer = await command(SENDER, 'role: please review');
    expect(answer.text).toMatch(/Nothing was sent: the recipient role: needs a value after "role:"/);
  });
});

describe('channel bindings', () => {
  test('binding in a channel the app is not in is refused with what to do; nothing is stored', async () => {
    const answer = await command(ANA, 'channel role:frontend', OUTSIDE);
    expect(answer.text).toMatch(
      /cannot post in this channel \(not_in_channel\)\. Invite it first with `\/invite @handoff-relay`.*Nothing was bound/,
    );
    expect(await relay.store.channelBindings.findOne({ _id: 'role:frontend' })).toBeNull();
  });

  test('bad targets, a DM, and bare `channel` are explained', async () => {
    expect((await command(ANA, 'channel frontend')).text).toMatch(
      /Nothing was bound: target: must be role:<role>, skill:<skill> or owner:<path>/,
    );
    expect((await command(ANA, 'channel ana@acme')).text).toMatch(/not to one person/);
    expect((await command(ANA, 'channel role:frontend', slack.imChannelId(ANA))).text).toMatch(
      /in the channel that should receive these handoffs \(not in a DM\)/,
    );
    expect((await command(ANA, 'channel')).text).toMatch(/`\/handoff channel role:frontend`/);
    expect(await relay.store.channelBindings.countDocuments({})).toBe(0);
  });

  test('bind, list, re-bind and unbind; the bound channel is told', async () => {
    expect((await command(ANA, 'channel role:frontend')).text).toMatch(/Bound `role:frontend` to <#C0TEAMWEB>/);
    expect(slack.messages.get(WEB_CHANNEL)?.at(-1)?.text).toMatch(/bound `role:frontend` to this channel/);
    expect(await relay.store.channelBindings.findOne({ _id: 'role:frontend' })).toMatchObject({
      channel: WEB_CHANNEL,
      bound_by: 'ana@acme',
    });
    expect((await command(ANA, 'channel skill:css', OWNERS_CHANNEL)).text).toMatch(/Bound `skill:css`/);
    expect((await command(ANA, 'channel list')).text).toMatch(
      /`role:frontend` → <#C0TEAMWEB>\n• `skill:css` → <#C0WEBOWNERS>/,
    );
    expect((await command(ANA, 'channel unbind skill:css')).text).toMatch(/no longer bound/);
    expect((await command(ANA, 'channel unbind skill:css')).text).toMatch(/was not bound/);
  });

  test('a channel-bound role: one card in the channel, no DMs; a lost answer retried never doubles it', async () => {
    slack.dropResponseNext('chat.postMessage');
    const id = await sendHandoff(relay, keys.sender!, 'role:frontend', 'frontend triage');
    const cards = await cardsOf(id, ['channel']);
    expect(cards.channel!.channel).toBe(WEB_CHANNEL);
    const copies = () =>
      (slack.messages.get(WEB_CHANNEL) ?? []).filter((m) => JSON.stringify(m.blocks).includes('frontend triage'));
    expect(copies()).toHaveLength(1);
    expect(Object.keys((await threadDoc(relay, id)).slack_claims ?? {})).toEqual(['channel']);
  });

  test('20 concurrent Claim clicks (Ana and Ben): exactly one owner, the card updated once in place, every loser told', async () => {
    const id = await sendHandoff(relay, keys.sender!, 'role:frontend', 'claim race');
    const { channel: card } = await cardsOf(id, ['channel']);
    const clicks = Array.from({ length: 20 }, (_, i) =>
      claimClick(card!, i % 2 ? ANA : BEN, { actionTs: `1700000002.0000${String(i).padStart(2, '0')}` }),
    );
    const answers = await Promise.all(clicks.map((c) => press(relay, c)));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    const doc = await until(id, (d) => d.slack !== null, 'the claimer DM');
    const owner = doc.claimed_by!;
    expect(['ana@acme', 'ben@acme']).toContain(owner);
    expect(doc.status_history.filter((h) => h.status === 'pending')).toHaveLength(1);
    expect(doc.outbox.filter((e) => e.type === 'thread.claimed')).toHaveLength(1);
    const loser = owner === 'ana@acme' ? BEN : ANA;
    for (const click of clicks) {
      await waitUntil(
        async () => explanations(slack, click.responseUrl!).length > 0 || undefined,
        'every click answered',
      );
      const said = String(explanations(slack, click.responseUrl!)[0]!.args.text);
      if (click.user === loser) expect(said).toMatch(new RegExp(`Already claimed by ${owner}`));
      else expect(said).toMatch(/You (already )?claimed this handoff/);
    }
    const ownerSlack = owner === 'ana@acme' ? ANA : BEN;
    await waitUntil(
      async () => dmText(slack, card!.channel, card!.ts).includes(`Claimed by <@${ownerSlack}>`) || undefined,
      'the card redrawn',
    );
    // No Claim any more; View in inbox stays.
    expect(buttons(card!).map((b: any) => b.action_id)).toEqual(['handoff_open_inbox']);
    expect(doc.slack!.channel).toBe(slack.imChannelId(ownerSlack));
  });

  test('a claim after the sender cancelled: the card says cancelled, the click changes nothing', async () => {
    const id = await sendHandoff(relay, keys.sender!, 'role:frontend', 'cancel me');
    const { channel: card } = await cardsOf(id, ['channel']);
    const stale = claimClick(card!, ANA);
    expect((await relay.rpc(keys.sender, 'tasks/cancel', { task_id: id })).body.result).toMatchObject({
      status: 'cancelled',
    });
    await waitUntil(
      async () => dmText(slack, card!.channel, card!.ts).includes('Cancelled by') || undefined,
      'the card redrawn as cancelled',
    );
    // No Claim any more; View in inbox stays.
    expect(buttons(card!).map((b: any) => b.action_id)).toEqual(['handoff_open_inbox']);
    await press(relay, stale);
    await waitForExplanation(slack, stale.responseUrl!, /cancelled before anyone claimed it\. Nothing was changed/);
    expect(await threadDoc(relay, id)).toMatchObject({ status: 'cancelled', claimed_by: null, to: 'role:frontend' });
  });

  test('forged values, a non-candidate and an unlinked person change nothing and are told why', async () => {
    const id = await sendHandoff(relay, keys.sender!, 'role:frontend', 'forgeries');
    const { channel: card } = await cardsOf(id, ['channel']);
    const cases: Array<[Partial<ButtonClick> & { user: string }, RegExp]> = [
      [{ user: ANA, value: 'not json' }, /not one handoff-relay recognises/],
      [{ user: ANA, value: JSON.stringify({ t: id, s: 'pending' }) }, /not one handoff-relay recognises/],
      [
        { user: ANA, value: JSON.stringify({ t: '0f1e2d3c-4b5a-4978-8877-665544332211', s: 'unclaimed' }) },
        /no longer exists/,
      ],
      [{ user: CY }, /cy@acme is not one of the candidates for this handoff to role:frontend \(ana@acme, ben@acme\)/],
      [{ user: STRANGER }, /not linked to a handoff-relay teammate/],
    ];
    for (const [over, said] of cases) {
      const click = claimClick(card!, over.user, over);
      await press(relay, click);
      await waitForExplanation(slack, click.responseUrl!, said);
    }
    const after = await threadDoc(relay, id);
    expect(after).toMatchObject({ status: 'unclaimed', to: 'role:frontend', claimed_by: null });
    expect(after.status_history).toHaveLength(1);
    expect(after.outbox.map((e) => e.type)).toEqual(['thread.created']);
  });
});

describe('Claim from /handoff inbox and the Home tab', () => {
  /** The Claim button of this thread's row in a list (inbox, Home): its block and value. */
  const claimIn = (blocks: any[], id: string) =>
    blocks.find((b) => b.block_id === `thread_${id}`)?.elements?.find((e: any) => e.action_id === 'handoff_claim');

  test('/handoff inbox lists an unclaimed handoff with Claim for each candidate; a click claims it, a late one is explained', async () => {
    const id = await sendHandoff(relay, keys.sender!, 'skill:react', 'claim me from the inbox');
    await cardsOf(id, [ANA, BEN, CY]);
    const [anaInbox, benInbox] = [
      await command(ANA, 'inbox', slack.imChannelId(ANA)),
      await command(BEN, 'inbox', slack.imChannelId(BEN)),
    ];
    const anaClaim = claimIn(anaInbox.blocks as any[], id);
    expect(anaClaim).toBeDefined();
    expect(JSON.parse(anaClaim.value)).toEqual({ t: id, s: 'unclaimed' });
    const benClaim = claimIn(benInbox.blocks as any[], id);
    // The sender's inbox (received) does not list it.
    expect(claimIn((await command(SENDER, 'inbox', slack.imChannelId(SENDER))).blocks as any[], id)).toBeUndefined();

    const click: ButtonClick = {
      user: ANA,
      channel: slack.imChannelId(ANA),
      messageTs: '1700000003.000001',
      actionId: 'handoff_claim',
      value: anaClaim.value,
      surface: 'ephemeral',
      blockId: `thread_${id}`,
      responseUrl: slack.responseUrl(`inbox-claim-${++seq}`),
    };
    await press(relay, click);
    await waitForExplanation(slack, click.responseUrl!, /You claimed this handoff/);
    await until(id, (d) => d.claimed_by === 'ana@acme' && d.slack !== null, 'Ana’s claim and DM');
    const late: ButtonClick = {
      ...click,
      user: BEN,
      channel: slack.imChannelId(BEN),
      value: benClaim.value,
      responseUrl: slack.responseUrl(`inbox-claim-${++seq}`),
    };
    await press(relay, late);
    await waitForExplanation(slack, late.responseUrl!, /Already claimed by ana@acme .*Nothing was changed/);
    // Claimed, it is an ordinary pending handoff in Ana's inbox (Accept), and gone from Ben's.
    const after = await command(ANA, 'inbox', slack.imChannelId(ANA));
    const row = (after.blocks as any[]).find((b) => b.block_id === `thread_${id}`);
    expect(row.elements.map((e: any) => e.action_id)).toContain('handoff_accept');
    expect((await command(BEN, 'inbox', slack.imChannelId(BEN))).blocks as any[]).not.toContainEqual(
      expect.objectContaining({ block_id: `thread_${id}` }),
    );
  });

  test('the Home tab shows Claim to a candidate; a click after someone else claimed it is explained in a modal', async () => {
    const id = await sendHandoff(relay, keys.sender!, 'skill:react', 'claim me from Home');
    await cardsOf(id, [ANA, BEN, CY]);
    const before = slack.callsTo('views.publish').length;
    await postSignedEvent(`${relay.url}/slack/events`, relay.signingSecret, {
      type: 'app_home_opened',
      user: BEN,
      channel: slack.imChannelId(BEN),
      tab: 'home',
    });
    const home = await slack.waitFor(
      'views.publish',
      (c) =>
        c.args.user_id === BEN &&
        slack.callsTo('views.publish').indexOf(c) >= before &&
        JSON.stringify(c.args.view).includes(id),
    );
    const claim = claimIn((home.args.view as any).blocks, id);
    expect(claim).toBeDefined();

    expect((await relay.rpc(keys.cy!, 'tasks/update', { task_id: id, transition: 'claim' })).body.result).toMatchObject(
      { claimed_by: 'cy@acme' },
    );
    const triggerId = slack.triggerId();
    await press(relay, {
      user: BEN,
      channel: slack.imChannelId(BEN),
      messageTs: '',
      actionId: 'handoff_claim',
      value: claim.value,
      surface: 'home',
      blockId: `thread_${id}`,
      triggerId,
    });
    const modal = await slack.waitFor('views.open', (c) => c.args.trigger_id === triggerId);
    expect(JSON.stringify(modal.args.view)).toMatch(/Already claimed by cy@acme .*Nothing was changed/);
    expect(await threadDoc(relay, id)).toMatchObject({ claimed_by: 'cy@acme', to: 'cy@acme' });
  });
});

describe('the new-handoff modal', () => {
  const text = (value?: string) => ({ type: 'plain_text_input', value: value ?? null });
  async function submit(form: { to?: string | null; target?: string; summary: string }) {
    const values = {
      recipient: { recipient: { type: 'users_select', selected_user: form.to ?? null } },
      recipient_target: { recipient_target: text(form.target) },
      intent: {
        intent: {
          type: 'static_select',
          selected_option: { text: { type: 'plain_text', text: 'x' }, value: 'inform' },
        },
      },
      summary: { summary: text(form.summary) },
    };
    const answer = await submitViewState(`${relay.url}/slack/events`, relay.signingSecret, {
      user: SENDER,
      viewId: `V0CLAIM${++seq}`,
      callbackId: 'handoff_new_modal',
      values,
    });
    expect(answer.status).toBe(200);
    return answer.text
      ? (JSON.parse(answer.text) as { response_action?: string; errors?: Record<string, string> })
      : {};
  }

  test('offers a target field; a target sends to whoever fits, the sender is told how many can claim it', async () => {
    const triggerId = slack.triggerId();
    await sendSlashCommand(`${relay.url}/slack/events`, relay.signingSecret, {
      user: SENDER,
      text: '',
      responseUrl: slack.responseUrl('modal'),
      triggerId,
    });
    const open = await slack.waitFor('views.open', (c) => c.args.trigger_id === triggerId);
    expect(JSON.stringify(open.args.view)).toContain('role:frontend · skill:react · owner:apps/web/');
    expect(await submit({ target: 'skill:react', summary: 'from the modal' })).toEqual({});
    const dm = await slack.waitFor(
      'chat.postMessage',
      (c) => c.args.channel === SENDER && String(c.args.text).includes('skill:react'),
    );
    expect(dm.args.text).toMatch(/3 teammates can claim it/);
  });

  test('a person and a target, neither, or a malformed target: the problem on its field, nothing sent', async () => {
    expect(await submit({ to: ANA, target: 'role:frontend', summary: 'both' })).toMatchObject({
      errors: { recipient_target: expect.stringMatching(/not both/) },
    });
    expect(await submit({ summary: 'neither' })).toMatchObject({
      errors: { recipient: expect.stringMatching(/or name a role, skill or owner/) },
    });
    expect(await submit({ target: 'squad:web', summary: 'bad' })).toMatchObject({
      errors: { recipient_target: expect.stringMatching(/role:<role>, skill:<skill> or owner:<path>/) },
    });
    expect(await submit({ target: 'role:security', summary: 'nobody' })).toMatchObject({
      errors: { recipient_target: expect.stringMatching(/roles that exist: backend, design, frontend/) },
    });
    expect(await relay.store.threads.countDocuments({ summary: { $in: ['both', 'neither', 'bad', 'nobody'] } })).toBe(
      0,
    );
  });
});

describe('MCP end to end', () => {
  test('handoff_to_teammate to owner:apps/web/ lands in the bound channel, is claimed with one click, and the claimer gets the DM', async () => {
    expect((await command(BEN, 'channel owner:apps/web/', OWNERS_CHANNEL)).text).toMatch(
      /Bound `owner:apps\/web\/` to <#C0WEBOWNERS>/,
    );
    const sender = await connectMcpHttp(relay.url, keys.sender!, 'claim-e2e');
    clients.push(sender);
    const created = toolOk(
      await sender.callTool({
        name: 'handoff_to_teammate',
        arguments: {
          to: 'owner:apps/web/',
          intent: 'ask_question',
          summary: 'Who owns the router?',
          question: 'Can you review the router change?',
        },
      }),
    );
    expect(created).toMatchObject({
      status: 'unclaimed',
      recipient: 'owner:apps/web/',
      candidates: ['ana@acme', 'ben@acme'],
    });
    const { channel: card } = await cardsOf(created.thread_id, ['channel']);
    expect(card!.channel).toBe(OWNERS_CHANNEL);
    expect(dmText(slack, card!.channel, card!.ts)).toContain('Who owns the router?');
    const click = claimClick(card!, ANA);
    await press(relay, click);
    const doc = await until(created.thread_id, (d) => d.slack !== null, 'the DM to the claimer');
    expect(doc).toMatchObject({ to: 'ana@acme', status: 'pending' });
    expect(doc.slack!.channel).toBe(slack.imChannelId(ANA));
    expect(dmText(slack, doc.slack!.channel, doc.slack!.ts)).toContain('handoff_accept');
    await waitUntil(
      async () => dmText(slack, card!.channel, card!.ts).includes(`Claimed by <@${ANA}>`) || undefined,
      'the card redrawn',
    );
    // The sender's agent reads who took it.
    const viewed = toolOk(await sender.callTool({ name: 'view_thread', arguments: { thread_id: created.thread_id } }));
    expect(viewed).toMatchObject({ status: 'pending' });
  });
});
