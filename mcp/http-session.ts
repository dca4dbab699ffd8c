// /mcp's MCP servers over Streamable HTTP: one per request without a session, one per Mcp-Session-Id session.
// http-mount.ts loads this module (and with it the MCP SDK's server side) on the first request a key lets through.
import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Request, Response } from 'express';
import type { AgentDoc } from '../relay-core/domain/documents';
import type { McpSessionPort, McpSessions } from './mcp-sessions';
import type { RelayClient } from './relay-client';
import { createServer } from './server';

/** A request that opens a session: an initialize without Mcp-Session-Id. */
export function opensSession(body: unknown): boolean {
  return isInitializeRequest(body);
}

/** One request without a session: a fresh server and stateless transport, both gone when the response closes. */
export async function serveMcpRequest(relay: RelayClient, req: Request, res: Response): Promise<void> {
  const { server, cleanup } = createServer(relay);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on('close', () => {
    void transport.close();
    void cleanup();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, req.body);
}

/** An open session: its transport, its server (with subscriptions) and the teammate its key named last. */
export class McpHttpSession implements McpSessionPort {
  caller: AgentDoc;
  private closing: Promise<void> | undefined;

  constructor(
    readonly id: string,
    caller: AgentDoc,
    private readonly transport: StreamableHTTPServerTransport,
    private readonly cleanup: () => Promise<void>,
    private readonly onClosed: () => void,
  ) {
    this.caller = caller;
  }

  /** Serves one POST, GET (the server's stream) or DELETE of this session. */
  async handle(req: Request, res: Response): Promise<void> {
    await this.transport.handleRequest(req, res, req.body);
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.onClosed();
      await this.cleanup(); // closes the server, and with it the transport's streams
    })();
    return this.closing;
  }
}

export interface OpenSessionDeps {
  sessions: McpSessions<McpHttpSession>;
  /** The fingerprint of the key that opens it (mcp-sessions.ts keyOwner). */
  owner: string;
  caller: AgentDoc;
  /** The session's relay client: runs calls as whichever teammate `caller()` names at the time. */
  relayFor(sessionId: string, caller: () => AgentDoc): RelayClient;
}

/**
 * Serves an initialize that opens a session. The transport gives it an id (sent back as Mcp-Session-Id) and the
 * registry records it, bound to the key; an initialize that fails leaves nothing behind.
 */
export async function openMcpSession(deps: OpenSessionDeps, req: Request, res: Response): Promise<void> {
  const id = randomUUID();
  let added = false;
  // The callbacks below run only once the request is being served, after `session` is set.
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => id,
    onsessioninitialized: () => {
      added = true;
      deps.sessions.add(id, deps.owner, session);
    },
  });
  const { server, cleanup } = createServer(
    deps.relayFor(id, () => session.caller),
    { subscriptions: true },
  );
  const session = new McpHttpSession(id, deps.caller, transport, cleanup, () => deps.sessions.forget(id));
  // A DELETE (or any close of the transport) ends the session the same way its expiry does.
  server.server.onclose = () => void session.close();
  await server.connect(transport);
  try {
    await transport.handleRequest(req, res, req.body);
  } finally {
    if (!added) await session.close();
  }
}
