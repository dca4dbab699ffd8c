// bull-board at /admin/queues: see, retry and clean the delivery queues (the dead-letter list lives here), behind the admin key.
import type { Queue } from 'bullmq';
import type express from 'express';
import type { NextFunction, Request, Response } from 'express';
import { RelayError } from '../domain/errors';
import { ADMIN_KEY_HELP, acceptedKey, challengeForAdminKey } from './admin-credentials';

export const ADMIN_QUEUES_PATH = '/admin/queues';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

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
    const presented = acceptedKey(req, [adminKey]);
    if (!presented) {
      challengeForAdminKey(res);
      next(new RelayError('unauthenticated', `Missing or wrong admin key: ${ADMIN_KEY_HELP}`));
      return;
    }
    if (presented.scheme === 'basic' && !SAFE_METHODS.has(req.method) && !sameOrigin(req)) {
      next(new RelayError('forbidden', "Cross-origin change refused; use the board from this relay's own origin"));
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
