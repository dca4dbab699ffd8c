// Every request's id (an incoming X-Request-Id kept when sane) and child logger, set first on the HTTP app.
import { randomUUID } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { routePattern } from './metrics';

interface Locals {
  requestId: string;
  log: Logger;
}

/** An incoming X-Request-Id is kept when it is short and plain (it ends up in logs and headers), else replaced. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** Routes polled by probes and scrapers log at debug, so they do not drown the request log. */
const QUIET_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

export function requestId(res: Response): string {
  return (res.locals as Locals).requestId;
}

/** Gives the request its id and logger, echoes the id, and logs one line when the answer is sent. */
export function requestContext(log: Logger): RequestHandler {
  return (req, res, next) => {
    const incoming = req.get('x-request-id');
    const id = incoming && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    const locals = res.locals as Locals;
    locals.requestId = id;
    locals.log = log.child({ request_id: id });
    res.setHeader('X-Request-Id', id);
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      const line = {
        method: req.method,
        route: routePattern(req),
        status: res.statusCode,
        ms: Number(process.hrtime.bigint() - started) / 1e6,
      };
      if (QUIET_PATHS.has(req.path)) locals.log.debug(line, 'http request');
      else locals.log.info(line, 'http request');
    });
    next();
  };
}
