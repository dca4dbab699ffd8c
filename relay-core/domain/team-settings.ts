// A team's timer settings in its policy file (`team:`): reminders, escalation, expiry and working hours, each one
// overriding the relay's environment default (RELAY_REMIND_AFTER, …) while that policy is in force.
import { z } from 'zod';
import { intentSchema, type Intent } from './schemas';
import type { WorkingHours } from './working-hours';
import { parseDuration, type DurationRange } from './duration';

/** Sunday first, as Date#getUTCDay counts. */
export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;

/** A timer step: `30m`, `4h`, `3d`, `2w` (1 minute to 366 days; a unit is required). */
export const TIMER_DURATION_RANGE: DurationRange = { min: 60_000, max: 366 * 86_400_000 };

export const TIMER_DURATION_MESSAGE =
  'must be a duration from 1m to 366d such as 30m, 4h, 3d or 2w (a unit is required), or off';
export const WORKING_HOURS_MESSAGE = 'must be HH:MM-HH:MM with the start before the end, e.g. 09:00-18:00, or off';

/** `09:00-18:00` → minutes after midnight; null when malformed (`off` is the caller's). */
export function parseWorkingHours(text: string): { startMinute: number; endMinute: number } | null {
  const match = /^([01]\d|2[0-3]):([0-5]\d)-([01]\d|2[0-4]):([0-5]\d)$/.exec(text);
  if (!match) return null;
  const start = Number(match[1]) * 60 + Number(match[2]);
  const end = Number(match[3]) * 60 + Number(match[4]);
  return end > 24 * 60 || start >= end ? null : { startMinute: start, endMinute: end };
}

/** The local time of day the daily digest goes out (in each person's Slack time zone). */
export interface DigestTime {
  hour: number;
  minute: number;
}

export const DIGEST_TIME_MESSAGE = 'must be a local time HH:MM (00:00–23:59), or off';

/** `09:30` → { hour: 9, minute: 30 }; null when malformed (`off` is the caller's). */
export function parseDigestTime(text: string): DigestTime | null {
  const match = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(text);
  return match ? { hour: Number(match[1]), minute: Number(match[2]) } : null;
}

/** A timer step's setting: a duration, or `off` (null: that step never fires). */
const timerSetting = z.string().transform((value, ctx) => {
  if (value === 'off') return null;
  const ms = parseDuration(value, TIMER_DURATION_RANGE);
  if (ms === null) {
    ctx.addIssue({ code: 'custom', message: `${TIMER_DURATION_MESSAGE}, got "${value}"` });
    return z.NEVER;
  }
  return ms;
});

const workingHoursSetting = z.string().transform((value, ctx) => {
  if (value === 'off') return null;
  const hours = parseWorkingHours(value);
  if (!hours) {
    ctx.addIssue({ code: 'custom', message: `${WORKING_HOURS_MESSAGE}, got "${value}"` });
    return z.NEVER;
  }
  return hours;
});

const digestTimeSetting = z.string().transform((value, ctx) => {
  if (value === 'off') return null;
  const at = parseDigestTime(value);
  if (!at) {
    ctx.addIssue({ code: 'custom', message: `${DIGEST_TIME_MESSAGE}, got "${value}"` });
    return z.NEVER;
  }
  return at;
});

/** The `team:` section of a policy document; every key optional, an absent one keeps the environment's value. */
export const teamSettingsSchema = z
  .object({
    remind_after: timerSetting.optional(),
    remind_again: timerSetting.optional(),
    escalate_after: timerSetting.optional(),
    stale_after: timerSetting.optional(),
    expire_after: timerSetting.optional(),
    escalate_intents: z.union([z.literal('none'), z.array(intentSchema).max(3)]).optional(),
    escalate_channel: z
      .string()
      .regex(/^[CG][A-Z0-9]{2,20}$/, 'must be a Slack channel id such as C0123ABCD (the app must be invited to it)')
      .optional(),
    working_hours: workingHoursSetting.optional(),
    working_days: z.array(z.enum(WEEKDAYS)).min(1).max(7).optional(),
    digest_at: digestTimeSetting.optional(),
  })
  .strict();

export type TeamSettings = z.infer<typeof teamSettingsSchema>;

/** The timer rules' settings (timer-schedule.ts), from the environment and then the team's. */
export interface TimerSettings {
  remindAfterMs: number | null;
  remindAgainMs: number | null;
  escalateAfterMs: number | null;
  staleAfterMs: number | null;
  expireAfterMs: number | null;
  escalateIntents: readonly Intent[];
  workingHours: WorkingHours | null;
}

export type TeamTimerSettings = TimerSettings & { escalateChannel?: string };

/** The environment's timer settings with what the policy's `team:` section sets in their place. */
export function withTeamSettings<T extends TeamTimerSettings>(defaults: T, team: TeamSettings | undefined): T {
  if (!team) return defaults;
  const pick = <V>(value: V | undefined, fallback: V): V => (value === undefined ? fallback : value);
  return {
    ...defaults,
    remindAfterMs: pick(team.remind_after, defaults.remindAfterMs),
    remindAgainMs: pick(team.remind_again, defaults.remindAgainMs),
    escalateAfterMs: pick(team.escalate_after, defaults.escalateAfterMs),
    staleAfterMs: pick(team.stale_after, defaults.staleAfterMs),
    expireAfterMs: pick(team.expire_after, defaults.expireAfterMs),
    escalateIntents:
      team.escalate_intents === undefined
        ? defaults.escalateIntents
        : team.escalate_intents === 'none'
          ? []
          : ([...new Set(team.escalate_intents)] as Intent[]),
    ...(team.escalate_channel ? { escalateChannel: team.escalate_channel } : {}),
    workingHours: workingHoursOf(defaults.workingHours, team),
  };
}

/** When the daily digest goes out: the team's time when it sets one (off included), else the environment's. */
export function teamDigestAt(defaultAt: DigestTime | null, team: TeamSettings | undefined): DigestTime | null {
  return team?.digest_at === undefined ? defaultAt : team.digest_at;
}

/** Hours and days each from the policy when it sets them; days alone keep the environment's hours (none if it has none). */
function workingHoursOf(defaults: WorkingHours | null, team: TeamSettings): WorkingHours | null {
  const days = team.working_days ? [...new Set(team.working_days.map((d) => WEEKDAYS.indexOf(d)))].sort() : undefined;
  if (team.working_hours === null) return null;
  const hours = team.working_hours ?? defaults;
  if (!hours) return null;
  return {
    startMinute: hours.startMinute,
    endMinute: hours.endMinute,
    days: days ?? defaults?.days ?? [1, 2, 3, 4, 5],
  };
}
