// CI (.ci/run): the official MCP conformance suite's server scenarios against a started relay's /mcp, through a
// loopback proxy that adds a registered teammate's key (the suite sends no headers of its own).
//
//   node dist/scripts/mcp-conformance.js --node <node 22> --suite <conformance dist/index.js> --expected <yml> [--relay <cli.js>]
//
// Exits with the suite's status: 0 when every scenario passes except those listed in the expected-failures file, 1 on
// a failure not listed there or a listed scenario that now passes (the list must shrink with it).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const READY_TIMEOUT_MS = 180_000;
const STOP_TIMEOUT_MS = 60_000;

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = http.createServer();
    server.on('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => done(port));
    });
  });
}

async function waitReady(url: string, relay: ChildProcess): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (relay.exitCode !== null) throw new Error(`the relay exited (status ${relay.exitCode}) before it was ready`);
    const ok = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the relay at ${url} was not ready after ${READY_TIMEOUT_MS / 1000} s`);
}

async function register(url: string, adminKey: string): Promise<string> {
  const response = await fetch(`${url}/admin/agents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ handle: 'conformance@ci', name: 'MCP conformance suite', role: 'ci' }),
  });
  const body = (await response.json()) as { api_key?: string };
  if (response.status !== 201 || !body.api_key)
    throw new Error(`registering the suite's teammate answered ${response.status}: ${JSON.stringify(body)}`);
  return body.api_key;
}

/** Forwards every request to the relay as it came (Host and Origin included, for the DNS-rebinding scenario) plus the key. */
function keyProxy(relayPort: number, apiKey: string): Promise<{ port: number; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    const upstream = http.request(
      {
        host: '127.0.0.1',
        port: relayPort,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, authorization: `Bearer ${apiKey}` },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  return new Promise((done) =>
    server.listen(0, '127.0.0.1', () =>
      done({
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise((closed) => {
            server.closeAllConnections();
            server.close(() => closed());
          }),
      }),
    ),
  );
}

function exited(child: ChildProcess): Promise<number> {
  return new Promise((done) =>
    child.exitCode !== null ? done(child.exitCode) : child.once('exit', (code) => done(code ?? 1)),
  );
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      node: { type: 'string' },
      suite: { type: 'string' },
      expected: { type: 'string' },
      relay: { type: 'string', default: join(__dirname, 'cli.js') },
    },
  });
  if (!values.node || !values.suite || !values.expected)
    throw new Error(
      'usage: --node <node 22 binary> --suite <conformance dist/index.js> --expected <expected-failures.yml> [--relay <cli.js>]',
    );

  const dataDir = mkdtempSync(join(tmpdir(), 'mcp-conformance-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const adminKey = `hra_${randomBytes(24).toString('base64url')}`;
  const relay = spawn(process.execPath, [resolve(values.relay), 'start'], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      RELAY_PUBLIC_URL: url,
      RELAY_DATA_DIR: dataDir,
      RELAY_ADMIN_KEY: adminKey,
      RELAY_KEY_PEPPER: randomBytes(32).toString('hex'),
      // Its own database and queues, should MONGODB_URL point at a shared server.
      MONGODB_DB: `conformance_${randomBytes(4).toString('hex')}`,
      RELAY_QUEUE_PREFIX: `conformance-${randomBytes(4).toString('hex')}`,
      RELAY_DIGEST_AT: 'off',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  let proxy: Awaited<ReturnType<typeof keyProxy>> | undefined;
  try {
    await waitReady(url, relay);
    proxy = await keyProxy(port, await register(url, adminKey));
    console.log(`relay ${url}; the suite calls http://127.0.0.1:${proxy.port}/mcp (a proxy adding the teammate's key)`);
    const suite = spawn(
      values.node,
      [
        values.suite,
        'server',
        '--url',
        `http://127.0.0.1:${proxy.port}/mcp`,
        '--expected-failures',
        resolve(values.expected),
        '--output-dir',
        join(dataDir, 'results'),
      ],
      { stdio: ['ignore', 'inherit', 'inherit'] },
    );
    return await exited(suite);
  } finally {
    await proxy?.close();
    relay.kill('SIGTERM');
    const stopped = await Promise.race([
      exited(relay),
      new Promise<null>((r) => setTimeout(() => r(null), STOP_TIMEOUT_MS).unref()),
    ]);
    if (stopped === null) relay.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  (status) => process.exit(status),
  (error: unknown) => {
    console.error(`mcp-conformance: ${(error as Error).message}`);
    process.exit(1);
  },
);
