// The time-zone port from Slack: a linked teammate's `tz` from users.info, remembered for a while.
import type { WebClient } from '@slack/web-api';
import type { AgentDoc } from '../../relay-core/domain/documents';
import type { TimeZones } from '../../relay-core/service/time-zones';

/** People rarely move zones; an hour keeps users.info calls to a handful per person a day. */
const REMEMBER_MS = 3_600_000;

export function slackTimeZones(client: WebClient, now: () => number = Date.now): TimeZones {
  const known = new Map<string, { zone: string | null; at: number }>();
  const remembered = (user: string) => {
    const hit = known.get(user);
    return hit && now() - hit.at < REMEMBER_MS ? hit : undefined;
  };
  return {
    known(agent: AgentDoc) {
      return agent.slack_user_id ? remembered(agent.slack_user_id)?.zone : null;
    },
    async zoneOf(agent: AgentDoc) {
      const user = agent.slack_user_id;
      if (!user) return null;
      const hit = remembered(user);
      if (hit) return hit.zone;
      const info = await client.users.info({ user });
      const zone = typeof info.user?.tz === 'string' && info.user.tz ? info.user.tz : null;
      known.set(user, { zone, at: now() });
      return zone;
    },
  };
}
