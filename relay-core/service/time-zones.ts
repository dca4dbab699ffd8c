// Port: a teammate's time zone (their Slack profile's `tz`, from users.info: bot/delivery/slack-time-zones.ts).
import type { AgentDoc } from '../domain/documents';

export interface TimeZones {
  /** An IANA zone such as Europe/Berlin; null when unknown (not linked to Slack, or Slack does not say). */
  zoneOf(agent: AgentDoc): Promise<string | null>;
  /** What zoneOf would answer when that needs no call (remembered); undefined when only zoneOf can tell. */
  known(agent: AgentDoc): string | null | undefined;
}

/** Without Slack every teammate's working hours are read in UTC. */
export const utcOnly: TimeZones = { zoneOf: async () => null, known: () => null };
