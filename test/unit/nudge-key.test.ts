// Which post ledger key a press of the escalation DM's Nudge posts under (bot/listeners/actions/timer-buttons.ts).
import type { SlackPendingPost, ThreadDoc } from '../../relay-core/domain/documents';
import { NUDGE_REPEAT_WINDOW_S, nudgeKeyFor } from '../../bot/listeners/actions/timer-buttons';

const thread = (over: Partial<ThreadDoc> = {}) => ({ _id: 't', slack: null, ...over }) as ThreadDoc;
const pending = { marker: 'm', lease: 'l', channel: 'D1', thread_ts: '1.0', owner: 'o' } as SlackPendingPost;
const posted = 1_800_000_000;

test('the first press is nudge-1', () => {
  expect(nudgeKeyFor(thread(), posted)).toBe('recipient:t:nudge-1');
  // Other notices and replies under the DM do not count.
  expect(nudgeKeyFor(thread({ slack_replies: { 'recipient:t:remind-1': '1.0', 'recipient:3': '2.0' } }), posted)).toBe(
    'recipient:t:nudge-1',
  );
});

test('a press while the last nudge is being posted, or within the window after it, is that nudge', () => {
  expect(nudgeKeyFor(thread({ slack_pending: { 'recipient:t:nudge-1': pending } }), posted + 3_600)).toBe(
    'recipient:t:nudge-1',
  );
  const once = thread({ slack_replies: { 'recipient:t:nudge-1': `${posted}.000100` } });
  expect(nudgeKeyFor(once, posted + 1)).toBe('recipient:t:nudge-1');
  expect(nudgeKeyFor(once, posted + NUDGE_REPEAT_WINDOW_S - 1)).toBe('recipient:t:nudge-1');
});

test('a press once the window has passed is the next nudge, after the highest one', () => {
  const twice = thread({
    slack_replies: { 'recipient:t:nudge-1': `${posted - 7_200}.000000`, 'recipient:t:nudge-2': `${posted}.000000` },
  });
  expect(nudgeKeyFor(twice, posted + NUDGE_REPEAT_WINDOW_S)).toBe('recipient:t:nudge-3');
  expect(nudgeKeyFor(twice, posted + 60)).toBe('recipient:t:nudge-2');
});
