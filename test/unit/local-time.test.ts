// The zone math (relay-core/domain/local-time.ts, working-hours.ts on Luxon) at daylight-saving edges: a working
// start or digest time that a spring-forward gap skips, one that a fall-back fold repeats, and a day without midnight.
import { digestDueDay } from '../../bot/digest/local-time';
import { isKnownZone, localMoment } from '../../relay-core/domain/local-time';
import { nextWorkingTime, snoozedUntil, type WorkingHours } from '../../relay-core/domain/working-hours';

const EVERY_DAY = [0, 1, 2, 3, 4, 5, 6];
const hours = (start: string, end: string, days = EVERY_DAY): WorkingHours => {
  const minute = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3));
  return { startMinute: minute(start), endMinute: minute(end), days };
};
const at = (iso: string) => new Date(iso);

describe('working hours across daylight-saving changes', () => {
  // Europe/Berlin: 2026-03-29 02:00 CET → 03:00 CEST (01:00 UTC); 2026-10-25 03:00 CEST → 02:00 CET (01:00 UTC).
  test('a start inside the spring-forward gap moves forward by the gap', () => {
    // Sunday 00:00 CET; the day starts at 02:30, which does not exist that day: 03:30 CEST is 01:30 UTC.
    expect(nextWorkingTime(at('2026-03-28T23:00:00Z'), hours('02:30', '18:00'), 'Europe/Berlin')).toEqual(
      at('2026-03-29T01:30:00Z'),
    );
    // The next day it is 02:30 CEST again.
    expect(nextWorkingTime(at('2026-03-29T17:00:00Z'), hours('02:30', '18:00'), 'Europe/Berlin')).toEqual(
      at('2026-03-30T00:30:00Z'),
    );
  });

  test('a start inside the fall-back fold is the first of the two', () => {
    // Sunday 00:30 CEST; 02:30 comes twice that night, at 00:30 UTC (CEST) and 01:30 UTC (CET).
    expect(nextWorkingTime(at('2026-10-24T22:30:00Z'), hours('02:30', '18:00'), 'Europe/Berlin')).toEqual(
      at('2026-10-25T00:30:00Z'),
    );
  });

  test('either occurrence of a folded hour is inside working hours that cover it', () => {
    const night = hours('02:00', '04:00');
    expect(nextWorkingTime(at('2026-10-25T00:30:00Z'), night, 'Europe/Berlin')).toEqual(at('2026-10-25T00:30:00Z'));
    expect(nextWorkingTime(at('2026-10-25T01:30:00Z'), night, 'Europe/Berlin')).toEqual(at('2026-10-25T01:30:00Z'));
  });

  test('the day after a change starts at the same local time, at the new offset', () => {
    // America/New_York: Saturday 2026-03-07 15:00 EST; Monday 09:00 is EDT (UTC-4).
    const weekdays = hours('09:00', '17:00', [1, 2, 3, 4, 5]);
    expect(nextWorkingTime(at('2026-03-07T20:00:00Z'), weekdays, 'America/New_York')).toEqual(
      at('2026-03-09T13:00:00Z'),
    );
    // 2026-11-01 falls back: Monday 09:00 is EST (UTC-5) again.
    expect(nextWorkingTime(at('2026-10-31T20:00:00Z'), weekdays, 'America/New_York')).toEqual(
      at('2026-11-02T14:00:00Z'),
    );
  });

  test('a day without midnight (Cairo springs forward at 00:00 on a Friday) starts when the day does', () => {
    // 2026-04-23 23:59 EET is followed by 2026-04-24 01:00 EEST (22:00 UTC).
    expect(nextWorkingTime(at('2026-04-23T21:30:00Z'), hours('00:00', '08:00'), 'Africa/Cairo')).toEqual(
      at('2026-04-23T22:00:00Z'),
    );
  });
});

describe('Snooze across daylight-saving changes', () => {
  test('tomorrow morning is 09:00 local on the far side of the change', () => {
    // Saturday 15:00 EST → Sunday 09:00 EDT (13:00 UTC), not 14:00 UTC.
    expect(snoozedUntil('tomorrow', at('2026-03-07T20:00:00Z'), null, 'America/New_York')).toEqual(
      at('2026-03-08T13:00:00Z'),
    );
    // Saturday 15:00 CEST → Sunday 09:00 CET (08:00 UTC).
    expect(snoozedUntil('tomorrow', at('2026-10-24T13:00:00Z'), null, 'Europe/Berlin')).toEqual(
      at('2026-10-25T08:00:00Z'),
    );
  });

  test('next week is Monday at the start of the working day, whichever offset Monday has', () => {
    // Thursday 2026-03-26 in Berlin (CET) → Monday 2026-03-30 08:00 CEST = 06:00 UTC.
    expect(snoozedUntil('week', at('2026-03-26T12:00:00Z'), hours('08:00', '16:00'), 'Europe/Berlin')).toEqual(
      at('2026-03-30T06:00:00Z'),
    );
  });
});

describe('the daily digest across daylight-saving changes', () => {
  test('a local hour repeated by the fold reads as the same local time both times', () => {
    // America/New_York 2026-11-01 01:30 happens at 05:30 UTC (EDT) and 06:30 UTC (EST).
    expect(localMoment(at('2026-11-01T05:30:00Z'), 'America/New_York')).toEqual({
      date: '2026-11-01',
      isoWeekday: 7,
      minutes: 90,
    });
    expect(localMoment(at('2026-11-01T06:30:00Z'), 'America/New_York')).toEqual({
      date: '2026-11-01',
      isoWeekday: 7,
      minutes: 90,
    });
  });

  test('a digest time the gap skips is still due that day, from the first moment after it', () => {
    // Friday 2026-04-24 in Cairo has no 00:00–00:59: a 00:30 digest is due from 01:00 EEST (22:00 UTC the day before).
    const halfPastMidnight = { hour: 0, minute: 30 };
    expect(digestDueDay(at('2026-04-23T21:59:00Z'), 'Africa/Cairo', halfPastMidnight)).toBe('2026-04-23');
    expect(digestDueDay(at('2026-04-23T22:00:00Z'), 'Africa/Cairo', halfPastMidnight)).toBe('2026-04-24');
  });

  test('an unknown zone is not a zone', () => {
    expect(isKnownZone('Europe/Berlin')).toBe(true);
    expect(isKnownZone('UTC')).toBe(true);
    expect(isKnownZone('Mars/Olympus')).toBe(false);
    expect(localMoment(at('2026-04-24T12:00:00Z'), 'Mars/Olympus')).toBeNull();
  });
});
