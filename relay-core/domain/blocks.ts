// Blocks between teammates: a block by either side stops handoffs and messages between the two.
import type { AgentDoc } from './documents';
import { RelayError } from './errors';

/** Throws teammate_blocked when either side blocks the other. */
export function assertNoBlockBetween(
  a: Pick<AgentDoc, 'handle' | 'blocked'>,
  b: Pick<AgentDoc, 'handle' | 'blocked'>,
): void {
  if (a.blocked.includes(b.handle) || b.blocked.includes(a.handle)) {
    throw new RelayError(
      'teammate_blocked',
      `A block between ${a.handle} and ${b.handle} prevents handoffs and messages between them`,
    );
  }
}
