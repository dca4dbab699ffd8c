// The due steps' contract (relay-core/store/timer-due.ts TimerDue): what the timers' sweep (service/handoff-timers.ts)
// relies on. Run against the in-memory fake (test/unit/) and IndexedTimerDue on the real server (test/integration/).
// Each test looks only at the threads it stored: the real one shares its database among the tests of a file.
import type { ThreadDoc, TimerDoc, TimerStep } from '../../relay-core/domain/documents';
import { withArmedTimer } from '../../relay-core/domain/timer-schedule';
import type { TimerDue } from '../../relay-core/store/timer-due';
import { threadDocAt } from '../helpers/thread-docs';

export interface TimerDueUnderTest {
  due: TimerDue;
  /** Stores a thread as the relay's writes leave one (its armed step on `next_timer` and `next_due_at`). */
  insert(doc: ThreadDoc): Promise<void>;
}

const MINUTE = 60_000;
let base = Date.UTC(2026, 5, 1);

/** A pending thread whose `step` is armed due at `dueAt` (null: no step armed). */
function armed(dueAt: number | null, step: TimerStep = 'remind-1'): ThreadDoc {
  const doc = threadDocAt('a@acme', 'b@acme', 'pending', new Date(base));
  if (dueAt === null) return doc;
  const timer: TimerDoc = {
    _id: doc._id,
    step,
    due_at: new Date(dueAt),
    attempt: 2,
    status: 'pending',
    armed_at: new Date(base),
  };
  return withArmedTimer(doc, timer, 1);
}

const ids = (timers: TimerDoc[], mine: ThreadDoc[]) =>
  timers
    .filter((t) => mine.some((doc) => doc._id === t._id))
    .map((t) => t._id)
    .sort();
const idsOf = (docs: ThreadDoc[]) => docs.map((doc) => doc._id).sort();

export function timerDueContract(name: string, subject: () => TimerDueUnderTest): void {
  describe(`due timer steps contract: ${name}`, () => {
    beforeEach(() => {
      // Each test in a day of its own, later than the last one's.
      base += 24 * 60 * MINUTE;
    });

    test('due(now) answers the steps due at or before now, as armed, and neither later ones nor unarmed threads', async () => {
      const { due, insert } = subject();
      const now = base + 30 * MINUTE;
      const early = armed(now - MINUTE, 'escalate');
      const exact = armed(now);
      const later = armed(now + 1);
      const none = armed(null);
      for (const doc of [early, exact, later, none]) await insert(doc);
      const got = await due.due(new Date(now));
      expect(ids(got, [early, exact, later, none])).toEqual(idsOf([early, exact]));
      expect(got.find((t) => t._id === early._id)).toEqual({
        _id: early._id,
        step: 'escalate',
        due_at: new Date(now - MINUTE),
        attempt: 2,
        status: 'pending',
        armed_at: new Date(base),
      });
    });

    test('ahead(from, until) answers the steps due from `from` up to, not including, `until`', async () => {
      const { due, insert } = subject();
      const from = base + 10 * MINUTE;
      const until = from + 3 * MINUTE;
      const before = armed(from - 1);
      const first = armed(from);
      const inside = armed(from + 2 * MINUTE + 59_999);
      const atUntil = armed(until);
      for (const doc of [before, first, inside, atUntil]) await insert(doc);
      expect(ids(await due.ahead(from, until), [before, first, inside, atUntil])).toEqual(idsOf([first, inside]));
    });

    test('all() answers every armed step, due or not, and no unarmed thread', async () => {
      const { due, insert } = subject();
      const past = armed(base - 5 * MINUTE);
      const future = armed(base + 400 * 24 * 60 * MINUTE, 'expire');
      const none = armed(null);
      for (const doc of [past, future, none]) await insert(doc);
      const got: TimerDoc[] = [];
      for await (const timer of due.all()) got.push(timer);
      expect(ids(got, [past, future, none])).toEqual(idsOf([past, future]));
    });
  });
}
