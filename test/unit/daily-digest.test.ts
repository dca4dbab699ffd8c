// The daily digest's pure parts: when a person's digest is due in their time zone, and the message within Slack's limits.
import { randomUUID } from 'node:crypto';
import { digestDueDay } from '../../bot/digest/local-time';
import { localMoment } from '../../relay-core/domain/local-time';
import { dailyDigest, DIGEST_SENT_MAX, DIGEST_WAITING_MAX } from '../../bot/views/daily-digest';
import { checkBlocks } from '../../scripts/fake-slack/block-limits';
import type { ListItem } from '../../relay-core/service/wire-views';

const AT = { hour: 9, minute: 30 };

describe('digestDueDay', () => {
  test('is the local day once the local hour has come, on weekdays only', () => {
    // Tuesday 2026-12-01 08:29 UTC = 09:29 Berlin (CET): not yet; 08:30 UTC: due; New York is still at night.
    expect(digestDueDay(new Date('2026-12-01T08:29:00Z'), 'Europe/Berlin', AT)).toBeNull();
    expect(digestDueDay(new Date('2026-12-01T08:30:00Z'), 'Europe/Berlin', AT)).toBe('2026-12-01');
    expect(digestDueDay(new Date('2026-12-01T08:30:00Z'), 'America/New_York', AT)).toBeNull();
    expect(digestDueDay(new Date('2026-12-01T14:30:00Z'), 'America/New_York', AT)).toBe('2026-12-01');
    // Until local midnight; then the next day, which for Tokyo is already Wednesday.
    expect(digestDueDay(new Date('2026-12-01T22:59:00Z'), 'Europe/Berlin', AT)).toBe('2026-12-01');
    expect(digestDueDay(new Date('2026-12-01T23:00:00Z'), 'Europe/Berlin', AT)).toBeNull();
    expect(digestDueDay(new Date('2026-12-01T00:30:00Z'), 'Asia/Tokyo', AT)).toBe('2026-12-01');
  });

  test('weekends are local: Friday evening in New York is Saturday in Tokyo', () => {
    expect(digestDueDay(new Date('2026-12-05T10:00:00Z'), 'Europe/Berlin', AT)).toBeNull(); // Saturday
    expect(digestDueDay(new Date('2026-12-04T23:00:00Z'), 'America/Los_Angeles', AT)).toBe('2026-12-04'); // Friday 15:00
    expect(digestDueDay(new Date('2026-12-04T23:00:00Z'), 'Asia/Tokyo', AT)).toBeNull(); // Saturday 08:00
  });

  test('follows daylight saving time (Berlin in summer is UTC+2)', () => {
    expect(digestDueDay(new Date('2026-07-01T07:29:00Z'), 'Europe/Berlin', AT)).toBeNull();
    expect(digestDueDay(new Date('2026-07-01T07:30:00Z'), 'Europe/Berlin', AT)).toBe('2026-07-01');
  });

  test('an unknown zone is never due', () => {
    expect(localMoment(new Date(), 'Mars/Olympus')).toBeNull();
    expect(digestDueDay(new Date(), 'Mars/Olympus', AT)).toBeNull();
  });
});

function item(n: number, over: Partial<ListItem> = {}): ListItem {
  const party = (handle: string) => ({ handle, name: handle.split('@')[0]! }) as ListItem['sender'];
  return {
    thread_id: randomUUID(),
    sender: party('sam@acme'),
    recipient: party('ana@acme'),
    summary_preview: `Item ${n}: ${'x'.repeat(190)}`,
    intent: 'inform',
    status: 'pending',
    unread_messages: 0,
    created_at: new Date(1_700_000_000_000 + n * 1000).toISOString(),
    updated_at: new Date(1_700_000_000_000 + n * 1000).toISOString(),
    ...over,
  };
}

describe('dailyDigest', () => {
  const inboxUrl = (id: string) => `https://relay.example.com/inbox/${id}?as=ana%40acme&sig=${'s'.repeat(43)}`;

  test('nothing to say: no message', () => {
    expect(dailyDigest({ handle: 'ana@acme', waiting: [], sent: [], inboxUrl })).toBeNull();
  });

  test('many items stay within Slack’s message limits, in the order given, and count what did not fit', () => {
    const waiting = Array.from({ length: 40 }, (_, i) => item(i));
    const sent = Array.from({ length: 30 }, (_, i) => item(100 + i, { status: 'accepted' }));
    const message = dailyDigest({ handle: 'ana@acme', waiting, sent, inboxUrl })!;
    expect(checkBlocks(message.blocks, 'message')).toBeNull();
    const shown = message.blocks
      .filter((b) => String(b.block_id ?? '').startsWith('thread_'))
      .map((b) => String(b.block_id).slice(7));
    expect(shown.length).toBeLessThanOrEqual(DIGEST_WAITING_MAX + DIGEST_SENT_MAX);
    expect(shown.slice(0, 3)).toEqual(waiting.slice(0, 3).map((i) => i.thread_id));
    expect(JSON.stringify(message.blocks)).toMatch(/…and \d+ more/);
    expect(message.text).toBe('Daily handoff digest: 40 waiting on you, 30 you are waiting on.');
  });

  test('an unclaimed handoff the person is a candidate for carries Claim (the Claim card’s action), not Accept or Reply', () => {
    const unclaimed = item(1, { status: 'unclaimed' });
    const message = dailyDigest({ handle: 'ana@acme', waiting: [unclaimed], sent: [], inboxUrl })!;
    const row = message.blocks.find((b) => b.block_id === `thread_${unclaimed.thread_id}`) as any;
    const ids = row.elements.map((e: any) => e.action_id);
    expect(ids).toEqual(['handoff_claim', 'handoff_open_inbox']);
    expect(JSON.parse(row.elements[0].value)).toEqual({ t: unclaimed.thread_id, s: 'unclaimed' });
  });

  test('teammate text is escaped: a summary cannot ping the channel', () => {
    const message = dailyDigest({
      handle: 'ana@acme',
      waiting: [item(1, { summary_preview: '<!channel> look <https://evil.example|here>' })],
      sent: [],
      inboxUrl,
    })!;
    expect(JSON.stringify(message.blocks)).not.toContain('<!channel>');
  });
});
