// Handoff timers: arms each open thread's next step as a delayed job, fires it once when due, and sweeps after outages.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock';
import type { AgentDoc, EscalationTarget, OutboxEvent, ThreadDoc, TimerDoc, TimerStep } from '../domain/documents';
import { RelayError } from '../domain/errors';
import type { EventType, Surface } from '../domain/schemas';
import {
  applyTimerStep,
  armedTimer,
  nextTimerStep,
  RELAY_ACTOR,
  sameTimer,
  withArmedTimer,
  type DueStep,
  type TimerSettings,
} from '../domain/timer-schedule';
import { withTeamSettings, type TeamSettings } from '../domain/team-settings';
import { isKnownZone } from '../domain/local-time';
import { snoozedUntil, type SnoozeChoice } from '../domain/working-hours';
import type { ThreadWriter } from '../domain/thread-writer';
import type { Change, VersionedWrite } from '../store/thread-writes';
import { MINUTE_MS, minuteOf, type TimerDue } from '../store/timer-due';
import type { Outbox } from './outbox';
import type { Teammates } from './teammates';
import type { TimeZones } from './time-zones';
import type { TimerJob, TimerQueue } from './timer-queue';

// The schedule itself is domain/timer-schedule.ts. A thread's next step lives on the thread (`next_timer`, with
// `next_due_at` on the threads' `due` index), so arming it is part of the thread's own versioned write:
// - settle(before, next): every thread write (MongoStore.writeThread) and a create (withFirstStep) work the step out
//   on the document they store, when the zone it keeps is known without a call. Its event then goes out without an
//   arm job (ThreadDoc.timer_version), unless the step is due within the job horizon: its delayed job is then added
//   by the arm job.
// - arm(thread): the `verify` job after an event whose write could not arm (the zone was not known, a step soon
//   due): the next step is worked out again and written when it moved, and a delayed job is added whose id is
//   thread + step + attempt, when it is due within the horizon. A final state has no step.
// - fire(job): the job re-reads the thread and recomputes its next step with the injected clock: a step that is
//   not the next any more, or not due yet, changes nothing (it is armed again). A due step is one versioned
//   thread write that records it in `timers.fired` (so it can never fire twice) with its outbox event.
// - sweep(): finds the due steps through store/timer-due.ts (the `due` index: never every thread). A due step whose
//   job is missing (Redis lost it) or delayed is run now; after Redis came back empty every armed step is read and
//   armed again.

/** The thread writes the timers make (MongoStore is one; test/fakes/in-memory-threads.ts another). */
export type TimerThreads = Pick<ThreadWriter, 'readThread' | 'readThreadFrom' | 'writeThread'> & {
  /** A write of the thread's armed step only, keeping its version (MongoStore.writeThreadTimer). */
  writeThreadTimer(id: string, change: Change<ThreadDoc>, from?: ThreadDoc): Promise<VersionedWrite<ThreadDoc>>;
};

export interface HandoffTimersDeps {
  store: TimerThreads;
  /** The armed steps by due time (store/timer-due.ts: timerDueFor(store), the threads' `due` index). */
  due: TimerDue;
  teammates: Pick<Teammates, 'get' | 'cached'>;
  queue: TimerQueue;
  outbox: Pick<Outbox, 'recording'>;
  zones: TimeZones;
  clock: Clock;
  log: Logger;
  /** `sweepIntervalMs`: how often `sweep` runs (the jobs of later steps are added by it: JOB_HORIZON_SWEEPS). */
  settings: TimerSettings & { escalateChannel?: string; sweepIntervalMs?: number };
  /** The `team:` section of the policy in force, read as each step is worked out: it overrides `settings` key by key. */
  team?: () => TeamSettings | undefined;
}

/**
 * A step's job is added to the queue when it comes due within this many sweep intervals (and never less than
 * MIN_JOB_HORIZON_MS): by the arm itself when it is that close already, else by the sweep that first sees it that
 * close. A step days away therefore costs no delayed job, and no wake-up of every worker waiting on the queue (BullMQ
 * moves the queue's marker on each delayed add), until it is about to fire; most never do (the handoff was answered).
 */
const JOB_HORIZON_SWEEPS = 2;
const MIN_JOB_HORIZON_MS = 2 * MINUTE_MS;
/** Jobs a sweep's look-ahead adds at once. */
const AHEAD_JOBS = 20;

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

  /** The settings in force now: the environment's, with the policy's `team:` section in their place where it sets them. */
  private get settings(): HandoffTimersDeps['settings'] {
    return withTeamSettings(this.deps.settings, this.deps.team?.());
  }

  constructor(private readonly deps: HandoffTimersDeps) {
    this.dueTimers = deps.due;
    this.horizonMs = Math.max(JOB_HORIZON_SWEEPS * (deps.settings.sweepIntervalMs ?? MINUTE_MS), MIN_JOB_HORIZON_MS);
  }

  /**
   * Steps due before this (a minute's start) have their jobs added when armed; later ones wait on the `due` index
   * until a sweep's look-ahead reaches their minute (sweep). Whole minutes, as the look-ahead steps.
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
    if (!this.settings.workingHours) return { next: nextTimerStep(thread, this.settings, 'UTC'), zone: 'UTC' };
    const { zone } = await this.zoneOf(this.timedFor(thread));
    return { next: nextTimerStep(thread, this.settings, zone), zone };
  }

  /**
   * next() for a create, which must not wait on Slack for a zone: undefined when the zone is not remembered (it is
   * asked for meanwhile, for the next create; this thread's job arms it in full).
   */
  private async nextWithoutWaiting(thread: ThreadDoc): Promise<DueStep | null | undefined> {
    const { teammates, zones } = this.deps;
    const settings = this.settings;
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
   * The new thread as its create stores it, its first step armed (not when its zone is not known yet: the
   * `thread.created` arm job arms it then). A held create has no step until it is approved.
   */
  async withFirstStep(thread: ThreadDoc): Promise<ThreadDoc> {
    const next = await this.nextWithoutWaiting(thread);
    if (next === undefined) return thread;
    return this.armedOn(null, thread, next, thread.version);
  }

  /**
   * What every thread write stores (MongoStore.writeThread): `next` with its next step worked out on it, when
   * the zone that step keeps is known without a call and the change did not arm it itself (the arm job, a fire).
   * Otherwise `next` as it is, and the event's arm job works it out.
   */
  settle(before: ThreadDoc, next: ThreadDoc): ThreadDoc {
    if (
      before.next_timer !== next.next_timer ||
      before.next_due_at !== next.next_due_at ||
      before.timer_version !== next.timer_version
    )
      return next;
    const zone = this.zoneNow(next);
    if (zone === undefined) return next;
    return this.armedOn(before, next, nextTimerStep(next, this.settings, zone), (before.version ?? 0) + 1);
  }

  /**
   * `thread` (to be stored as `version`) with `next` armed: the step it holds when that is the same one, else a new
   * attempt. Marked as armed by that write unless the step's job is due within the horizon (the arm job adds it).
   */
  private armedOn(before: ThreadDoc | null, thread: ThreadDoc, next: DueStep | null, version: number): ThreadDoc {
    const now = this.deps.clock.now();
    const timer = next ? this.stepOn(before ?? thread, thread.status, next, now) : null;
    const needsJob = timer !== null && timer.due_at.getTime() < this.jobsBefore(now);
    return withArmedTimer(thread, timer, needsJob ? undefined : version);
  }

  /** The armed step for `next` on a thread now `status`: `from`'s own when unchanged (and not `force`), else a new attempt. */
  private stepOn(from: ThreadDoc, status: ThreadDoc['status'], next: DueStep, now: Date, force = false): TimerDoc {
    const row = armedTimer(from);
    if (row && !force && row.step === next.step && row.status === status && row.due_at.getTime() === next.due.getTime())
      return row;
    return {
      _id: from._id,
      step: next.step,
      due_at: next.due,
      attempt: row ? row.attempt + 1 : 0,
      status,
      armed_at: now,
    };
  }

  /** The zone the thread's steps keep, when known without a call (undefined: only zoneOf can tell). */
  private zoneNow(thread: ThreadDoc): string | undefined {
    if (!this.settings.workingHours) return 'UTC';
    const agent = this.deps.teammates.cached(this.timedFor(thread));
    const zone = agent ? this.deps.zones.known(agent) : undefined;
    if (zone === undefined) return undefined;
    return zone && isKnownZone(zone) ? zone : 'UTC';
  }

  /**
   * Arms the thread's next step (or drops it when none is left), writing it when it moved, and adds its job when it
   * is due within the horizon: the `verify` job after an event whose write could not arm it, or whose step is due
   * within the horizon. `force` arms a new attempt even when unchanged; `version`: the thread is read as of that
   * version or later (store.readThreadFrom; an event's job carries the version its write stored).
   */
  async arm(threadId: string, opts: { force?: boolean; version?: number } = {}): Promise<TimerDoc | null> {
    const { store, clock } = this.deps;
    const thread = await store.readThreadFrom(threadId, opts.version);
    if (!thread) return null;
    const { next, zone } = await this.next(thread);
    const now = clock.now();
    const wanted = next ? this.stepOn(thread, thread.status, next, now, opts.force) : null;
    let timer = armedTimer(thread);
    if (!sameTimer(timer, wanted)) {
      // On the version it read, beside the thread's state (no version moved): the DM's writes do not wait on it.
      const written = await store.writeThreadTimer(
        threadId,
        (doc) => {
          // Another write moved the thread to someone else (a claim, a reassignment): its own event arms it.
          if (this.timedFor(doc) !== this.timedFor(thread)) return undefined;
          const again = nextTimerStep(doc, this.settings, zone);
          const step = again ? this.stepOn(doc, doc.status, again, now, opts.force) : null;
          return sameTimer(armedTimer(doc), step) ? undefined : withArmedTimer(doc, step, doc.version);
        },
        thread,
      );
      const stored = written.after ?? written.before;
      timer = stored ? armedTimer(stored) : null;
    }
    if (timer) await this.addJob(timer, now);
    return timer;
  }

  /** Runs one timer job: records its step on the thread once, when it is still the next one and due. */
  async fire(job: TimerJob): Promise<FireOutcome> {
    const { store, clock, log } = this.deps;
    const thread = await store.readThread(job.thread_id);
    const row = thread && armedTimer(thread);
    if (!thread || !row) return 'no_timer';
    if (row.step !== job.step || row.attempt !== job.attempt) return 'superseded';
    const { next, zone } = await this.next(thread);
    if (!next || next.step !== job.step) {
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
    await this.deps.outbox.recording(event, async () => {
      const { after } = await store.writeThread(job.thread_id, (doc) => {
        applied = false;
        // The very version written is judged again: a transition or another job in between wins.
        if (doc.status !== thread.status || doc.timers?.fired?.[job.step]) return undefined;
        const again = nextTimerStep(doc, this.settings, zone);
        if (again?.step !== job.step) return undefined;
        applied = true;
        const changed = applyTimerStep(doc, job.step, now, escalation, this.settings);
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
    if (lead && lead.status === 'active' && lead.slack_user_id && lead.handle !== thread.to)
      return { kind: 'lead', handle: lead.handle, slack: lead.slack_user_id };
    if (this.settings.escalateChannel) return { kind: 'channel', slack: this.settings.escalateChannel };
    const sender = await this.deps.teammates.get(thread.from);
    return { kind: 'sender', handle: thread.from, slack: sender?.slack_user_id ?? null };
  }

  /**
   * Every due step runs now (its delayed job promoted, or added again when Redis lost it), found through the `due`
   * index on `threads.next_due_at` (store/timer-due.ts), so a sweep with nothing due reads no thread however many
   * are open; then the steps that came within the horizon get their jobs (addAhead). Only after Redis lost its jobs
   * does it read every armed step, to arm again each one within the horizon. Returns how many it ran or re-armed.
   */
  async sweep(): Promise<number> {
    const { queue, clock, log } = this.deps;
    const lost = await queue.lostJobs();
    const now = clock.now();
    let touched = 0;
    const seen = new Set<string>();
    if (lost) {
      for await (const row of this.dueTimers.all()) {
        seen.add(row._id);
        if (row.due_at <= now) touched += await this.runDue(row, now);
        else if (await this.addJob(row, now)) touched += 1;
      }
    }
    for (const row of await this.dueTimers.due(now)) {
      if (seen.has(row._id)) continue;
      seen.add(row._id);
      touched += await this.runDue(row, now);
    }
    await this.addAhead(now);
    if (lost) {
      await queue.markArmed();
      log.info({ rearmed: touched }, 'timers armed again after the queue lost its jobs');
    }
    return touched;
  }

  /**
   * Adds the jobs of the steps that came within the horizon since this process's last sweep: the minutes from there
   * up to jobsBefore(now) (from the current minute on this process's first sweep: an earlier one's steps are due,
   * and `due` runs them). A job added twice is once.
   */
  private async addAhead(now: Date): Promise<void> {
    const until = this.jobsBefore(now);
    const from = Math.max(this.aheadFrom ?? 0, minuteOf(now.getTime()));
    if (from < until) {
      const rows = await this.dueTimers.ahead(from, until);
      for (let i = 0; i < rows.length; i += AHEAD_JOBS) {
        await Promise.all(
          rows
            .slice(i, i + AHEAD_JOBS)
            .filter((row) => row.due_at > now)
            .map((row) => this.addJob(row, now)),
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
  async snooze(caller: AgentDoc, threadId: string, choice: SnoozeChoice, via: Surface): Promise<Date> {
    const { store, clock } = this.deps;
    const now = clock.now();
    const { zone } = await this.zoneOf(caller.handle);
    const until = snoozedUntil(choice, now, this.settings.workingHours, zone);
    let refused: RelayError | null = null;
    // An event, so the thread's other open pages, the live App Home and webhooks hear of it (docs/timers.md).
    const event: OutboxEvent = { id: randomUUID(), type: 'thread.snoozed', at: now, by: caller.handle, via };
    await this.deps.outbox.recording(event, async () => {
      const { after } = await store.writeThread(threadId, (doc) => {
        refused = null;
        if (doc.to !== caller.handle)
          refused = new RelayError(
            'not_authorized_transition',
            `Only the recipient (${doc.to}) can snooze this handoff's reminders`,
          );
        else if (doc.status !== 'pending')
          refused = new RelayError(
            'invalid_transition',
            `The handoff is ${doc.status}; there are no reminders to snooze`,
            { status: doc.status },
          );
        if (refused) return undefined;
        return { ...doc, timers: { fired: {}, ...doc.timers, snoozed_until: until }, outbox: [...doc.outbox, event] };
      });
      return after;
    });
    if (refused) throw refused;
    await this.arm(threadId).catch((error: Error) =>
      this.deps.log.warn({ thread_id: threadId, err: error.message }, 'snooze not armed yet; the timer sweep will'),
    );
    return until;
  }
}

function jobOf(timer: Pick<TimerDoc, '_id' | 'step' | 'attempt'>): TimerJob {
  return { thread_id: timer._id, step: timer.step, attempt: timer.attempt };
}
