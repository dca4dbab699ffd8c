// Who hears of an event by webhook: one rule for the publisher (whether an event needs a `webhooks` job at all) and
// the fan-out (who gets a delivery).
import type { ThreadDoc } from '../domain/documents';
import type { EventType } from '../domain/schemas';

/** Events whose audience depends on the thread's approvals (a held create's recipient hears none of them). */
export const APPROVAL_EVENTS: ReadonlySet<EventType> = new Set<EventType>([
  'thread.awaiting_approval',
  'thread.rejected',
  'thread.cancelled',
  'approval.requested',
  'approval.voted',
  'approval.decided',
]);

/** Events whose approvers, still to vote, hear of them. */
const ASKING_APPROVERS: ReadonlySet<EventType> = new Set<EventType>([
  'thread.awaiting_approval',
  'approval.requested',
  'approval.voted',
]);

export type AudienceThread = Pick<ThreadDoc, 'from' | 'to'> &
  Partial<Pick<ThreadDoc, 'candidates' | 'hidden_from_recipient' | 'approvals'>>;

/** Whether the audience of `type` depends on more of the thread than its sender and recipient. */
export function needsWholeThread(type: EventType, to: string | undefined): boolean {
  return APPROVAL_EVENTS.has(type) || (type === 'thread.created' && (to ?? ':').includes(':'));
}

/**
 * Every participant (sender and recipient, the actor included: an agent whose person acted in Slack wants to hear
 * of it), the sender standing in for the recipient of a create held for approval; a handoff to a role, skill or
 * owner with several candidates tells each candidate of its thread.created (they may claim it); the approvers still
 * to vote hear of the approval's request and votes.
 */
export function eventAudience(thread: AudienceThread, type: EventType): string[] {
  const to = thread.hidden_from_recipient ? thread.from : thread.to;
  const candidates = type === 'thread.created' && (thread.candidates?.length ?? 0) > 1 ? thread.candidates! : [];
  const approvers = ASKING_APPROVERS.has(type)
    ? (thread.approvals ?? [])
        .filter((a) => a.status === 'pending')
        .flatMap((a) => a.approvers.flatMap((r) => (r.handle ? [r.handle] : [])))
    : [];
  return [...new Set([thread.from, to, ...candidates, ...approvers])];
}

/**
 * Whether anyone hears of `event` by webhook or A2A push: someone of its audience has an endpoint (the fan-out's
 * copy of who does), or the task has had a push config (a config tells of what happens after the task exists, so
 * never of its thread.created). Without a `webhooks` job for the others, an event nobody hears of costs no job.
 */
export function webhookHearers(owners: {
  withEndpoint(handles: string[]): Promise<string[]>;
}): (thread: AudienceThread & { push_configs?: true }, event: { type: EventType }) => Promise<boolean> {
  return async (thread, event) => {
    if (thread.push_configs && event.type !== 'thread.created') return true;
    return (await owners.withEndpoint(eventAudience(thread, event.type))).length > 0;
  };
}
