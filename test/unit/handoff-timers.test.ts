// Handoff timers (relay-core/service/handoff-timers.ts) on in-memory ports and a test clock: every thread write arms
// (settles) the thread's next step on the document it stores, a step's job fires it once when due and arms the next,
// an early or stale job changes nothing, Snooze moves the next reminder, an answered question stops the reminders
// and the escalation, and the sweep runs what is due and adds the jobs of what comes within the horizon. The same
// on FerretDB and BullMQ: test/integration/handoff-timers.test.ts, timer-*.test.ts, unclaimed-timers.test.ts.
import pino from 'pino';
import type { AgentDoc, ThreadDoc } from '../../relay-core/domain/documents';
import { RelayError } from '../../relay-core/domain/errors';
import { armedTimer } from '../../relay-core/domain/timer-schedule';
import { HandoffTimers, type HandoffTimersDeps } from '../../relay-core/service/handoff-timers';
import type { TimerJob, TimerQueue } from '../../relay-core/service/timer-queue';
import { utcOnly } from '../../relay-core/service/time-zones';
import { InMemoryThreads } from '../fakes/in-memory-threads';
import { InMemoryTimerDue } from '../fakes/in-memory-timer-due';
import { agent, NOW, recordingOutbox } from '../fakes/use-case-ports';
import { threadDocAt } from '../helpers/thread-docs';

const MIN = 60_000;
const HOUR = 60 * MIN;
const sam = agent('sam@acme');
const rita: AgentDoc = { ...agent('rita@acme'), lead: 'lee@acme' } as AgentDoc;
const lee = { ...agent('lee@acme'), slack_user_id: 'U0LEE' };

const SETTINGS: HandoffTimersDeps['settings'] = {
  remindAfterMs: HOUR,
  remindAgainMs: 4 * HOUR,
  escalateAfterMs: 3 * HOUR,
  staleAfterMs: 24 * HOUR,
  expireAfterMs: 48 * HOUR,
  escalateIntents: ['ask_question'],
  workingHours: null,
  sweepIntervalMs: MIN,
};

/** The queue's jobs as the timers add and promote them. */
function recordingQueue() {
  const armed: Array<{ job: TimerJob; delayMs: number }> = [];
  const firedNow: TimerJob[] = [];
  const state = { lost: false, marked: 0, fireNow: 'promoted' as Awaited<ReturnType<TimerQueue['fireNow']>> };
  const queue: TimerQueue = {
    arm: async (job, delayMs) => void armed.push({ job, delayMs }),
    fireNow: async (job) => {
      firedNow.push(job);
      return state.fireNow;
    },
    lostJobs: async () => state.lost,
    markArmed: async () => void (state.marked += 1),
  };
  return { queue, armed, firedNow, state };
}

function setup(settings: Partial<HandoffTimersDeps['settings']> = {}) {
  const threads = new InMemoryThreads();
  const outbox = recordingOutbox();
  const { queue, armed, firedNow, state } = recordingQueue();
  const clock = { at: NOW.getTime(), now: () => new Date(clock.at) };
  const team = new Map([sam, rita, lee].map((a) => [a.handle, a]));
  /** Runs once just before the timers' next thread write: another write landing between their read and their write. */
  const between: { write: (() => Promise<unknown>) | null } = { write: null };
  const timers = new HandoffTimers({
    store: {
      readThread: (id) => threads.readThread(id),
      readThreadFrom: (id) => threads.readThreadFrom(id),
      writeThreadTimer: (id, change) => threads.writeThreadTimer(id, change),
      writeThread: async (id, change) => {
        const write = between.write;
        between.write = null;
        await write?.();
        return threads.writeThread(id, change);
      },
    },
    due: new InMemoryTimerDue(threads),
    teammates: { get: async (handle) => team.get(handle) ?? null, cached: (handle) => team.get(handle) },
    queue,
    outbox,
    zones: utcOnly,
    clock,
    log: pino({ level: 'silent' }),
    settings: { ...SETTINGS, ...settings },
  });
  // As the relay wires it (scripts/relay.ts): every thread write arms the next step on what it stores.
  threads.settleThreadsWith((before, next) => timers.settle(before, next));
  /** A pending handoff from sam to rita created at NOW, as a create stores it (its first step armed). */
  const created = async (over: Partial<ThreadDoc> = {}) => {
    const doc = await timers.withFirstStep({ ...threadDocAt(sam.handle, rita.handle, 'pending', NOW), ...over });
    await threads.insert(doc);
    return doc;
  };
  const step = async (id: string) => armedTimer((await threads.readThread(id))!);
  const jobOf = async (id: string): Promise<TimerJob> => {
    const timer = (await step(id))!;
    return { thread_id: id, step: timer.step, attempt: timer.attempt };
  };
  const events = () => outbox.published.map((e) => e.type);
  return { threads, timers, clock, armed, firedNow, state, between, created, step, jobOf, events };
}

const at = (ms: number) => new Date(NOW.getTime() + ms);

describe('arming on a thread write (settle)', () => {
  test("a create holds its first step; each write re-arms it for the thread's new state, with no job yet", async () => {
    const { threads, created, step, armed } = setup();
    const doc = await created();
    expect(await step(doc._id)).toMatchObject({ step: 'remind-1', due_at: at(HOUR), attempt: 0, status: 'pending' });
    const accepted = await threads.writeThread(doc._id, (d) => ({ ...d, status: 'accepted', accepted_at: at(MIN) }));
    expect(armedTimer(accepted.after!)).toMatchObject({ step: 'stale', due_at: at(MIN + 24 * HOUR), attempt: 1 });
    // Armed by that very write (no arm job needed): the step is days away.
    expect(accepted.after!.timer_version).toBe(accepted.after!.version);
    const completed = await threads.writeThread(doc._id, (d) => ({ ...d, status: 'completed' }));
    expect(armedTimer(completed.after!)).toBeNull();
    expect(armed).toEqual([]);
  });

  test('a write that changes nothing the schedule reads keeps the armed step as it is', async () => {
    const { threads, created, step } = setup();
    const doc = await created();
    const first = await step(doc._id);
    await threads.writeThread(doc._id, (d) => ({ ...d, metadata: { note: 'x' } }));
    expect(await step(doc._id)).toEqual(first);
  });

  test('arm() adds the delayed job of a step due within the horizon, once per attempt', async () => {
    const { timers, clock, created, armed } = setup();
    const doc = await created();
    clock.at = at(HOUR - MIN).getTime();
    expect(await timers.arm(doc._id)).toMatchObject({ step: 'remind-1', attempt: 0 });
    expect(armed).toEqual([{ job: { thread_id: doc._id, step: 'remind-1', attempt: 0 }, delayMs: MIN }]);
  });

  test('arm() of a step still days away adds no job (a sweep adds it when it comes near)', async () => {
    const { timers, created, armed } = setup();
    const doc = await created();
    await timers.arm(doc._id);
    expect(armed).toEqual([]);
  });
});

describe('firing (fire)', () => {
  test('a due reminder fires once: recorded on the thread with thread.reminded, the next reminder armed', async () => {
    const { timers, threads, clock, created, step, jobOf, events } = setup();
    const doc = await created();
    const job = await jobOf(doc._id);
    clock.at = at(HOUR).getTime();
    expect(await timers.fire(job)).toBe('fired');
    const stored = (await threads.readThread(doc._id))!;
    expect(stored.timers?.fired).toEqual({ 'remind-1': at(HOUR) });
    expect(events()).toEqual(['thread.reminded']);
    expect(await step(doc._id)).toMatchObject({ step: 'remind-2', due_at: at(5 * HOUR) });
    // The same job again (a retry, a duplicate): its step is not the next one any more.
    expect(await timers.fire(job)).toBe('superseded');
    expect(events()).toEqual(['thread.reminded']);
  });

  test("a transition that lands between the job's read and its write wins: nothing fires, the new step is armed", async () => {
    const { timers, threads, clock, between, created, step, jobOf, events } = setup();
    const doc = await created();
    const job = await jobOf(doc._id);
    clock.at = at(HOUR).getTime();
    between.write = () => threads.writeThread(doc._id, (d) => ({ ...d, status: 'accepted', accepted_at: at(HOUR) }));
    expect(await timers.fire(job)).toBe('superseded');
    expect((await threads.readThread(doc._id))!.timers?.fired ?? {}).toEqual({});
    expect(events()).toEqual([]);
    expect(await step(doc._id)).toMatchObject({ step: 'stale', status: 'accepted' });
  });

  test('a job that runs early changes nothing but arms the step anew (attempt + 1)', async () => {
    const { timers, clock, created, step, jobOf, events, armed } = setup();
    const doc = await created();
    clock.at = at(HOUR - MIN).getTime();
    expect(await timers.fire(await jobOf(doc._id))).toBe('not_due');
    expect(events()).toEqual([]);
    expect(await step(doc._id)).toMatchObject({ step: 'remind-1', attempt: 1, due_at: at(HOUR) });
    expect(armed).toEqual([{ job: { thread_id: doc._id, step: 'remind-1', attempt: 1 }, delayMs: MIN }]);
  });

  test("a question's escalation goes to the recipient's lead when due; expiry then ends the handoff", async () => {
    const { timers, threads, clock, created, step, jobOf, events } = setup({ remindAfterMs: null });
    const doc = await created({ intent: 'ask_question' });
    clock.at = at(3 * HOUR).getTime();
    expect(await timers.fire(await jobOf(doc._id))).toBe('fired');
    expect((await threads.readThread(doc._id))!.timers?.escalated_to).toEqual({
      kind: 'lead',
      handle: 'lee@acme',
      slack: 'U0LEE',
    });
    const expire = await jobOf(doc._id);
    expect(expire.step).toBe('expire');
    clock.at = at(48 * HOUR).getTime();
    expect(await timers.fire(expire)).toBe('fired');
    expect(await threads.readThread(doc._id)).toMatchObject({ status: 'expired' });
    expect(await step(doc._id)).toBeNull();
    expect(events()).toEqual(['thread.escalated', 'thread.expired']);
  });

  test('a question answered stops its reminders and escalation: only expiry is left, a reminder job is stale', async () => {
    const { timers, threads, clock, created, step, events } = setup();
    const doc = await created({ intent: 'ask_question' });
    const reminder = { thread_id: doc._id, step: 'remind-1' as const, attempt: 0 };
    await threads.writeThread(doc._id, (d) => ({ ...d, answered_at: at(MIN) }));
    expect(await step(doc._id)).toMatchObject({ step: 'expire', due_at: at(48 * HOUR) });
    clock.at = at(3 * HOUR).getTime();
    expect(await timers.fire(reminder)).toBe('superseded');
    expect(events()).toEqual([]);
  });
});

describe('snooze', () => {
  test("the recipient's snooze moves the next reminder to the chosen time", async () => {
    const { timers, clock, created, step } = setup();
    const doc = await created();
    clock.at = at(30 * MIN).getTime();
    expect(await timers.snooze(rita, doc._id, '1h', 'slack')).toEqual(at(90 * MIN));
    expect(await step(doc._id)).toMatchObject({ step: 'remind-1', due_at: at(90 * MIN) });
  });

  test('refusals: the sender may not snooze, nor anyone an accepted handoff; nothing changes', async () => {
    const { timers, threads, created } = setup();
    const doc = await created();
    const writes = threads.writes;
    const notYours = await timers.snooze(sam, doc._id, '1h', 'slack').catch((e: unknown) => e);
    expect(notYours).toBeInstanceOf(RelayError);
    expect(notYours).toMatchObject({
      code: 'not_authorized_transition',
      message: "Only the recipient (rita@acme) can snooze this handoff's reminders",
    });
    await threads.writeThread(doc._id, (d) => ({ ...d, status: 'accepted', accepted_at: NOW }));
    const accepted = await timers.snooze(rita, doc._id, '1h', 'slack').catch((e: unknown) => e);
    expect(accepted).toMatchObject({
      code: 'invalid_transition',
      message: 'The handoff is accepted; there are no reminders to snooze',
    });
    expect(threads.writes).toBe(writes + 1);
  });
});

describe('the sweep', () => {
  test('runs the due steps (their jobs promoted) and adds the jobs of steps within the horizon, nothing else', async () => {
    const { timers, clock, created, firedNow, armed } = setup();
    const due = await created();
    clock.at = at(30 * MIN).getTime();
    const near = await created({ created_at: at(30 * MIN) });
    const far = await created({ created_at: at(10 * HOUR) });
    clock.at = at(HOUR + 30_000).getTime();
    expect(await timers.sweep()).toBe(1);
    expect(firedNow).toEqual([{ thread_id: due._id, step: 'remind-1', attempt: 0 }]);
    expect(armed.map((a) => a.job.thread_id)).toEqual([]);
    // The look-ahead goes by whole minutes: at 89 min the steps due before 91 min get their jobs.
    clock.at = at(89 * MIN).getTime();
    await timers.sweep();
    expect(armed).toEqual([{ job: { thread_id: near._id, step: 'remind-1', attempt: 0 }, delayMs: MIN }]);
    expect(armed.some((a) => a.job.thread_id === far._id)).toBe(false);
  });

  test('a due job that already ran without moving the step on is armed anew and run', async () => {
    const { timers, clock, created, firedNow, state, step } = setup();
    const doc = await created();
    state.fireNow = 'ran';
    clock.at = at(2 * HOUR).getTime();
    expect(await timers.sweep()).toBe(1);
    expect(await step(doc._id)).toMatchObject({ step: 'remind-1', attempt: 1 });
    expect(firedNow).toEqual([
      { thread_id: doc._id, step: 'remind-1', attempt: 0 },
      { thread_id: doc._id, step: 'remind-1', attempt: 1 },
    ]);
  });

  test('after the queue lost its jobs every armed step within the horizon is armed again, and the queue marked', async () => {
    const { timers, clock, created, armed, state } = setup();
    const doc = await created();
    await created({ created_at: at(10 * HOUR) });
    state.lost = true;
    clock.at = at(HOUR - MIN).getTime();
    expect(await timers.sweep()).toBe(1);
    // The look-ahead may add it again: the queue keeps one job per id.
    expect(new Set(armed.map((a) => JSON.stringify(a)))).toEqual(
      new Set([JSON.stringify({ job: { thread_id: doc._id, step: 'remind-1', attempt: 0 }, delayMs: MIN })]),
    );
    expect(state.marked).toBe(1);
  });
});
