// Whether a person's daily digest is due at a moment, in their Slack time zone (pure; the zone math is relay-core's).
import { localMoment } from '../../relay-core/domain/local-time';
import type { DigestTime } from '../../relay-core/ops/config';

/**
 * The local day whose digest is due at `now`, or null: on a weekday (Monday to Friday, local), from `at` until the end
 * of that local day (a relay that was down at the hour catches up when it is back, the same day; so does a day whose
 * digest time a daylight-saving gap skips).
 */
export function digestDueDay(now: Date, tz: string, at: DigestTime): string | null {
  const local = localMoment(now, tz);
  if (!local || local.isoWeekday > 5) return null;
  return local.minutes >= at.hour * 60 + at.minute ? local.date : null;
}
