// The policy decision: first matching rule wins, else the default. Pure, so every surface gets the same answer.
import type { OneOf, Policy, PolicyAction, PolicyEffect, PolicyMatch, PolicyRule, Weekday } from './policy';
import { localMoment } from './local-time';
import type { Intent, Surface } from './schemas';

export interface PartyFacts {
  handle: string;
  team: string;
  role: string;
  skills: readonly string[];
}

/** Everything a rule can match on, gathered by the service before any write. */
export interface PolicyRequest {
  action: PolicyAction;
  via: Surface;
  actor: PartyFacts;
  sender: PartyFacts;
  recipient: PartyFacts;
  intent: Intent;
  artifact_types: readonly string[];
  target_files: readonly string[];
  at: Date;
}

export interface PolicyDecision {
  effect: PolicyEffect;
  /** The rule that decided; null when the policy's default did. */
  rule_id: string | null;
  policy_version: string;
  /** For deny: the words the caller sees. */
  reason?: string;
  rule?: PolicyRule;
}

export function decide(policy: Policy, request: PolicyRequest): PolicyDecision {
  const clocks = new Map<string, LocalTime>();
  for (const rule of policy.rules) {
    if (!matches(rule.match, request, clocks)) continue;
    return {
      effect: rule.effect,
      rule_id: rule.id,
      policy_version: policy.version,
      ...(rule.effect === 'deny' ? { reason: rule.reason } : {}),
      rule,
    };
  }
  return {
    effect: policy.default,
    rule_id: null,
    policy_version: policy.version,
    ...(policy.default === 'deny'
      ? { reason: policy.default_reason ?? 'No policy rule allows this; ask an admin to add one' }
      : {}),
  };
}

/** The relay records REST calls as `api`; policies call that surface `rest`. */
const POLICY_SURFACE: Record<Surface, string> = { mcp: 'mcp', a2a: 'a2a', slack: 'slack', web: 'web', api: 'rest' };

/** `clocks` keeps each zone's local time for one request, so fifty time rules read the clock once per zone. */
export function matches(match: PolicyMatch, request: PolicyRequest, clocks = new Map<string, LocalTime>()): boolean {
  if (match.action && !oneOf(match.action, [request.action])) return false;
  if (match.via && !oneOf(match.via, [POLICY_SURFACE[request.via]])) return false;
  if (match.intent && !oneOf(match.intent, [request.intent])) return false;
  if (match.sender && !partyMatches(match.sender, request.sender)) return false;
  if (match.recipient && !partyMatches(match.recipient, request.recipient)) return false;
  if (match.actor && !partyMatches(match.actor, request.actor)) return false;
  if (match.artifact_types && !match.artifact_types.some((t) => request.artifact_types.includes(t))) return false;
  if (match.target_files) {
    const { count, under } = match.target_files;
    const n = request.target_files.length;
    if (count?.min !== undefined && n < count.min) return false;
    if (count?.max !== undefined && n > count.max) return false;
    if (under && !request.target_files.some((file) => under.some((prefix) => isUnder(file, prefix)))) return false;
  }
  if (match.time && !timeMatches(match.time, localTime(match.time.zone, request.at, clocks))) return false;
  return true;
}

function oneOf(matcher: OneOf, values: readonly string[]): boolean {
  const hit = values.some((v) => matcher.any.includes(v));
  return matcher.not ? !hit : hit;
}

function partyMatches(match: NonNullable<PolicyMatch['sender']>, party: PartyFacts): boolean {
  if (match.handle && !oneOf(match.handle, [party.handle])) return false;
  if (match.team && !oneOf(match.team, [party.team])) return false;
  if (match.role && !oneOf(match.role, [party.role])) return false;
  if (match.skill && !oneOf(match.skill, party.skills)) return false;
  return true;
}

/** `infra/` covers `infra/main.tf`; `infra` covers `infra` and `infra/…` but not `infrastructure`. */
function isUnder(file: string, prefix: string): boolean {
  const path = file.replace(/^\.\//, '');
  if (prefix.endsWith('/')) return path.startsWith(prefix);
  return path === prefix || path.startsWith(`${prefix}/`);
}

interface LocalTime {
  day: Weekday;
  minute: number;
}

/** Weekday and minute of the day at `at` in `zone`. */
function localTime(zone: string, at: Date, clocks: Map<string, LocalTime>): LocalTime {
  let local = clocks.get(zone);
  if (!local) {
    // The zone was checked when the policy was parsed (policy.ts); a runtime that lost it reads as UTC.
    const seen = localMoment(at, zone) ?? localMoment(at, 'UTC')!;
    local = { day: DAYS[seen.isoWeekday % 7]!, minute: seen.minutes };
    clocks.set(zone, local);
  }
  return local;
}

/** A `from`–`to` range past midnight (22:00–06:00) wraps. */
function timeMatches(time: NonNullable<PolicyMatch['time']>, { day, minute }: LocalTime): boolean {
  if (time.from !== undefined && time.to !== undefined) {
    const from = toMinutes(time.from);
    const to = toMinutes(time.to);
    const inside = from <= to ? minute >= from && minute < to : minute >= from || minute < to;
    if (!inside) return false;
    // A night range belongs to the day it started: 02:00 on Saturday is Friday night.
    if (time.days) {
      const startedYesterday = from > to && minute < to;
      return time.days.includes(startedYesterday ? previousDay(day) : day);
    }
    return true;
  }
  return time.days ? time.days.includes(day) : true;
}

function toMinutes(hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number);
  return h! * 60 + m!;
}

const DAYS: Weekday[] = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
function previousDay(day: Weekday): Weekday {
  return DAYS[(DAYS.indexOf(day) + 6) % 7]!;
}
