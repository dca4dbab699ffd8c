// The teammate directory's passes over its change log are shared by calls made together, and never go stale: a call
// never gets a pass that was sent before it began, so a card write that finished before the call is always seen.
import { FreshReads } from '../../relay-core/store/agent-directory';

/** A marker read the test answers by hand; `sent` lists the marker value as it was when each read went out. */
function manualMarker() {
  let value = 'v1';
  const sent: string[] = [];
  const answers: Array<() => void> = [];
  const reads = new FreshReads<string>(() => {
    const seen = value;
    sent.push(seen);
    return new Promise((resolve) => answers.push(() => resolve(seen)));
  });
  return {
    reads,
    sent,
    set: (next: string) => (value = next),
    /** Answers the oldest read still out, then lets the callers' continuations run. */
    answer: async () => {
      answers.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

test('one call alone sends one read', async () => {
  const m = manualMarker();
  const call = m.reads.read();
  await m.answer();
  await expect(call).resolves.toBe('v1');
  expect(m.sent).toEqual(['v1']);
});

test('calls made while a read is out share one next read, sent after the first is back: two reads for six calls', async () => {
  const m = manualMarker();
  const first = m.reads.read();
  const together = Array.from({ length: 5 }, () => m.reads.read());
  expect(m.sent).toHaveLength(1);
  await m.answer();
  await expect(first).resolves.toBe('v1');
  expect(m.sent).toHaveLength(2);
  await m.answer();
  await expect(Promise.all(together)).resolves.toEqual(Array(5).fill('v1'));
  expect(m.sent).toHaveLength(2);
});

test('a write that finished before a call is seen by it, even while an older read is still out', async () => {
  const m = manualMarker();
  const before = m.reads.read();
  // The card write lands while that read is out (it went out before the write: it may or may not see it).
  m.set('v2');
  const after = m.reads.read();
  await m.answer();
  await expect(before).resolves.toBe('v1');
  await m.answer();
  await expect(after).resolves.toBe('v2');
  expect(m.sent).toEqual(['v1', 'v2']);
});

test('a failed read fails only its own callers; the calls waiting on the next read still get one', async () => {
  let fail = true;
  let reads = 0;
  const markers = new FreshReads<string>(async () => {
    reads += 1;
    if (fail) {
      fail = false;
      throw new Error('server went away');
    }
    return 'v1';
  });
  const first = markers.read();
  const next = markers.read();
  await expect(first).rejects.toThrow('server went away');
  await expect(next).resolves.toBe('v1');
  expect(reads).toBe(2);
});
