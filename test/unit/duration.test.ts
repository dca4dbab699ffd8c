// The one duration parser (relay-core/domain/duration.ts) and every setting that reads a duration through it: the
// documented forms, the ranges, and a bad value refused with one message naming the setting.
import { parseDuration } from '../../relay-core/domain/duration';
import { inviteCreateSchema } from '../../relay-core/domain/invite';
import { parsePolicy, PolicyError } from '../../relay-core/domain/policy';
import { loadConfig } from '../../relay-core/ops/config';
import { parseAgentConfig } from '../../scripts/agent/agent-config';

const S = 1_000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;
const ANY = { min: 0, max: Number.MAX_SAFE_INTEGER };

describe('parseDuration', () => {
  test.each([
    ['500ms', 500],
    ['30s', 30 * S],
    ['30m', 30 * M],
    ['48h', 48 * H],
    ['2d', 2 * D],
    ['2w', 14 * D],
    [' 4h ', 4 * H],
    ['1.5h', 90 * M],
    ['4 hours', 4 * H],
    ['90 minutes', 90 * M],
  ])('reads %s', (text, expected) => {
    expect(parseDuration(text, ANY)).toBe(expected);
  });

  test.each(['', ' ', 'soon', '4 parsecs', '-1h', 'h', '4h30m', '1e3s'])('refuses %j', (text) => {
    expect(parseDuration(text, ANY)).toBeNull();
  });

  test('a bare number is milliseconds only where the setting says so', () => {
    expect(parseDuration('250', ANY)).toBeNull();
    expect(parseDuration('250', { ...ANY, bareMs: true })).toBe(250);
  });

  test('the range includes both ends', () => {
    const range = { min: M, max: 366 * D };
    expect(parseDuration('1m', range)).toBe(M);
    expect(parseDuration('59s', range)).toBeNull();
    expect(parseDuration('366d', range)).toBe(366 * D);
    expect(parseDuration('367d', range)).toBeNull();
  });
});

describe('the settings that read durations', () => {
  const env = { MONGODB_URL: 'mongodb://x' };

  test('the environment: the documented forms, and their defaults', () => {
    const config = loadConfig({
      ...env,
      RELAY_REMIND_AFTER: '30m',
      RELAY_ESCALATE_AFTER: '2d',
      RELAY_EXPIRE_AFTER: '2w',
      RELAY_WEBHOOK_RETRY_SCHEDULE: '50ms,100, 5s,2h',
      RELAY_RUN_LEASE: '90s',
    });
    expect(config.timers).toMatchObject({ remindAfterMs: 30 * M, escalateAfterMs: 2 * D, expireAfterMs: 14 * D });
    expect(config.webhooks.retryScheduleMs).toEqual([50, 100, 5 * S, 2 * H]);
    expect(config.runs.leaseMs).toBe(90 * S);
    const defaults = loadConfig(env);
    expect(defaults.timers).toMatchObject({ remindAfterMs: 4 * H, remindAgainMs: 24 * H, escalateAfterMs: 48 * H });
    expect(defaults.timers.staleAfterMs).toBe(3 * D);
    expect(defaults.runs.progressIntervalMs).toBe(3 * S);
  });

  test.each([
    ['RELAY_ESCALATE_AFTER', '48', /^RELAY_ESCALATE_AFTER: must be a duration from 1m to 366d .*\(got "48"\)$/],
    ['RELAY_STALE_AFTER', '1y1d', /^RELAY_STALE_AFTER: must be a duration/],
    ['RELAY_RUN_LEASE', '2h', /^RELAY_RUN_LEASE: must be a duration from 1000ms to 1h .*\(got "2h"\)$/],
    ['RELAY_RUN_PROGRESS_INTERVAL', 'often', /^RELAY_RUN_PROGRESS_INTERVAL: must be a duration from 0ms to 1h/],
    ['RELAY_TIMER_SWEEP_INTERVAL', '50ms', /^RELAY_TIMER_SWEEP_INTERVAL: must be a duration from 100ms to 24h/],
    ['RELAY_WEBHOOK_RETRY_SCHEDULE', '5s,25h', /^RELAY_WEBHOOK_RETRY_SCHEDULE: must be 1–20 comma-separated delays/],
  ])('%s=%s stops start-up naming it', (variable, value, message) => {
    expect(() => loadConfig({ ...env, [variable]: value })).toThrow(message);
  });

  test("a policy rule's window and a team's timer are read alike; a bad one names its line and field", () => {
    const policy = parsePolicy(
      'team:\n  remind_after: 2 days\nrules:\n  - id: a\n    effect: rate_limit\n    max: 3\n    window: 90s\n',
    );
    expect(policy.team?.remind_after).toBe(2 * D);
    expect(policy.rules[0]).toMatchObject({ window: 90 * S });
    const bad = 'rules:\n  - id: a\n    effect: rate_limit\n    max: 3\n    window: "30"\n';
    expect(() => parsePolicy(bad)).toThrow(PolicyError);
    expect(() => parsePolicy(bad)).toThrow('policy:5: rules[0].window: must be a duration such as 30s, 10m, 4h or 2d');
  });

  test("an invite's expiry: up to 30 days, 7 by default", () => {
    expect(inviteCreateSchema.parse({}).expires_in).toBe(7 * D);
    expect(inviteCreateSchema.parse({ expires_in: '36h' }).expires_in).toBe(36 * H);
    const refused = inviteCreateSchema.safeParse({ expires_in: '31d' });
    expect(refused.error?.issues[0]?.message).toBe(
      'must be a duration such as 30m, 24h or 7d (at most 30d), got "31d"',
    );
  });

  test("the runner's config: time_limit and kill_grace, a bad one naming the field", () => {
    const config = parseAgentConfig({ command: ['claude'], time_limit: '45m', kill_grace: '1500' }, 'agent.yaml');
    expect(config).toMatchObject({ time_limit: 45 * M, kill_grace: 1_500 });
    expect(() => parseAgentConfig({ command: ['claude'], time_limit: '2d' }, 'agent.yaml')).toThrow(
      /^agent\.yaml: time_limit: must be a duration such as 500ms, 30s, 20m or 2h \(from 1000 ms to 24 h\), got "2d"$/,
    );
  });
});
