// Bearer authentication for every HTTP route: a teammate's API key, or the admin key.
import type { Request } from 'express';
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

/** The active teammate whose API key the request bears; unauthenticated otherwise. */
export function teammateAuth(teammates: Pick<Teammates, 'authenticate'>): (req: Request) => Promise<AgentDoc> {
  return async (req) => {
    const key = bearer(req);
    const agent = key ? await teammates.authenticate(key) : null;
    if (!agent) throw new RelayError('unauthenticated', key ? 'The API key is not valid' : 'Missing Authorization: Bearer <api key>');
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
