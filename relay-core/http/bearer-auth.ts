// Bearer authentication for every HTTP route: a teammate's API key, or the admin key.
import type { Request } from 'express';
import type { Logger } from 'pino';
import type { AgentDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';
import { constantTimeEqual } from '../ops/api-keys';
import type { Teammates } from '../service/teammates';

/** The token of an `Authorization: Bearer …` header. */
export function bearer(req: Request): string | undefined {
  const header = req.get('authorization');
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}

/**
 * The active teammate whose API key the request bears; unauthenticated otherwise. A key that cannot be looked
 * up (the database is down) is the relay's failure, not the caller's: unavailable (503), so clients retry.
 */
export function teammateAuth(
  teammates: Pick<Teammates, 'authenticate'>,
  log: Logger,
): (req: Request) => Promise<AgentDoc> {
  return async (req) => {
    const key = bearer(req);
    let agent: AgentDoc | null;
    try {
      agent = key ? await teammates.authenticate(key) : null;
    } catch (error) {
      log.warn({ err: (error as Error).message }, 'api key lookup failed');
      throw new RelayError(
        'unavailable',
        'The relay cannot check API keys right now (its database is unreachable); retry shortly',
      );
    }
    if (!agent)
      throw new RelayError(
        'unauthenticated',
        key ? 'The API key is not valid' : 'Missing Authorization: Bearer <api key>',
      );
    return agent;
  };
}

/** Throws unauthenticated unless the request bears the admin key. */
export function adminAuth(adminKey: string): (req: Request) => void {
  return (req) => {
    const key = bearer(req);
    if (!key || !constantTimeEqual(key, adminKey)) {
      throw new RelayError('unauthenticated', 'Missing or wrong admin key (RELAY_ADMIN_KEY)');
    }
  };
}
