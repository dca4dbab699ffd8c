// Bench phase "MCP handoff_to_teammate over stdio, sequential": the real stdio MCP server process
// (dist/mcp/stdio.js) driven by the SDK's Client over StdioClientTransport, against the bench relay.
// Measures the server's ready time (spawn → connect() resolved, i.e. the initialize handshake done) and
// sequential handoff_to_teammate calls beside the same create as a direct `message/send` POST over the
// bench's HTTP client, sequential, same count. Targets: p50 ≤ 5 ms, ready ≤ 300 ms. Misses are reported.
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { measure, printTable, summarize, type PhaseOutput, type Target } from './bench-measure';

export const MCP_WARMUP = 20;
export const MCP_REQUESTS = 300;
const P50_TARGET_MS = 5;
const READY_TARGET_MS = 300;

const MCP_TARGET: Target = { label: `p50 ≤${P50_TARGET_MS} ms`, met: (ours) => ours.p50 <= P50_TARGET_MS };

export interface McpBenchOptions extends PhaseOutput {
  relayUrl: string;
  senderKey: string;
  /** Arguments of one handoff_to_teammate call. */
  toolArguments: Record<string, unknown>;
  /** The baseline: the same create as one direct message/send over HTTP. */
  directCreate: () => Promise<void>;
}

/** dist/scripts/bench-mcp.js → dist/mcp/stdio.js */
const STDIO = path.join(__dirname, '..', 'mcp', 'stdio.js');

export async function benchMcp(opts: McpBenchOptions): Promise<void> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (typeof v === 'string') env[k] = v;
  Object.assign(env, { RELAY_URL: opts.relayUrl, RELAY_API_KEY: opts.senderKey });

  opts.progress(`MCP: spawning ${STDIO} over stdio…`);
  const transport = new StdioClientTransport({ command: process.execPath, args: [STDIO], env, stderr: 'inherit' });
  const client = new Client({ name: 'handoff-relay-bench', version: '0.0.0' });
  const spawned = performance.now();
  await client.connect(transport);
  const readyMs = performance.now() - spawned;
  try {
    const call = async () => {
      const result = await client.callTool({ name: 'handoff_to_teammate', arguments: opts.toolArguments });
      const threadId = (result.structuredContent as { thread_id?: unknown } | undefined)?.thread_id;
      if (result.isError || typeof threadId !== 'string')
        throw new Error(`handoff_to_teammate failed: ${JSON.stringify(result)}`);
    };
    opts.progress(
      `MCP handoff_to_teammate, sequential: warm-up ${MCP_WARMUP} + ${MCP_REQUESTS} direct message/send, ${MCP_REQUESTS} tool calls…`,
    );
    await measure(1, MCP_WARMUP, () => opts.directCreate());
    await measure(1, MCP_WARMUP, call);
    const base = summarize(await measure(1, MCP_REQUESTS, () => opts.directCreate()));
    const ours = summarize(await measure(1, MCP_REQUESTS, call));
    printTable(
      'MCP handoff_to_teammate over stdio, sequential',
      'the same create as a direct message/send POST over HTTP, sequential, same count',
      [{ name: 'MCP handoff_to_teammate', concurrency: 1, ours, baseline: base, target: MCP_TARGET }],
      opts.out,
    );
    opts.out(
      `MCP stdio server ready (spawn → connect() resolved): ${readyMs.toFixed(1)} ms; target ≤${READY_TARGET_MS} ms ${readyMs <= READY_TARGET_MS ? 'PASS' : 'MISS'}`,
    );
    opts.out(
      `MCP p50 ${ours.p50.toFixed(2)} ms (direct ${base.p50.toFixed(2)} ms, +${(ours.p50 - base.p50).toFixed(2)} ms over stdio); target ≤${P50_TARGET_MS} ms ${MCP_TARGET.met(ours, base) ? 'PASS' : 'MISS'}`,
    );
  } finally {
    await client.close();
  }
}
