// Working hours in a person's time zone: when a reminder due at some instant may actually be sent.

export interface WorkingHours {
  /** Minutes after local midnight the working day starts and ends (end exclusive). */
  startMinute: number;
  endMinute: number;
  /** Working weekdays, 0 = Sunday. */
  days: number[];
}

interface LocalTime {
  year: number;
  month: number;
  day: number;
  weekday: number;
  minute: number;
}

const WEEKDAY_INDEX: Record<string, number> = { Sun: 0, Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6 };
const formatters = new Map<string, Intl.DateTimeFormat>();

/** True when `zone` is an IANA time zone this runtime knows. */
export function isKnownZone(zone: string): boolean {
  try {
    formatter(zone);
    return true;
  } catch {
    return false;
  }
}

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      weekday: 'short',
    });
    formatters.set(zone, f);
  }
  return f;
}

function localTime(at: Date, zone: string): LocalTime {
  const parts = Object.fromEntries(
    formatter(zone)
      .formatToParts(at)
      .map((p) => [p.type, p.value]),
  );
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    weekday: WEEKDAY_INDEX[parts.weekday!]!,
    minute: Number(parts.hour) * 60 + Number(parts.minute),
  };
}

/** The instant a local wall-clock time in `zone` names (the first of two in a DST fold; skipped times move forward). */
export function zonedInstant(zone: string, year: number, month: number, day: number, minute: number): Date {
  const wall = Date.UTC(year, month - 1, day, 0, minute);
  let guess = wall;
  for (let i = 0; i < 3; i += 1) {
    const seen = localTime(new Date(guess), zone);
    const seenWall = Date.UTC(seen.year, seen.month - 1, seen.day, 0, seen.minute);
    const diff = wall - seenWall;
    if (diff === 0) break;
    guess += diff;
  }
  return new Date(guess);
}

/** `at` when it falls inside working hours in `zone`, else the start of the next working period. */
export function nextWorkingTime(at: Date, hours: WorkingHours | null, zone: string): Date {
  if (!hours || hours.days.length === 0) return at;
  const local = localTime(at, zone);
  if (hours.days.includes(local.weekday) && local.minute >= hours.startMinute && local.minute < hours.endMinute)
    return at;
  // Today's start if it is still ahead and today works, else the next working day's start.
  for (let offset = 0; offset <= 7; offset += 1) {
    if (offset === 0 && (local.minute >= hours.startMinute || !hours.days.includes(local.weekday))) continue;
    const date = new Date(Date.UTC(local.year, local.month - 1, local.day + offset));
    if (!hours.days.includes(date.getUTCDay())) continue;
    return zonedInstant(zone, date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate(), hours.startMinute);
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
  const local = localTime(now, zone);
  // Tomorrow: the next calendar day, then the first working day from there. Next week: from next Monday.
  const from = choice === 'tomorrow' ? 1 : (8 - local.weekday) % 7 || 7;
  for (let offset = from; offset <= from + 7; offset += 1) {
    const date = new Date(Date.UTC(local.year, local.month - 1, local.day + offset));
    if (days.includes(date.getUTCDay()))
      return zonedInstant(zone, date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate(), start);
  }
  return new Date(now.getTime() + 86_400_000);
}
