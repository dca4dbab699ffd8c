// A loopback proxy in front of the fake Slack that holds chosen Web API calls before forwarding them,
// so a test can act (SIGTERM, SIGKILL) while deliveries are in flight. A held call whose caller hung up
// (its process died) is dropped, never forwarded: Slack would not have seen it either.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SlowSlackProxy {
  /** Web API base with a trailing slash; pass as SLACK_API_URL. */
  url: string;
  /** Calls being held right now. */
  held(): number;
  /**
   * Held calls that only release() or their caller hanging up will end: those taken while delayMs was Infinity. A
   * call taken before the switch still leaves when its delay is up, so held() can count one that is about to go.
   */
  stuck(): number;
  /** Held calls whose caller has gone away (its process died); release() drops them. */
  orphaned(): number;
  /** Calls dropped because the caller went away while held. */
  dropped(): number;
  /** How long each slow call is held (ms); Infinity holds until release(). */
  delayMs: number;
  /** Forwards every call held until now. */
  release(): void;
  close(): Promise<void>;
}

export async function startSlowSlackProxy(opts: {
  target: string;
  slowMethods: string[];
  delayMs: number;
}): Promise<SlowSlackProxy> {
  const waiting = new Set<() => void>();
  const stuck = new Set<() => void>();
  const orphans = new Set<() => void>();
  let dropped = 0;

  async function forward(req: IncomingMessage, body: Buffer, res: ServerResponse): Promise<void> {
    const method = (req.url ?? '').replace(/^\/api\//, '').split('?')[0]!;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string' && !['host', 'connection', 'content-length'].includes(name)) headers[name] = value;
    }
    const answer = await fetch(`${opts.target}${method}`, {
      method: req.method,
      headers,
      body: req.method === 'GET' ? undefined : new Uint8Array(body),
    });
    const payload = Buffer.from(await answer.arrayBuffer());
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
    res.end(payload);
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const method = (req.url ?? '').replace(/^\/api\//, '').split('?')[0]!;
      let gone = false;
      res.on('close', () => {
        if (res.writableEnded) return;
        gone = true;
        if (waiting.has(go)) orphans.add(go);
      });
      const go = () => {
        waiting.delete(go);
        stuck.delete(go);
        orphans.delete(go);
        if (timer) clearTimeout(timer);
        if (gone) {
          dropped += 1;
          return;
        }
        forward(req, body, res).catch((error: Error) => {
          if (!res.headersSent) res.writeHead(502);
          res.end(String(error.message));
        });
      };
      let timer: NodeJS.Timeout | undefined;
      if (!opts.slowMethods.includes(method)) return go();
      waiting.add(go);
      if (Number.isFinite(proxy.delayMs)) timer = setTimeout(go, proxy.delayMs);
      else stuck.add(go);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const proxy: SlowSlackProxy = {
    url: `http://127.0.0.1:${port}/api/`,
    delayMs: opts.delayMs,
    held: () => waiting.size,
    stuck: () => stuck.size,
    orphaned: () => orphans.size,
    dropped: () => dropped,
    release() {
      for (const go of [...waiting]) go();
    },
    async close() {
      proxy.release();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
