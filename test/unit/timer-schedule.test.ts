// The timer rules without services: the next step and its due time, working hours in a time zone, Snooze, and
// the timer settings' parsing (defaults and the one-line errors for bad values).
import { loadConfig } from '../../relay-core/ops/config';
import { applyTimerStep, nextTimerStep, type TimerSettings } from '../../relay-core/domain/timer-schedule';
import { nextWorkingTime, snoozedUntil } from '../../relay-core/domain/working-hours';
import type { ThreadDoc } from '../../relay-core/domain/documents';
import { thread } from './handoff-dm-fixtures';
import { timerSummaryLine } from '../../bot/blocks/timer-notices';
import { bob } from './handoff-dm-fixtures';

const H = 3_600_000;
const D = 24 * H;
const WEEKDAYS_9_TO_6 = { startMinute: 9 * 60, endMinute: 18 * 60, days: [1, 2, 3, 4, 5] };
const settings: TimerSettings = {
  remindAfterMs: 4 * H,
  remindAgainMs: 24 * H,
  escalateAfterMs: 48 * H,
  staleAfterMs: 3 * D,
  expireAfterMs: 14 * D,
  escalateIntents: ['ask_question', 'propose_action'],
  workingHours: null,
};
// Monday 30 Nov 2026, 10:00 UTC.
const T0 = new Date('2026-11-30T10:00:00Z');
const pending = (over: Partial<ThreadDoc> = {}): ThreadDoc =>
  thread({ intent: 'ask_question', created_at: T0, ...over });
const fire = (doc: ThreadDoc, step: Parameters<typeof applyTimerStep>[1], at: Date) =>
  applyTimerStep(doc, step, at, null, settings);

describe('the next step of a pending handoff', () => {
  test('remind-1, remind-2, escalate, expire in that order, each once', () => {
    let doc = pending();
    const seen: string[] = [];
    for (let i = 0; i < 4; i += 1) {
      const next = nextTimerStep(doc, settings, 'UTC')!;
      seen.push(`${next.step}@${(next.due.getTime() - T0.getTime()) / H}h`);
      doc = fire(doc, next.step, next.due);
    }
    expect(seen).toEqual(['remind-1@4h', 'remind-2@28h', 'escalate@48h', 'expire@336h']);
    expect(doc.status).toBe('expired');
    expect(nextTimerStep(doc, settings, 'UTC')).toBeNull();
  });

  test('a question its recipient answered is neither reminded nor escalated, only expires', () => {
    const answered = pending({ answered_at: new Date(T0.getTime() + H), answer_seq: 1 });
    expect(nextTimerStep(answered, settings, 'UTC')).toEqual({ step: 'expire', due: new Date(T0.getTime() + 14 * D) });
    // Answered after a reminder: no second one, no escalation.
    const reminded = fire(pending(), 'remind-1', new Date(T0.getTime() + 4 * H));
    expect(nextTimerStep({ ...reminded, answered_at: new Date(T0.getTime() + 5 * H) }, settings, 'UTC')!.step).toBe(
      'expire',
    );
  });

  test('an inform is not escalated; a handoff token that runs out first expires it then', () => {
    const token = {
      expires_at: new Date(T0.getTime() + 7 * D),
      consumed_at: null,
    } as unknown as ThreadDoc['handoff_token'];
    let doc = pending({ intent: 'inform', handoff_token: token });
    doc = fire(fire(doc, 'remind-1', new Date(T0.getTime() + 4 * H)), 'remind-2', new Date(T0.getTime() + 28 * H));
    expect(nextTimerStep(doc, settings, 'UTC')).toEqual({ step: 'expire', due: new Date(T0.getTime() + 7 * D) });
    expect(fire(doc, 'expire', new Date(T0.getTime() + 7 * D)).timers?.expire_reason).toBe('token_expired');
  });

  test('a snooze sets the next reminder; a step set to off never comes', () => {
    const doc = fire(pending(), 'remind-1', new Date(T0.getTime() + 4 * H));
    const snoozed = { ...doc, timers: { ...doc.timers!, snoozed_until: new Date(T0.getTime() + 5 * H) } };
    expect(nextTimerStep(snoozed, settings, 'UTC')).toEqual({ step: 'remind-2', due: new Date(T0.getTime() + 5 * H) });
    expect(nextTimerStep(pending(), { ...settings, remindAfterMs: null, escalateAfterMs: null }, 'UTC')?.step).toBe(
      'expire',
    );
  });

  test('accepted: one nudge after stale_after; a final state: nothing', () => {
    const accepted = pending({ status: 'accepted', accepted_at: new Date(T0.getTime() + H) });
    expect(nextTimerStep(accepted, settings, 'UTC')).toEqual({
      step: 'stale',
      due: new Date(T0.getTime() + H + 3 * D),
    });
    expect(nextTimerStep(fire(accepted, 'stale', new Date(T0.getTime() + 4 * D)), settings, 'UTC')).toBeNull();
    for (const status of ['completed', 'declined', 'cancelled', 'expired'] as const)
      expect(nextTimerStep(pending({ status }), settings, 'UTC')).toBeNull();
  });

  test('a reminder due outside working hours moves to the next working start in the recipient’s zone', () => {
    // Created Friday 16:00 in New York (21:00 UTC): 4 h later is 20:00 Friday there → Monday 09:00 New York.
    const friday = pending({ created_at: new Date('2026-12-04T21:00:00Z') });
    const next = nextTimerStep(friday, { ...settings, workingHours: WEEKDAYS_9_TO_6 }, 'America/New_York')!;
    expect(next).toEqual({ step: 'remind-1', due: new Date('2026-12-07T14:00:00Z') });
  });
});

describe('working hours and Snooze', () => {
  test('inside hours stays; before the start moves to today’s start; a weekend to Monday', () => {
    expect(nextWorkingTime(new Date('2026-12-01T10:30:00Z'), WEEKDAYS_9_TO_6, 'UTC')).toEqual(
      new Date('2026-12-01T10:30:00Z'),
    );
    expect(nextWorkingTime(new Date('2026-12-01T06:00:00Z'), WEEKDAYS_9_TO_6, 'UTC')).toEqual(
      new Date('2026-12-01T09:00:00Z'),
    );
    expect(nextWorkingTime(new Date('2026-12-05T12:00:00Z'), WEEKDAYS_9_TO_6, 'Europe/Berlin')).toEqual(
      new Date('2026-12-07T08:00:00Z'),
    );
    expect(nextWorkingTime(new Date('2026-12-05T12:00:00Z'), null, 'UTC')).toEqual(new Date('2026-12-05T12:00:00Z'));
  });

  test('across a daylight-saving change the start is still 09:00 local', () => {
    // Sunday 29 March 2026 Europe/Berlin switches to CEST (UTC+2): Monday 09:00 is 07:00 UTC.
    expect(nextWorkingTime(new Date('2026-03-28T12:00:00Z'), WEEKDAYS_9_TO_6, 'Europe/Berlin')).toEqual(
      new Date('2026-03-30T07:00:00Z'),
    );
  });

  test('1 h, tomorrow morning, next week', () => {
    const tuesday = new Date('2026-12-01T15:00:00Z');
    expect(snoozedUntil('1h', tuesday, WEEKDAYS_9_TO_6, 'UTC')).toEqual(new Date('2026-12-01T16:00:00Z'));
    // In Tokyo it is already Wednesday 00:00, so tomorrow morning is Thursday 09:00 there.
    expect(snoozedUntil('tomorrow', tuesday, WEEKDAYS_9_TO_6, 'Asia/Tokyo')).toEqual(new Date('2026-12-03T00:00:00Z'));
    expect(snoozedUntil('week', tuesday, WEEKDAYS_9_TO_6, 'UTC')).toEqual(new Date('2026-12-07T09:00:00Z'));
    // Friday's "tomorrow morning" is Monday's start when weekends do not work.
    expect(snoozedUntil('tomorrow', new Date('2026-12-04T15:00:00Z'), WEEKDAYS_9_TO_6, 'UTC')).toEqual(
      new Date('2026-12-07T09:00:00Z'),
    );
  });
});

describe('the sender’s line', () => {
  test('reminded @bob · reminded @bob again · escalated to a channel', () => {
    let doc = fire(
      fire(pending(), 'remind-1', new Date(T0.getTime() + 4 * H)),
      'remind-2',
      new Date(T0.getTime() + 28 * H),
    );
    doc = applyTimerStep(
      doc,
      'escalate',
      new Date(T0.getTime() + 48 * H),
      { kind: 'channel', slack: 'C0ESCALATE' },
      settings,
    );
    expect(timerSummaryLine(doc, bob)).toBe(
      ':alarm_clock: reminded <@U0BOB> · reminded <@U0BOB> again · escalated to <#C0ESCALATE>',
    );
    expect(timerSummaryLine(pending(), bob)).toBeNull();
  });
});

describe('timer settings', () => {
  const base = { MONGODB_URL: 'mongodb://x' };
  test('defaults', () => {
    expect(loadConfig(base).timers).toEqual({
      remindAfterMs: 4 * H,
      remindAgainMs: 24 * H,
      escalateAfterMs: 48 * H,
      staleAfterMs: 3 * D,
      expireAfterMs: 14 * D,
      escalateIntents: ['ask_question', 'propose_action'],
      workingHours: WEEKDAYS_9_TO_6,
      sweepIntervalMs: 60_000,
    });
  });

  test('values and off', () => {
    const t = loadConfig({
      ...base,
      RELAY_REMIND_AFTER: '30m',
      RELAY_ESCALATE_AFTER: 'off',
      RELAY_EXPIRE_AFTER: '2w',
      RELAY_ESCALATE_CHANNEL: 'C0123ABCD',
      RELAY_WORKING_HOURS: 'off',
      RELAY_ESCALATE_INTENTS: 'none',
    }).timers;
    expect(t).toMatchObject({
      remindAfterMs: 30 * 60_000,
      escalateAfterMs: null,
      expireAfterMs: 14 * D,
      escalateChannel: 'C0123ABCD',
      workingHours: null,
      escalateIntents: [],
    });
  });

  test.each([
    [
      'RELAY_REMIND_AFTER',
      'soon',
      /^RELAY_REMIND_AFTER: must be a duration from 1m to 366d such as 30m, 4h, 3d or 2w .* \(got "soon"\)$/,
    ],
    ['RELAY_STALE_AFTER', '30s', /^RELAY_STALE_AFTER: must be a duration/],
    ['RELAY_EXPIRE_AFTER', '400d', /^RELAY_EXPIRE_AFTER: must be a duration/],
    ['RELAY_ESCALATE_CHANNEL', '#general', /^RELAY_ESCALATE_CHANNEL: must be a Slack channel id/],
    ['RELAY_WORKING_HOURS', '18:00-09:00', /^RELAY_WORKING_HOURS: must be HH:MM-HH:MM with the start before the end/],
    ['RELAY_WORKING_DAYS', 'mon,funday', /^RELAY_WORKING_DAYS: must be a comma-separated list of sun,mon/],
    ['RELAY_ESCALATE_INTENTS', 'inform,chat', /^RELAY_ESCALATE_INTENTS: must be "none" or a comma-separated subset/],
    ['RELAY_TIMER_SWEEP_INTERVAL', '2d', /^RELAY_TIMER_SWEEP_INTERVAL: must be a duration/],
  ])('%s=%s stops start-up naming it', (variable, value, message) => {
    expect(() => loadConfig({ ...base, [variable]: value })).toThrow(message);
  });
});
