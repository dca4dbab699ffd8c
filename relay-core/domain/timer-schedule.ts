// The timer rules: which step of a handoff's schedule comes next and when it is due, a pure function of the thread.
import type { EscalationTarget, ThreadDoc, TimerDoc, TimerStep } from './documents';
import type { TimerSettings } from './team-settings';
import { nextWorkingTime } from './working-hours';

// A pending handoff: remind-1 after remind_after, remind-2 remind_again after that (a Snooze adds one more at the
// time chosen), escalate after escalate_after (intents that escalate), expire after expire_after or when its
// handoff token expires, whichever is first. An accepted one: one gentler nudge (`stale`) after stale_after.
// Reminders, nudges and escalations move into the recipient's working hours; expiry does not wait for them.
// An unclaimed handoff (a role, skill or owner target with several candidates) runs the same pending chain (no
// handoff token yet, so only expire_after expires it); a claim starts it over for the claimer (claim.ts).

export type { TimerSettings } from './team-settings';

export interface DueStep {
  step: TimerStep;
  due: Date;
}

/** The reminders that fired, in order (remind-1, remind-2, …). */
export function firedReminders(thread: ThreadDoc): Array<{ step: TimerStep; at: Date }> {
  return Object.entries(thread.timers?.fired ?? {})
    .filter(([step]) => step.startsWith('remind-'))
    .map(([step, at]) => ({ step: step as TimerStep, at: new Date(at as Date) }))
    .sort((a, b) => Number(a.step.slice(7)) - Number(b.step.slice(7)));
}

function later(at: Date, ms: number): Date {
  return new Date(at.getTime() + ms);
}

/**
 * The next step of `thread`'s schedule and when it is due (`zone`: the recipient's time zone), or null when
 * nothing is left (a final state, or every step fired or turned off).
 */
export function nextTimerStep(thread: ThreadDoc, settings: TimerSettings, zone: string): DueStep | null {
  const fired = thread.timers?.fired ?? {};
  const since = thread.timers?.since ? new Date(thread.timers.since) : thread.created_at;
  const working = (at: Date) => nextWorkingTime(at, settings.workingHours, zone);
  const candidates: DueStep[] = [];

  if (thread.status === 'accepted') {
    if (settings.staleAfterMs !== null && !fired.stale && thread.accepted_at) {
      candidates.push({ step: 'stale', due: working(later(thread.accepted_at, settings.staleAfterMs)) });
    }
  } else if (thread.status === 'pending' || thread.status === 'unclaimed') {
    const reminders = firedReminders(thread);
    const last = reminders[reminders.length - 1];
    // A question its recipient answered needs no reminder nor escalation; it still expires like any pending handoff.
    const answered = Boolean(thread.answered_at);
    const step = `remind-${reminders.length + 1}` as TimerStep;
    const snoozed = thread.timers?.snoozed_until ? new Date(thread.timers.snoozed_until) : null;
    if (answered) {
      // nothing to remind of
    } else if (snoozed && (!last || snoozed > last.at)) candidates.push({ step, due: working(snoozed) });
    else if (reminders.length === 0 && settings.remindAfterMs !== null)
      candidates.push({ step, due: working(later(since, settings.remindAfterMs)) });
    else if (reminders.length === 1 && last && settings.remindAgainMs !== null)
      candidates.push({ step, due: working(later(last.at, settings.remindAgainMs)) });

    if (
      !answered &&
      settings.escalateAfterMs !== null &&
      !fired.escalate &&
      settings.escalateIntents.includes(thread.intent)
    ) {
      candidates.push({ step: 'escalate', due: working(later(since, settings.escalateAfterMs)) });
    }
    const expiries: Date[] = [];
    if (settings.expireAfterMs !== null) expiries.push(later(since, settings.expireAfterMs));
    const token = thread.handoff_token;
    if (token && !token.consumed_at) expiries.push(new Date(token.expires_at));
    if (expiries.length > 0)
      candidates.push({ step: 'expire', due: new Date(Math.min(...expiries.map((d) => d.getTime()))) });
  }
  // The earliest first; at a tie the reminder, then the escalation, then expiry (the order they were pushed).
  return candidates.reduce<DueStep | null>((best, c) => (!best || c.due < best.due ? c : best), null);
}

/** Why a handoff expired, for the people told: its token ran out, or it was pending past expire_after. */
export function expiryReason(thread: ThreadDoc, settings: TimerSettings): 'token_expired' | 'expire_after' {
  const since = thread.timers?.since ? new Date(thread.timers.since) : thread.created_at;
  const token = thread.handoff_token;
  if (!token || token.consumed_at) return 'expire_after';
  if (settings.expireAfterMs === null) return 'token_expired';
  return new Date(token.expires_at) <= later(since, settings.expireAfterMs) ? 'token_expired' : 'expire_after';
}

/** The thread with `step` applied at `now`: recorded as fired once, and for expire the final state. */
export function applyTimerStep(
  thread: ThreadDoc,
  step: TimerStep,
  now: Date,
  escalation: EscalationTarget | null,
  settings: TimerSettings,
): ThreadDoc {
  const timers = { fired: {}, ...thread.timers };
  const fired = { ...timers.fired, [step]: now };
  const base: ThreadDoc = { ...thread, updated_at: now, timers: { ...timers, fired } };
  if (step.startsWith('remind-')) return { ...base, timers: { ...base.timers!, snoozed_until: null } };
  if (step === 'escalate') return { ...base, timers: { ...base.timers!, escalated_to: escalation } };
  if (step === 'expire') {
    return {
      ...base,
      timers: { ...base.timers!, expire_reason: expiryReason(thread, settings) },
      status: 'expired',
      expired_at: now,
      status_history: [...thread.status_history, { status: 'expired', by: RELAY_ACTOR, at: now, via: 'api' }],
    };
  }
  return base;
}

/** Who a change made by the relay itself (a timer) is recorded as. */
export const RELAY_ACTOR = 'relay';

/** The thread's armed step, or null when it has none. */
export function armedTimer(thread: ThreadDoc): TimerDoc | null {
  if (!thread.next_timer || !thread.next_due_at) return null;
  return { _id: thread._id, ...thread.next_timer, due_at: new Date(thread.next_due_at) };
}

/** The thread with `timer` armed (null: none), marked as armed by the write of `version` when given. */
export function withArmedTimer(thread: ThreadDoc, timer: TimerDoc | null, version?: number): ThreadDoc {
  const { next_timer: _step, next_due_at: _due, timer_version: _version, ...rest } = thread;
  const marked = version === undefined ? rest : { ...rest, timer_version: version };
  if (!timer) return marked;
  const { _id, due_at, ...step } = timer;
  return { ...marked, next_timer: step, next_due_at: due_at };
}

/** Whether two armed steps are the same one (the same step, due time, thread status and attempt). */
export function sameTimer(a: TimerDoc | null, b: TimerDoc | null): boolean {
  if (!a || !b) return a === b;
  return (
    a.step === b.step && a.attempt === b.attempt && a.status === b.status && a.due_at.getTime() === b.due_at.getTime()
  );
}

/**
 * Whether `handle` is the lead this handoff was escalated to: who may reassign it, like its sender, and read it (the
 * escalation DM's Open), though not a participant.
 */
export function isEscalationLead(doc: ThreadDoc, handle: string): boolean {
  const to = doc.timers?.escalated_to;
  return to?.kind === 'lead' && to.handle === handle;
}
