// The relay's port, bound before anything else: a relay that cannot serve (the port in use, say) stops before it
// starts local services or touches the store and Redis (runs a migration, schedules a job, works one).
import { createServer, type Server } from 'node:http';
import { ConfigError } from '../relay-core/ops/config';

/** A failed listen as one line a person can act on; other errors as they are. */
function listenError(error: NodeJS.ErrnoException, host: string, port: number): Error {
  if (error.code === 'EADDRINUSE')
    return new ConfigError(
      'PORT',
      `${host}:${port} is already in use (another relay?): stop that process or set PORT to a free port`,
    );
  if (error.code === 'EACCES')
    return new ConfigError('PORT', `not allowed to listen on ${host}:${port} (a port below 1024 needs privileges)`);
  if (error.code === 'EADDRNOTAVAIL') return new ConfigError('HOST', `${host} is not an address of this machine`);
  return error;
}

/**
 * Listens on `host:port`. Until the relay hands the server its app, every request is answered 503 with Retry-After
 * (a health check sees the relay starting: local services, a migration).
 */
export async function bindPort(host: string, port: number): Promise<Server> {
  const server = createServer((_req, res) => {
    res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' });
    res.end(JSON.stringify({ status: 'starting' }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, host, port)));
    server.listen(port, host, () => resolve());
  });
  return server;
}
