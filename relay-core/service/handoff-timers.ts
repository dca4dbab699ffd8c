// Handoff timers: arms each open thread's next step as a delayed job, fires it once when due, and sweeps after outages.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock';
import type { AgentDoc, EscalationTarget, OutboxEvent, ThreadDoc, TimerDoc, TimerStep } from '../domain/documents';
import { RelayError } from '../domain/errors';
import type { EventType } from '../domain/schemas';
import { applyTimerStep, nextTimerStep, RELAY_ACTOR, type DueStep, type TimerSettings } from '../domain/timer-schedule';
import { isKnownZone, snoozedUntil, type SnoozeChoice } from '../domain/working-hours';
import { isDuplicateKey, putById, type MongoStore } from '../store/mongo-store';
import { MINUTE_MS, minuteOf, timerDueFor, type TimerDue } from '../store/timer-due';
import type { Outbox } from './outbox';
import type { Teammates } from './teammates';
import type { TimeZones } from './time-zones';
import type { TimerJob, TimerQueue } from './timer-queue';

// The schedule itself is domain/timer-schedule.ts. Here:
// - arm(thread): after every event of the thread (a `verify` job the event publisher adds), the next step is
//   written to `timers` (one small document per open thread, `_id` = thread id) and a delayed job is added whose
//   id is thread + step + attempt. A final state removes the document.
// - armFirst(thread): the create arms the new thread's first step itself (it holds the document it writes): the step
//   worked out beside the thread insert, then, once the thread is stored, the due entry and the delayed job, then the
//   row (group-committed with the rows of concurrent creates: store.inserts.timers). Its `thread.created` event then
//   goes out without an arm job (EventThread.timer_armed): a create writes the row only after its job and due entry,
//   and any later event has its own job that re-reads the thread. Without a row (the create's arm failed, its zone
//   was not known yet, or its process died first and the outbox sweep published the event) the `thread.created` job
//   (armAfter) arms from the row if there is one, else in full from the thread.
// - fire(job): the job re-reads the thread and recomputes its next step with the injected clock: a step that is
//   not the next any more, or not due yet, changes nothing (it is armed again). A due step is one versioned
//   thread write that records it in `timers.fired` (so it can never fire twice) with its outbox event.
// - sweep(): finds the due timers through store/timer-due.ts (never by reading `timers` whole, never `threads`). A
//   due step whose job is missing (Redis lost it) or delayed is run now; after Redis came back empty every open
//   timer is read and armed again.

export interface HandoffTimersDeps {
  store: MongoStore;
  teammates: Teammates;
  queue: TimerQueue;
  outbox: Outbox;
  zones: TimeZones;
  clock: Clock;
  log: Logger;
  /** `sweepIntervalMs`: how often `sweep` runs (the jobs of later steps are added by it: JOB_HORIZON_SWEEPS). */
  settings: TimerSettings & { escalateChannel?: string; sweepIntervalMs?: number };
}

/**
 * A step's job is added to the queue when it comes due within this many sweep intervals (and never less than
 * MIN_JOB_HORIZON_MS): by the arm itself when it is that close already, else by the sweep that first sees it that
 * close. A step days away therefore costs no delayed job, and no wake-up of every worker waiting on the queue (BullMQ
 * moves the queue's marker on each delayed add), until it is about to fire; most never do (the handoff was answered).
 */
const JOB_HORIZON_SWEEPS = 2;
const MIN_JOB_HORIZON_MS = 2 * MINUTE_MS;
/** Rows a sweep's look-ahead reads at once. */
const AHEAD_READS = 20;

export type FireOutcome = 'fired' | 'not_due' | 'superseded' | 'no_timer';

/** The event a step records: a reminder and the accepted nudge are both `thread.reminded`. */
function eventOf(step: TimerStep): EventType {
  if (step === 'escalate') return 'thread.escalated';
  if (step === 'expire') return 'thread.expired';
  return 'thread.reminded';
}

/** The recipient's lead, once teammate cards carry one (issue 13's `lead`). */
function leadOf(recipient: AgentDoc | null): string | null {
  const lead = (recipient as (AgentDoc & { lead?: unknown }) | null)?.lead;
  return typeof lead === 'string' && lead ? lead : null;
}

export class HandoffTimers {
  private readonly dueTimers: TimerDue;
  private readonly horizonMs: number;
  /** The first minute whose noted steps this process's sweeps have not yet added jobs for (null: none swept yet). */
  private aheadFrom: number | null = null;

  constructor(private readonly deps: HandoffTimersDeps) {
    this.dueTimers = timerDueFor(deps.store);
    this.horizonMs = Math.max(JOB_HORIZON_SWEEPS * (deps.settings.sweepIntervalMs ?? MINUTE_MS), MIN_JOB_HORIZON_MS);
  }

  /**
   * Steps due before this (a minute's start) have their jobs added when armed; later ones wait in the due ledger
   * until a sweep's look-ahead reaches their minute (sweep). Whole minutes, as the ledger's buckets are.
   */
  private jobsBefore(now: Date): number {
    return minuteOf(now.getTime() + this.horizonMs);
  }

  /**
   * The step's delayed job, when it is due within the horizon (true: added); a later one's job is added by a sweep
   * (addAhead).
   */
  private async addJob(timer: TimerDoc, now: Date): Promise<boolean> {
    if (timer.due_at.getTime() >= this.jobsBefore(now)) return false;
    await this.deps.queue.arm(jobOf(timer), Math.max(0, timer.due_at.getTime() - now.getTime()));
    return true;
  }

  private async zoneOf(handle: string): Promise<{ zone: string; agent: AgentDoc | null }> {
    const agent = await this.deps.teammates.get(handle);
    const zone = agent ? await this.deps.zones.zoneOf(agent).catch(() => null) : null;
    return { zone: zone && isKnownZone(zone) ? zone : 'UTC', agent };
  }

  /** Whose working hours the thread's steps keep: an unclaimed handoff has no recipient yet, so its first candidate's. */
  private timedFor(thread: ThreadDoc): string {
    return thread.status === 'unclaimed' ? (thread.candidates?.[0] ?? thread.from) : thread.to;
  }

  private async next(thread: ThreadDoc): Promise<{ next: DueStep | null; zone: string }> {
    // Without working hours no step depends on a zone: nobody's is looked up.
    if (!this.deps.settings.workingHours) return { next: nextTimerStep(thread, this.deps.settings, 'UTC'), zone: 'UTC' };
    const { zone } = await this.zoneOf(this.timedFor(thread));
    return { next: nextTimerStep(thread, this.deps.settings, zone), zone };
  }

  /**
   * next() for a create, which must not wait on Slack for a zone: undefined when the zone is not remembered (it is
   * asked for meanwhile, for the next create; this thread's job arms it in full).
   */
  private async nextWithoutWaiting(thread: ThreadDoc): Promise<DueStep | null | undefined> {
    const { settings, teammates, zones } = this.deps;
    if (!settings.workingHours) return nextTimerStep(thread, settings, 'UTC');
    const agent = await teammates.get(this.timedFor(thread));
    const zone = agent ? zones.known(agent) : null;
    if (zone === undefined) {
      void zones.zoneOf(agent!).catch(() => null);
      return undefined;
    }
    return nextTimerStep(thread, settings, zone && isKnownZone(zone) ? zone : 'UTC');
  }

  /**
   * The new thread's first step, for the create that is writing `thread`: worked out now (no write), and the returned
   * function stores it once the thread is stored, while the thread's event goes on its queues: its due entry and
   * delayed job first (alone they are harmless: a job without a row fires nothing, a due entry is checked against the
   * row), then the row, so a row always has its due entry. So the create's thread insert (and its DM's job) waits for
   * no timer write. A duplicate row was written by a later event's arm and stays. Null: the thread has no step (every
   * step turned off), or its zone is not known yet.
   */
  async armFirst(thread: ThreadDoc): Promise<(() => Promise<void>) | null> {
    const { store, clock } = this.deps;
    const next = await this.nextWithoutWaiting(thread);
    if (!next) return null;
    const now = clock.now();
    const timer: TimerDoc = { _id: thread._id, step: next.step, due_at: next.due, attempt: 0, status: thread.status, armed_at: now };
    return async () => {
      await this.addJob(timer, now);
      try {
        await store.inserts.timers.insert(timer);
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
      }
    };
  }

  /**
   * The `verify` job after an event (`version`: the thread's once it was written). A `thread.created` job comes only
   * when the create did not say its first step was armed (armFirst); a row there all the same (the create's process
   * died after storing it) has its job added again, which is once.
   */
  async armAfter(threadId: string, event: EventType, version?: number): Promise<TimerDoc | null> {
    if (event === 'thread.created') {
      const row = await this.deps.store.timers.findOne({ _id: threadId });
      if (row) {
        await this.addJob(row, this.deps.clock.now());
        return row;
      }
    }
    return this.arm(threadId, { version });
  }

  /**
   * Arms the thread's next step (or drops its timer when none is left). `force` arms a new attempt even when
   * unchanged; `version`: the thread is read as of that version or later (store.readThreadFrom).
   */
  async arm(threadId: string, opts: { force?: boolean; version?: number } = {}): Promise<TimerDoc | null> {
    const { store, clock } = this.deps;
    const [thread, row] = await Promise.all([store.readThreadFrom(threadId, opts.version), store.timers.findOne({ _id: threadId })]);
    const next = thread ? (await this.next(thread)).next : null;
    if (!thread || !next) {
      if (row) await store.timers.deleteOne({ _id: threadId });
      return null;
    }
    const unchanged = row && row.step === next.step && row.status === thread.status && row.due_at.getTime() === next.due.getTime();
    let timer: TimerDoc;
    if (unchanged && !opts.force) {
      timer = row;
    } else {
      timer = { _id: threadId, step: next.step, due_at: next.due, attempt: row ? row.attempt + 1 : 0, status: thread.status, armed_at: clock.now() };
      // The row right after the reads: two arms of one thread racing (the jobs of two events) then write it as near
      // as can be in the order they read the thread; the due entry only matters once the step is due.
      await putById(store.timers, threadId, { step: timer.step, due_at: timer.due_at, attempt: timer.attempt, status: timer.status, armed_at: timer.armed_at });
    }
    await this.addJob(timer, clock.now());
    return timer;
  }

  /** Runs one timer job: records its step on the thread once, when it is still the next one and due. */
  async fire(job: TimerJob): Promise<FireOutcome> {
    const { store, clock, log } = this.deps;
    const row = await store.timers.findOne({ _id: job.thread_id });
    if (!row) return 'no_timer';
    if (row.step !== job.step || row.attempt !== job.attempt) return 'superseded';
    const thread = await store.readThread(job.thread_id);
    const { next, zone } = thread ? await this.next(thread) : { next: null, zone: 'UTC' };
    if (!thread || !next || next.step !== job.step) {
      await this.arm(job.thread_id);
      return 'superseded';
    }
    const now = clock.now();
    if (next.due > now) {
      // Early (the due time moved, or the relay's clock is behind the queue's): armed anew for the new time.
      await this.arm(job.thread_id, { force: true });
      return 'not_due';
    }
    const escalation = job.step === 'escalate' ? await this.escalationTarget(thread) : null;
    const event: OutboxEvent = { id: randomUUID(), type: eventOf(job.step), at: now, by: RELAY_ACTOR, via: 'api' };
    let applied = false;
    await this.deps.outbox.recording(job.thread_id, event, async (inOutbox) => {
      await inOutbox;
      const { after } = await store.writeThread(job.thread_id, (doc) => {
        applied = false;
        // The very version written is judged again: a transition or another job in between wins.
        if (doc.status !== thread.status || doc.timers?.fired?.[job.step]) return undefined;
        const again = nextTimerStep(doc, this.deps.settings, zone);
        if (again?.step !== job.step) return undefined;
        applied = true;
        const changed = applyTimerStep(doc, job.step, now, escalation, this.deps.settings);
        return { ...changed, outbox: [...doc.outbox, event] };
      });
      return after;
    });
    if (!applied) {
      await this.arm(job.thread_id);
      return 'superseded';
    }
    log.info({ thread_id: job.thread_id, step: job.step, escalated_to: escalation?.kind }, 'handoff timer fired');
    return 'fired';
  }

  /**
   * Where an escalation goes: the recipient's lead (linked and active), else the configured channel, else the
   * sender. An unclaimed handoff has no recipient (so no lead): the configured channel, else the sender (Reassign).
   */
  private async escalationTarget(thread: ThreadDoc): Promise<EscalationTarget> {
    const recipient = thread.status === 'unclaimed' ? null : await this.deps.teammates.get(thread.to);
    const leadHandle = leadOf(recipient);
    const lead = leadHandle ? await this.deps.teammates.get(leadHandle) : null;
    if (lead && lead.status === 'active' && lead.slack_user_id && lead.handle !== thread.to) return { kind: 'lead', handle: lead.handle, slack: lead.slack_user_id };
    if (this.deps.settings.escalateChannel) return { kind: 'channel', slack: this.deps.settings.escalateChannel };
    const sender = await this.deps.teammates.get(thread.from);
    return { kind: 'sender', handle: thread.from, slack: sender?.slack_user_id ?? null };
  }

  /**
   * Every due step runs now (its delayed job promoted, or added again when Redis lost it), found through the `due`
   * index on `timers.due_at` (store/timer-due.ts), so a sweep with nothing due reads no row however many threads
   * are open; then the steps that came within
   * the horizon get their jobs (addAhead). Only after Redis lost its jobs does it read every open timer, to arm again
   * each one within the horizon. Returns how many it ran or re-armed.
   */
  async sweep(): Promise<number> {
    const { store, queue, clock, log } = this.deps;
    const lost = await queue.lostJobs();
    const now = clock.now();
    let touched = 0;
    const seen = new Set<string>();
    if (lost) {
      for await (const row of store.timers.find({})) {
        seen.add(row._id);
        if (row.due_at <= now) touched += await this.runDue(row, now);
        else if (await this.addJob(row, now)) touched += 1;
      }
    }
    for (const id of await this.dueTimers.due(now)) {
      if (seen.has(id)) continue;
      seen.add(id);
      const row = await store.timers.findOne({ _id: id });
      if (row && row.due_at <= now) touched += await this.runDue(row, now);
    }
    await this.addAhead(now);
    if (lost) {
      await queue.markArmed();
      log.info({ rearmed: touched }, 'timers armed again after the queue lost its jobs');
    }
    return touched;
  }

  /**
   * Adds the jobs of the steps that came within the horizon since this process's last sweep: the ledger's minutes
   * from there up to jobsBefore(now) (from the current minute on this process's first sweep: an earlier one's steps
   * are due, and `due` runs them). Each row is read again, as its step may have moved on; a job added twice is once.
   */
  private async addAhead(now: Date): Promise<void> {
    const until = this.jobsBefore(now);
    const from = Math.max(this.aheadFrom ?? 0, minuteOf(now.getTime()));
    if (from < until) {
      const ids = await this.dueTimers.ahead(from, until);
      for (let i = 0; i < ids.length; i += AHEAD_READS) {
        await Promise.all(
          ids.slice(i, i + AHEAD_READS).map(async (id) => {
            const row = await this.deps.store.timers.findOne({ _id: id });
            if (row && row.due_at > now) await this.addJob(row, now);
          }),
        );
      }
    }
    this.aheadFrom = Math.max(this.aheadFrom ?? 0, until);
  }

  /** A due row's job made to run now; 1 when the sweep did something for it. */
  private async runDue(row: TimerDoc, now: Date): Promise<number> {
    const { queue } = this.deps;
    const outcome = await queue.fireNow(jobOf(row));
    // The job ran and the timer still names it: its run did not get to arm the next step (a crash, Redis down).
    if (outcome === 'ran') {
      const rearmed = await this.arm(row._id, { force: true });
      if (rearmed && rearmed.due_at <= now) await queue.fireNow(jobOf(rearmed));
    }
    // Not run yet: the row stays due, so the next sweeps look at it again until its run moves the timer on.
    return outcome === 'waiting' ? 0 : 1;
  }

  /** The recipient's Snooze: the next reminder moves to the chosen time (in their zone); returns it. */
  async snooze(caller: AgentDoc, threadId: string, choice: SnoozeChoice): Promise<Date> {
    const { store, clock } = this.deps;
    const now = clock.now();
    const { zone } = await this.zoneOf(caller.handle);
    const until = snoozedUntil(choice, now, this.deps.settings.workingHours, zone);
    let refused: RelayError | null = null;
    await store.writeThread(threadId, (doc) => {
      refused = null;
      if (doc.to !== caller.handle) refused = new RelayError('not_authorized_transition', `Only the recipient (${doc.to}) can snooze this handoff's reminders`);
      else if (doc.status !== 'pending') refused = new RelayError('invalid_transition', `The handoff is ${doc.status}; there are no reminders to snooze`, { status: doc.status });
      if (refused) return undefined;
      return { ...doc, timers: { fired: {}, ...doc.timers, snoozed_until: until } };
    });
    if (refused) throw refused;
    await this.arm(threadId).catch((error: Error) => this.deps.log.warn({ thread_id: threadId, err: error.message }, 'snooze not armed yet; the timer sweep will'));
    return until;
  }
}

function jobOf(timer: Pick<TimerDoc, '_id' | 'step' | 'attempt'>): TimerJob {
  return { thread_id: timer._id, step: timer.step, attempt: timer.attempt };
}
