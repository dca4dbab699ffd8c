// Where a new handoff goes: a handle is one recipient; a role, skill or owner target is one recipient or several candidates.
import type { AgentDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';
import { parseRecipient, type RecipientTarget } from '../domain/schemas';
import type { Teammates } from './teammates';

export type Route =
  { recipient: AgentDoc; target: RecipientTarget | null } | { target: RecipientTarget; candidates: AgentDoc[] };

/** How many existing roles, skills or owned paths a recipient_not_found lists at most. */
const LISTED = 30;

/**
 * The route of `to` (already checked by recipientSchema). The sender and anyone a block separates from the sender
 * are never candidates. No candidate is recipient_not_found listing the roles (and skills or owned paths) that do exist.
 */
/** What routing reads of the teammates. */
export type RouteTeammates = Pick<Teammates, 'get' | 'assertNotBlocked' | 'candidates' | 'vocabulary'>;

export async function routeHandoff(teammates: RouteTeammates, sender: AgentDoc, to: string): Promise<Route> {
  const parsed = parseRecipient(to);
  if ('error' in parsed) throw new RelayError('invalid_params', `params.to: ${parsed.error}`);
  if (parsed.kind === 'handle') {
    const recipient = await teammates.get(parsed.handle);
    if (!recipient || recipient.status !== 'active') {
      throw new RelayError(
        'recipient_not_found',
        `No active teammate with handle ${parsed.handle}; call list_teammates to find the right handle`,
      );
    }
    teammates.assertNotBlocked(sender, recipient);
    return { recipient, target: null };
  }
  const matched = await teammates.candidates(parsed);
  const candidates = matched.filter(
    (c) => c.handle !== sender.handle && !c.blocked.includes(sender.handle) && !sender.blocked.includes(c.handle),
  );
  if (candidates.length === 1) return { recipient: candidates[0]!, target: parsed };
  if (candidates.length > 1) return { target: parsed, candidates };
  throw await notFound(teammates, parsed, matched.length > 0);
}

async function notFound(
  teammates: RouteTeammates,
  target: RecipientTarget,
  onlyExcluded: boolean,
): Promise<RelayError> {
  const vocabulary = await teammates.vocabulary();
  const distinct = (values: string[]) => [...new Set(values)].sort().slice(0, LISTED);
  const roles = distinct(vocabulary.roles);
  const skills = distinct(vocabulary.skills);
  const owned = distinct(vocabulary.repos_owned);
  const why = onlyExcluded
    ? `No teammate but you (or one a block separates you from) matches ${target.label}`
    : `No active teammate matches ${target.label}`;
  const known =
    target.kind === 'skill'
      ? `skills that exist: ${skills.join(', ') || 'none'}`
      : target.kind === 'owner'
        ? `owned paths: ${owned.join(', ') || 'none'}`
        : '';
  const message = `${why}; roles that exist: ${roles.join(', ') || 'none'}${known ? `; ${known}` : ''}. Call list_teammates to see the cards`;
  return new RelayError('recipient_not_found', message, {
    target: target.label,
    roles,
    ...(target.kind === 'skill' ? { skills } : {}),
    ...(target.kind === 'owner' ? { repos_owned: owned } : {}),
  });
}
