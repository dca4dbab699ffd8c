// Working hours in a person's time zone: when a reminder due at some instant may actually be sent.
import { DateTime } from 'luxon';

export interface WorkingHours {
  /** Minutes after local midnight the working day starts and ends (end exclusive). */
  startMinute: number;
  endMinute: number;
  /** Working weekdays, 0 = Sunday. */
  days: number[];
}

/** `at` in `zone` (a zone the runtime does not know reads as UTC: callers check `isKnownZone` first). */
function local(at: Date, zone: string): DateTime {
  const seen = DateTime.fromJSDate(at, { zone });
  return seen.isValid ? seen : DateTime.fromJSDate(at, { zone: 'utc' });
}

/** Sunday = 0 … Saturday = 6, as `WorkingHours.days` counts. */
const weekday = (day: DateTime) => day.weekday % 7;

const minuteOfDay = (day: DateTime) => day.hour * 60 + day.minute;

/**
 * `minute` past midnight on `day`'s local date: a time a spring-forward gap skips moves forward by the gap, and
 * one a fall-back fold repeats is the first of the two (Luxon's rules).
 */
function atMinute(day: DateTime, minute: number): Date {
  return day
    .startOf('day')
    .set({ hour: Math.floor(minute / 60), minute: minute % 60 })
    .toJSDate();
}

/** `at` when it falls inside working hours in `zone`, else the start of the next working period. */
export function nextWorkingTime(at: Date, hours: WorkingHours | null, zone: string): Date {
  if (!hours || hours.days.length === 0) return at;
  const now = local(at, zone);
  const today = hours.days.includes(weekday(now));
  if (today && minuteOfDay(now) >= hours.startMinute && minuteOfDay(now) < hours.endMinute) return at;
  // Today's start if it is still ahead and today works, else the next working day's start.
  for (let offset = 0; offset <= 7; offset += 1) {
    if (offset === 0 && (minuteOfDay(now) >= hours.startMinute || !today)) continue;
    const day = now.plus({ days: offset });
    if (hours.days.includes(weekday(day))) return atMinute(day, hours.startMinute);
  }
  return at;
}

export type SnoozeChoice = '1h' | 'tomorrow' | 'week';

/**
 * When a Snooze moves the next reminder: an hour from now; tomorrow at the start of the working day; next week's
 * first working day at its start (without working hours: 09:00), all in the recipient's zone.
 */
export function snoozedUntil(choice: SnoozeChoice, now: Date, hours: WorkingHours | null, zone: string): Date {
  if (choice === '1h') return new Date(now.getTime() + 3_600_000);
  const start = hours?.startMinute ?? 9 * 60;
  const days = hours?.days.length ? hours.days : [0, 1, 2, 3, 4, 5, 6];
  const today = local(now, zone);
  // Tomorrow: the next calendar day, then the first working day from there. Next week: from next Monday.
  const from = choice === 'tomorrow' ? 1 : 8 - today.weekday;
  for (let offset = from; offset <= from + 7; offset += 1) {
    const day = today.plus({ days: offset });
    if (days.includes(weekday(day))) return atMinute(day, start);
  }
  return new Date(now.getTime() + 86_400_000);
}
