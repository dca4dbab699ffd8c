// Local services: free loopback ports for FerretDB, Redis and the relay, and the retry when one is taken.
import * as net from 'node:net';
import { errorMessage } from './child-process';

export async function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0 }, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts a server on `requested`, or on a free port when none is requested. A port we picked can be
 * taken between picking and binding: then try another one (a requested port is never swapped).
 */
export async function onFreePort<T>(requested: number | undefined, start: (port: number) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const port = requested ?? (await findFreePort());
    try {
      return await start(port);
    } catch (err) {
      if (requested !== undefined || attempt >= 3 || !/address already in use/i.test(errorMessage(err))) throw err;
    }
  }
}
