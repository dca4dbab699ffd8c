// The pure rules behind exactly-once Slack posting: what is recorded, what may be claimed, which DM a message is.
import type { SlackPendingPost, ThreadDoc } from '../../relay-core/domain/documents';
import {
  earlierRepliesRecorded,
  messageDigest,
  recordedTs,
  withClaim,
  withClaimsShown,
  withoutClaim,
  withRecord,
  withShown,
} from '../../bot/delivery/slack-posts';

const at = new Date('2026-01-01T00:00:00Z');
const thread = (over: Partial<ThreadDoc> = {}) => ({ _id: 't', slack: null, ...over }) as ThreadDoc;
const claim = (over: Partial<SlackPendingPost> = {}): SlackPendingPost => ({
  marker: 'm1',
  lease: 'l1',
  channel: 'D1',
  thread_ts: null,
  owner: 'job-1',
  claimed_at: at,
  at,
  ...over,
});

test('a DM record goes where the listeners read it; a reply record by audience and sequence number', () => {
  const recipient = withRecord(thread(), 'recipient', { channel: 'D1', ts: '1.1' }, at)!;
  expect(recipient.slack).toEqual({ channel: 'D1', ts: '1.1', posted_at: at });
  const sender = withRecord(recipient, 'sender', { channel: 'D2', ts: '2.1' }, at)!;
  expect(sender.slack_sender).toEqual({ channel: 'D2', ts: '2.1', posted_at: at });
  const reply = withRecord(sender, 'sender:1', { channel: 'D2', ts: '2.2' }, at)!;
  expect(reply.slack_replies).toEqual({ 'sender:1': '2.2' });
  expect([
    recordedTs(reply, 'recipient'),
    recordedTs(reply, 'sender'),
    recordedTs(reply, 'sender:1'),
    recordedTs(reply, 'recipient:1'),
  ]).toEqual(['1.1', '2.1', '2.2', null]);
});

test('the first record wins and clears only the claim carrying the same marker', () => {
  const claimed = withClaim(thread(), 'recipient', claim());
  const recorded = withRecord(claimed, 'recipient', { channel: 'D1', ts: '1.1', marker: 'm1' }, at)!;
  expect(recorded.slack_pending).toEqual({});
  expect(withRecord(recorded, 'recipient', { channel: 'D1', ts: '9.9' }, at)).toBeUndefined();
  const otherMarker = withRecord(claimed, 'recipient', { channel: 'D1', ts: '1.1', marker: 'other' }, at)!;
  expect(otherMarker.slack_pending).toEqual({ recipient: claim() });
});

test("a stream's start is recorded with the reply of the batch it began with, in the same write; a later record changes neither", () => {
  const claimed = withClaim(thread(), 'recipient:s:run1', claim({ thread_ts: '1.1' }));
  const started = withRecord(claimed, 'recipient:s:run1', { channel: 'D1', ts: '1.5', marker: 'm1' }, at, [
    'recipient:4',
  ])!;
  expect(started.slack_replies).toEqual({ 'recipient:s:run1': '1.5', 'recipient:4': '1.5' });
  expect(started.slack_pending).toEqual({});
  // Found again by a retry of the lost answer (no marker): nothing changes.
  expect(withRecord(started, 'recipient:s:run1', { channel: 'D1', ts: '1.5' }, at, ['recipient:4'])).toBeUndefined();
  // A batch recorded on its own before (an older relay) keeps its record.
  const earlier = thread({ slack_replies: { 'recipient:4': '1.9' } });
  expect(
    withRecord(earlier, 'recipient:s:run1', { channel: 'D1', ts: '1.5' }, at, ['recipient:4'])!.slack_replies,
  ).toEqual({ 'recipient:4': '1.9', 'recipient:s:run1': '1.5' });
});

test('a claim is given up only by the lease that holds it', () => {
  const claimed = withClaim(thread(), 'recipient:1', claim({ thread_ts: '1.1' }));
  expect(withoutClaim(claimed, 'recipient:1', 'someone-else')).toBeUndefined();
  expect(withoutClaim(claimed, 'recipient:1', 'l1')!.slack_pending).toEqual({});
});

test('reply n may be claimed only once replies 1..n-1 under the same DM are recorded', () => {
  const doc = thread({ slack_replies: { 'recipient:1': '1.2', 'sender:1': '2.2', 'sender:2': '2.3' } });
  expect(earlierRepliesRecorded(doc, 'recipient:2')).toBe(true);
  expect(earlierRepliesRecorded(doc, 'recipient:3')).toBe(false);
  expect(earlierRepliesRecorded(doc, 'sender:3')).toBe(true);
  expect(earlierRepliesRecorded(doc, 'recipient')).toBe(true);
});

test('a Claim card copy records what it shows: from its post, then from each redraw of that same post only', () => {
  const card = {
    text: 'Handoff for role:web',
    blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'Unclaimed' } }],
  };
  const shown = messageDigest(card);
  expect(shown).toMatch(/^[\w-]{22}$/);
  expect(messageDigest({ ...card, text: 'Handoff for role:web (claimed)' })).not.toBe(shown);
  const posted = withRecord(thread(), 'claim:U1', { channel: 'D1', ts: '1.1', shown }, at)!;
  expect(posted.slack_claims).toEqual({ U1: { channel: 'D1', ts: '1.1', posted_at: at, shown } });
  const drawn = Object.entries(posted.slack_claims!);
  expect(withClaimsShown(posted, drawn, shown)).toBeUndefined();
  expect(withClaimsShown(posted, drawn, 'redrawn')!.slack_claims!.U1!.shown).toBe('redrawn');
  // A record that is not the post drawn (another ts) is left as it is.
  expect(withClaimsShown(posted, [['U1', { channel: 'D1', ts: '9.9', posted_at: at }]], 'redrawn')).toBeUndefined();
});

test('a DM or approver’s DM records a redraw only while it is that post and nobody drew it since the sync read it', () => {
  const posted = withRecord(
    withRecord(thread(), 'recipient', { channel: 'D1', ts: '1.1', shown: 'posted' }, at)!,
    'approval:t_a1:U9',
    { channel: 'D9', ts: '9.1', shown: 'asked' },
    at,
  )!;
  const redrawn = withShown(posted, [
    { key: 'recipient', ts: '1.1', shown: 'accepted', was: { shown: 'posted' } },
    { key: 'approval:t_a1:U9', ts: '9.1', shown: 'voted', was: { shown: 'asked' } },
  ])!;
  expect(redrawn.slack).toEqual({ channel: 'D1', ts: '1.1', posted_at: at, shown: 'accepted' });
  expect(redrawn.slack_approvals!['approval:t_a1:U9']!.shown).toBe('voted');
  // Someone drew it since (a button's notice recorded 'verifying'): the sync's record gives way; an unconditional one does not.
  const noticed = withShown(posted, [{ key: 'recipient', ts: '1.1', shown: 'verifying' }])!;
  expect(
    withShown(noticed, [{ key: 'recipient', ts: '1.1', shown: 'accepted', was: { shown: 'posted' } }]),
  ).toBeUndefined();
  expect(
    withShown(noticed, [{ key: 'recipient', ts: '1.1', shown: 'accepted', was: { shown: 'verifying' } }])!.slack!.shown,
  ).toBe('accepted');
  // Another post under the key (a new DM), the same digest, or a key without a record (a reply): nothing to write.
  expect(withShown(posted, [{ key: 'recipient', ts: '7.7', shown: 'accepted' }])).toBeUndefined();
  expect(withShown(posted, [{ key: 'recipient', ts: '1.1', shown: 'posted' }])).toBeUndefined();
  expect(
    withShown(posted, [
      { key: 'sender', ts: '1.1', shown: 'x' },
      { key: 'recipient:1', ts: '1.1', shown: 'x' },
    ]),
  ).toBeUndefined();
});
