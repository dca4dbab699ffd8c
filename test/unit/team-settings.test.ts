// A policy's `team:` section (domain/team-settings.ts): read with the policy, errors naming line and field, and laid
// over the environment's timer settings key by key.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parsePolicy, PolicyError } from '../../relay-core/domain/policy';
import { teamDigestAt, withTeamSettings, type TeamTimerSettings } from '../../relay-core/domain/team-settings';

const HOUR = 3_600_000;
const ENV: TeamTimerSettings = {
  remindAfterMs: 4 * HOUR,
  remindAgainMs: 24 * HOUR,
  escalateAfterMs: 48 * HOUR,
  staleAfterMs: 72 * HOUR,
  expireAfterMs: 14 * 24 * HOUR,
  escalateIntents: ['ask_question', 'propose_action'],
  workingHours: { startMinute: 9 * 60, endMinute: 18 * 60, days: [1, 2, 3, 4, 5] },
};

const team = (yaml: string) => parsePolicy(`rules: []\nteam:\n${yaml}`).team;

test('a policy without team: keeps every environment setting', () => {
  expect(parsePolicy('rules: []\n').team).toBeUndefined();
  expect(withTeamSettings(ENV, undefined)).toBe(ENV);
});

test('each key the team sets replaces the environment one, off turns a step off, the rest stay', () => {
  const settings = withTeamSettings(
    ENV,
    team(
      '  remind_after: 1h\n  remind_again: off\n  expire_after: 2w\n  escalate_intents: none\n  escalate_channel: C0TEAM1\n',
    ),
  );
  expect(settings).toEqual({
    ...ENV,
    remindAfterMs: HOUR,
    remindAgainMs: null,
    expireAfterMs: 14 * 24 * HOUR,
    escalateIntents: [],
    escalateChannel: 'C0TEAM1',
  });
  expect(withTeamSettings(ENV, team('  escalate_intents: [inform, inform]\n  stale_after: 30m\n'))).toEqual({
    ...ENV,
    escalateIntents: ['inform'],
    staleAfterMs: 30 * 60_000,
  });
});

test('working hours and days: each from the team when set, off means any time', () => {
  expect(withTeamSettings(ENV, team('  working_hours: 08:30-16:00\n')).workingHours).toEqual({
    startMinute: 510,
    endMinute: 960,
    days: [1, 2, 3, 4, 5],
  });
  expect(withTeamSettings(ENV, team('  working_days: [sun, thu, mon]\n')).workingHours).toEqual({
    startMinute: 540,
    endMinute: 1080,
    days: [0, 1, 4],
  });
  expect(withTeamSettings(ENV, team('  working_hours: off\n  working_days: [mon]\n')).workingHours).toBeNull();
  // Hours the environment turned off come back from the team's, on its days or Monday to Friday.
  expect(withTeamSettings({ ...ENV, workingHours: null }, team('  working_hours: 10:00-12:00\n')).workingHours).toEqual(
    { startMinute: 600, endMinute: 720, days: [1, 2, 3, 4, 5] },
  );
  expect(withTeamSettings({ ...ENV, workingHours: null }, team('  working_days: [sat]\n')).workingHours).toBeNull();
});

test('the digest time: the team one when set, off included, else the environment one', () => {
  const env = { hour: 9, minute: 30 };
  expect(teamDigestAt(env, undefined)).toBe(env);
  expect(teamDigestAt(env, team('  remind_after: 1h\n'))).toBe(env);
  expect(teamDigestAt(env, team('  digest_at: "08:15"\n'))).toEqual({ hour: 8, minute: 15 });
  expect(teamDigestAt(env, team('  digest_at: off\n'))).toBeNull();
  expect(teamDigestAt(null, team('  digest_at: "07:00"\n'))).toEqual({ hour: 7, minute: 0 });
});

test.each([
  ['a bad digest time', '  digest_at: "9:30"\n', 'team.digest_at: must be a local time HH:MM'],
  ['a bad duration', '  remind_after: 4 parsecs\n', 'team.remind_after: must be a duration from 1m to 366d'],
  ['a duration too short', '  escalate_after: 30s\n', 'team.escalate_after: must be a duration'],
  ['bad working hours', '  working_hours: 18:00-09:00\n', 'team.working_hours: must be HH:MM-HH:MM'],
  ['an unknown day', '  working_days: [monday]\n', 'team.working_days[0]:'],
  ['an unknown intent', '  escalate_intents: [urgent]\n', 'team.escalate_intents'],
  ['a channel that is not an id', '  escalate_channel: "#team"\n', 'team.escalate_channel: must be a Slack channel id'],
  ['an unknown key', '  remind_afer: 1h\n', 'team: Unrecognized key: "remind_afer"'],
])('%s is refused naming the line and field', (_name, yaml, message) => {
  let error: unknown;
  try {
    parsePolicy(`rules: []\nteam:\n${yaml}`, 'team-policy.yaml');
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(PolicyError);
  expect((error as PolicyError).message).toContain(`team-policy.yaml:3: ${message}`);
});

test('the team section is part of the policy version', () => {
  expect(parsePolicy('rules: []\nteam:\n  remind_after: 1h\n').version).not.toBe(
    parsePolicy('rules: []\nteam:\n  remind_after: 2h\n').version,
  );
});

test('the example in docs/policies.md parses, every key set', () => {
  const page = readFileSync(join(__dirname, '..', '..', 'docs', 'policies.md'), 'utf8');
  const example = /```yaml\n(team:\n[\s\S]*?)```/.exec(page)![1]!;
  const settings = parsePolicy(example, 'docs/policies.md').team!;
  expect(Object.keys(settings).sort()).toEqual([
    'digest_at',
    'escalate_after',
    'escalate_channel',
    'escalate_intents',
    'expire_after',
    'remind_after',
    'remind_again',
    'stale_after',
    'working_days',
    'working_hours',
  ]);
  expect(settings.remind_after).toBe(2 * HOUR);
});
