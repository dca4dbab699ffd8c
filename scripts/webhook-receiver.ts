// A real webhook receiver on loopback for tests: records every request with its raw body, verifies nothing
// itself (tests verify with standardwebhooks as a receiver would), and answers as the test programs it.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  json: any;
}

export interface Answer {
  status: number;
  body?: string;
  headers?: Record<string, string>;
}

/** Echoes challenges (as a verified receiver does) and answers 200 to events. */
export function echoChallenge(request: ReceivedRequest): Answer {
  if (request.json?.type === 'endpoint.challenge') {
    return {
      status: 200,
      body: JSON.stringify({ challenge: request.json.challenge }),
      headers: { 'content-type': 'application/json' },
    };
  }
  return { status: 200, body: '{}' };
}

export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];
  /** How the next request is answered (null: never answer; a promise: answer once it settles); tests swap it. */
  answer: (request: ReceivedRequest) => Answer | null | Promise<Answer | null> = echoChallenge;
  private server: Server | undefined;
  private port = 0;

  async start(port = 0): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(raw);
        } catch {
          json = undefined;
        }
        const request: ReceivedRequest = { path: req.url ?? '/', headers: req.headers, raw, json };
        this.requests.push(request);
        void Promise.resolve(this.answer(request)).then((answer) => {
          if (!answer) return;
          res.writeHead(answer.status, answer.headers ?? {});
          res.end(answer.body ?? '');
        });
      });
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(port, '127.0.0.1', () => resolve());
    });
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Stops listening (connections refused) while keeping its port for a later start(). */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async restart(): Promise<void> {
    await this.start(this.port);
  }

  /** Event deliveries (not challenges). */
  events(): ReceivedRequest[] {
    return this.requests.filter((r) => r.json?.type !== 'endpoint.challenge');
  }

  challenges(): ReceivedRequest[] {
    return this.requests.filter((r) => r.json?.type === 'endpoint.challenge');
  }
}

/** Verifies a received request as a receiver would, with standardwebhooks; throws when the signature is wrong. */
export function verifyWebhook(secret: string, request: ReceivedRequest): any {
  return new Webhook(secret).verify(request.raw, {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  });
}
