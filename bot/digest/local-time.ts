// A moment as a person sees it in their Slack time zone, and whether their daily digest is due then (pure).
import type { DigestTime } from '../../relay-core/ops/config';

export interface LocalMoment {
  /** The local calendar day, YYYY-MM-DD: the digest ledger's key. */
  date: string;
  /** 1 = Monday … 7 = Sunday. */
  isoWeekday: number;
  /** Minutes since local midnight. */
  minutes: number;
}

const WEEKDAYS: Record<string, number> = { Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6, Sun: 7 };
const formats = new Map<string, Intl.DateTimeFormat>();

/** `now` in IANA zone `tz`; null for a zone the runtime does not know. */
export function localMoment(now: Date, tz: string): LocalMoment | null {
  let format = formats.get(tz);
  if (!format) {
    try {
      format = new Intl.DateTimeFormat('en-US', {
        timeZone: tz,
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        weekday: 'short',
        hourCycle: 'h23',
      });
    } catch {
      return null;
    }
    formats.set(tz, format);
  }
  const parts = Object.fromEntries(format.formatToParts(now).map((p) => [p.type, p.value]));
  return {
    date: `${parts.year}-${parts.month}-${parts.day}`,
    isoWeekday: WEEKDAYS[parts.weekday!] ?? 0,
    minutes: Number(parts.hour) * 60 + Number(parts.minute),
  };
}

/**
 * The local day whose digest is due at `now`, or null: on a weekday (Monday to Friday, local), from `at` until the end
 * of that local day (a relay that was down at the hour catches up when it is back, the same day).
 */
export function digestDueDay(now: Date, tz: string, at: DigestTime): string | null {
  const local = localMoment(now, tz);
  if (!local || local.isoWeekday > 5) return null;
  return local.minutes >= at.hour * 60 + at.minute ? local.date : null;
}
