// One signed webhook POST (Standard Webhooks headers), through the SSRF guard.
import http from 'node:http';
import https from 'node:https';
import { Webhook } from 'standardwebhooks';
import { assertAllowedLiteral, guardedLookup, type TargetPolicy } from './ssrf-guard';

// No redirects, a hard timeout, and only the first few KB of the answer read.

export const WEBHOOK_TIMEOUT_MS = 15_000;
/** How much of a receiver's answer is read (the challenge echo fits easily). */
const MAX_RESPONSE_BYTES = 16 * 1024;

export interface SignedPost {
  url: string;
  /** The teammate's `whsec_…` secret, then any previous one still inside its rotation overlap. */
  secrets: readonly string[];
  /** `webhook-id`: stable across retries so receivers can de-duplicate. */
  id: string;
  body: string;
  policy: TargetPolicy;
  timeoutMs?: number;
  now?: Date;
  /** More headers (an A2A push's notification token and Authorization); never the signature ones. */
  headers?: Record<string, string>;
}

export interface PostResult {
  status: number;
  body: string;
}

/**
 * Headers that sign `body` as message `id` at `timestamp` (seconds) per Standard Webhooks: one `v1,…` signature per
 * secret, space-separated, so during a rotation a receiver holding either secret verifies the call.
 */
export function signatureHeaders(
  secrets: readonly string[],
  id: string,
  timestamp: Date,
  body: string,
): Record<string, string> {
  if (secrets.length === 0) throw new Error('signatureHeaders: no secret to sign with');
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(id, timestamp, body)).join(' '),
  };
}

/** POSTs once; resolves with any HTTP answer (3xx included: redirects are not followed), rejects on network, guard or timeout errors. */
export async function postSigned(request: SignedPost): Promise<PostResult> {
  const url = new URL(request.url);
  assertAllowedLiteral(url, request.policy);
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'handoff-relay-webhooks/0.1',
    ...request.headers,
    ...signatureHeaders(request.secrets, request.id, request.now ?? new Date(), request.body),
  };
  const transport = url.protocol === 'https:' ? https : http;
  const timeoutMs = request.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  return new Promise<PostResult>((resolve, reject) => {
    const req = transport.request(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': Buffer.byteLength(request.body) },
      lookup: guardedLookup(request.policy),
      agent: false,
    });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const finish = () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
      };
      res.on('data', (chunk: Buffer) => {
        if (size >= MAX_RESPONSE_BYTES) return;
        chunks.push(chunk.subarray(0, MAX_RESPONSE_BYTES - size));
        size += chunk.length;
        if (size >= MAX_RESPONSE_BYTES) {
          res.destroy();
          finish();
        }
      });
      res.on('end', finish);
      res.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
    req.end(request.body);
  });
}
