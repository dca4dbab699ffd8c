// bull-board at /admin/queues: see, retry and clean the delivery queues (the dead-letter list lives here), behind the admin key.
import type { Queue } from 'bullmq';
import type express from 'express';
import type { NextFunction, Request, Response } from 'express';
import { constantTimeEqual } from '../ops/api-keys';
import { bearer } from './bearer-auth';

export const ADMIN_QUEUES_PATH = '/admin/queues';
const REALM = 'handoff-relay admin';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The admin key from `Authorization: Bearer <key>`, or from HTTP Basic (any user name, the key as password) for browsers. */
function presentedKey(req: Request): { key: string; scheme: 'bearer' | 'basic' } | undefined {
  const token = bearer(req);
  if (token) return { key: token, scheme: 'bearer' };
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(req.get('authorization') ?? '');
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : { key: decoded.slice(colon + 1), scheme: 'basic' };
}

/**
 * A browser re-sends Basic credentials to any request for this origin, including one a foreign page
 * triggers: a change (retry, clean, pause) through Basic must come from this origin (Origin header).
 */
function sameOrigin(req: Request): boolean {
  const origin = req.get('origin');
  if (!origin) return req.get('sec-fetch-site') === undefined || req.get('sec-fetch-site') === 'same-origin';
  try {
    return new URL(origin).host === req.get('host');
  } catch {
    return false;
  }
}

export function adminQueuesAuth(adminKey: string) {
  return (req: Request, res: Response, next: NextFunction) => {
    const presented = presentedKey(req);
    if (!presented || !constantTimeEqual(presented.key, adminKey)) {
      res.setHeader('WWW-Authenticate', `Basic realm="${REALM}", charset="UTF-8"`);
      res.status(401).json({ code: 'unauthenticated', message: 'Missing or wrong admin key (RELAY_ADMIN_KEY): send it as a Bearer token, or as the Basic password' });
      return;
    }
    if (presented.scheme === 'basic' && !SAFE_METHODS.has(req.method) && !sameOrigin(req)) {
      res.status(403).json({ code: 'forbidden', message: 'Cross-origin change refused; use the board from this relay\'s own origin' });
      return;
    }
    next();
  };
}

/**
 * Mounts the board for the given queues (whatever queues the relay has) under /admin/queues. bull-board loads on
 * the first request the admin key lets through (a relay whose board nobody opens never holds its few MB).
 */
export function mountAdminQueues(app: express.Express, opts: { adminKey: string; queues: readonly Queue[] }): void {
  let board: Promise<express.Router> | undefined;
  const loadBoard = async (): Promise<express.Router> => {
    const [{ createBullBoard }, { BullMQAdapter }, { ExpressAdapter }] = await Promise.all([
      import('@bull-board/api'),
      import('@bull-board/api/bullMQAdapter'),
      import('@bull-board/express'),
    ]);
    const serverAdapter = new ExpressAdapter();
    serverAdapter.setBasePath(ADMIN_QUEUES_PATH);
    createBullBoard({ queues: opts.queues.map((queue) => new BullMQAdapter(queue)), serverAdapter });
    return serverAdapter.getRouter() as express.Router;
  };
  app.use(ADMIN_QUEUES_PATH, adminQueuesAuth(opts.adminKey), (req: Request, res: Response, next: NextFunction) => {
    board ??= loadBoard().catch((error: unknown) => {
      board = undefined;
      throw error;
    });
    board.then((router) => router(req, res, next), next);
  });
}
