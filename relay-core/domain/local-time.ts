// A moment as a person sees it in their IANA time zone (Luxon's zone rules): for working hours, Snooze and the
// daily digest. Nothing else in the relay does time-zone arithmetic.
import { LRUCache } from 'lru-cache';
import { DateTime, IANAZone } from 'luxon';

export interface LocalMoment {
  /** The local calendar day, YYYY-MM-DD. */
  date: string;
  /** 1 = Monday … 7 = Sunday. */
  isoWeekday: number;
  /** Minutes since local midnight. */
  minutes: number;
}

/** Zones already checked: Luxon checks one by building an Intl.DateTimeFormat, and every thread write asks. */
const checkedZones = new LRUCache<string, boolean>({ max: 1_000 });

/** True when `zone` is an IANA time zone this runtime knows. */
export function isKnownZone(zone: string): boolean {
  let known = checkedZones.get(zone);
  if (known === undefined) checkedZones.set(zone, (known = IANAZone.isValidZone(zone)));
  return known;
}

/** `at` in `zone`; null for a zone the runtime does not know. */
export function localMoment(at: Date, zone: string): LocalMoment | null {
  const local = DateTime.fromJSDate(at, { zone });
  if (!local.isValid) return null;
  return { date: local.toISODate()!, isoWeekday: local.weekday, minutes: local.hour * 60 + local.minute };
}
