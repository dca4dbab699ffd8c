// Completion values for MCP arguments that name a teammate or a thread, served from the relay's directory and inbox.
import type { RelayClient } from './relay-client';

/** The most values one completion answers (the MCP limit); `total` and `hasMore` tell the client there are more. */
const MAX_VALUES = 100;

interface Card {
  handle: string;
  role: string;
  skills: string[];
  repos_owned: string[];
}

function matching(values: Iterable<string>, typed: string): string[] {
  const prefix = typed.toLowerCase();
  return [...new Set(values)]
    .filter((v) => v.toLowerCase().startsWith(prefix))
    .sort()
    .slice(0, MAX_VALUES);
}

/**
 * What `to` of a handoff may be: every teammate's handle, and the role:, skill: and owner: targets their cards make
 * (see README "Handoffs to a role, a skill or an owner"), those starting with what was typed.
 */
export function teammateTargets(relay: RelayClient): (typed: string) => Promise<string[]> {
  return async (typed) => {
    const { teammates } = await relay.call<{ teammates: Card[] }>('agents/list', {});
    const values: string[] = [];
    for (const t of teammates) {
      values.push(
        t.handle,
        `role:${t.role}`,
        ...t.skills.map((s) => `skill:${s}`),
        ...t.repos_owned.map((r) => `owner:${r}`),
      );
    }
    return matching(values, typed);
  };
}

/** The ids of the threads the caller received (and with `sent`, sent) most recently, those starting with what was typed. */
export function threadIds(
  relay: RelayClient,
  boxes: ReadonlyArray<'recipient' | 'sender'> = ['recipient', 'sender'],
): (typed: string) => Promise<string[]> {
  return async (typed) => {
    const pages = await Promise.all(
      boxes.map((role) =>
        relay.call<{ items: Array<{ thread_id: string }> }>('tasks/list', {
          filter: { role },
          page: { limit: MAX_VALUES },
        }),
      ),
    );
    return matching(
      pages.flatMap((p) => p.items.map((i) => i.thread_id)),
      typed,
    );
  };
}
