// /mcp's first check, before any key is read: the Host and Origin a request came with must be this relay's (DNS rebinding).
import type { NextFunction, Request, Response } from 'express';
import { RelayError } from '../relay-core/domain/errors';
import { jsonRpcError } from '../relay-core/jsonrpc/json-rpc-error';
import { hostnameOf } from '../relay-core/ops/config';
import { requestId } from '../relay-core/ops/request-context';

// The MCP specification (transports, "Security Warning") requires a Streamable HTTP server to validate Origin: a page
// on evil.example whose name a rebinding DNS points at this relay must not reach it. Its browser sends
// `Host: evil.example` and `Origin: http://evil.example`, so both are checked. A request without Origin comes from a
// program, not a page, and passes; a Host of a loopback name can only come from this machine.

export interface McpOriginPolicy {
  /** RELAY_PUBLIC_URL: its origin and host name are always allowed. */
  publicUrl: string;
  /** RELAY_MCP_ALLOWED_ORIGINS: pages that may call /mcp (their host names are allowed as Host too). */
  allowedOrigins: readonly string[];
  /** RELAY_MCP_ALLOWED_HOSTS: more Host names (a proxy that forwards its own internal name). */
  allowedHosts: readonly string[];
}

const LOOPBACK_HOSTNAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

export function isLoopbackHostname(hostname: string): boolean {
  return LOOPBACK_HOSTNAMES.has(hostname) || hostname.endsWith('.localhost');
}

/** The check itself: null when the request may go on, else the refusal (forbidden, 403) saying what to configure. */
export function originRefusal(
  policy: McpOriginPolicy,
  host: string | undefined,
  origin: string | undefined,
): RelayError | null {
  const publicUrl = new URL(policy.publicUrl);
  const hostname = host === undefined ? null : hostnameOf(host);
  const hosts = new Set([
    publicUrl.hostname,
    ...policy.allowedHosts,
    ...policy.allowedOrigins.map((o) => new URL(o).hostname),
  ]);
  if (hostname === null || !(hosts.has(hostname) || isLoopbackHostname(hostname))) {
    return new RelayError(
      'forbidden',
      `Host ${JSON.stringify(host ?? '')} is not this relay's: /mcp answers requests for ${publicUrl.host} (RELAY_PUBLIC_URL), ` +
        'loopback names and RELAY_MCP_ALLOWED_HOSTS (DNS-rebinding protection)',
      { header: 'Host' },
    );
  }
  if (origin === undefined) return null;
  // A relay whose public URL is a loopback one is a local relay: any local page (another port) may call it.
  const local = isLoopbackHostname(publicUrl.hostname);
  let url: URL | undefined;
  try {
    url = new URL(origin);
  } catch {
    url = undefined;
  }
  const allowed =
    url !== undefined &&
    /^https?:$/.test(url.protocol) &&
    (url.origin === publicUrl.origin ||
      policy.allowedOrigins.includes(url.origin) ||
      (local && isLoopbackHostname(url.hostname)));
  if (allowed) return null;
  return new RelayError(
    'forbidden',
    `Origin ${JSON.stringify(origin)} may not call /mcp: a browser page must be served from ${publicUrl.origin} (RELAY_PUBLIC_URL) or an origin ` +
      'in RELAY_MCP_ALLOWED_ORIGINS (DNS-rebinding protection); programs send no Origin',
    { header: 'Origin' },
  );
}

/** Express middleware: a refused request gets 403 with a JSON-RPC error body (id null: the body is not read). */
export function originGuard(policy: McpOriginPolicy) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const refusal = originRefusal(policy, req.headers.host, req.headers.origin);
    if (!refusal) return next();
    res.status(403).json(jsonRpcError(null, refusal, requestId(res)));
  };
}
