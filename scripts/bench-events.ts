// Bench phase `events` (BENCH_ONLY=events): event latency, from the outbox event's time (`at`, taken when the thread
// write starts) to the event arriving on a GET /events Server-Sent Events stream, in two set-ups with the relay as
// its own process (`cli.js start`, every role): the writer and the stream on the same process (woken in process),
// and on two processes over the same database and Redis (woken through Redis pub/sub). Handoffs are sent one at a
// time, each waiting for its event, so the figure is the latency of an idle relay, not of a queue.
import { performance } from 'node:perf_hooks';
import { BenchHttpClient } from './bench-http';
import { percentile } from './bench-measure';
import { handoffParams, register, startServedRelay, type ServedPhase } from './bench-paths';
import type { RelayProcess } from './bench-process';

export interface EventsBenchOptions extends ServedPhase {
  /** Handoffs per set-up (each one event on the stream). */
  count: number;
}

/** A minimal SSE reader: calls `onEvent` with each event's data as it arrives. */
async function openStream(
  url: string,
  apiKey: string,
  onEvent: (event: string, data: string) => void,
  signal: AbortSignal,
): Promise<void> {
  const response = await fetch(`${url}/events`, {
    headers: { authorization: `Bearer ${apiKey}`, accept: 'text/event-stream' },
    signal,
  });
  if (!response.ok || !response.body) throw new Error(`GET /events: HTTP ${response.status}`);
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    let event = 'message';
    let data = '';
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let newline: number;
        while ((newline = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, newline);
          buffer = buffer.slice(newline + 1);
          if (line === '') {
            if (data) onEvent(event, data);
            event = 'message';
            data = '';
          } else if (line.startsWith('event:')) event = line.slice(6).trim();
          else if (line.startsWith('data:')) data += line.slice(5).trim();
        }
      }
    } catch {
      // aborted at the end of the phase
    }
  })();
}

async function measureSetup(
  name: string,
  writer: RelayProcess,
  reader: RelayProcess,
  opts: EventsBenchOptions,
): Promise<string> {
  const client = new BenchHttpClient(writer.url);
  const controller = new AbortController();
  try {
    const suffix = name.replace(/\W+/g, '-');
    const sender = await register(client, writer.adminKey, `bench-ev-sender-${suffix}@acme`);
    const recipient = await register(client, writer.adminKey, `bench-ev-recipient-${suffix}@acme`);
    const waiting = new Map<string, (receivedAt: number, at: string) => void>();
    const early = new Map<string, { receivedAt: number; at: string }>();
    await openStream(
      reader.url,
      recipient.apiKey,
      (event, data) => {
        if (event !== 'thread.created') return;
        const receivedAt = Date.now();
        const parsed = JSON.parse(data) as { thread_id: string; at: string };
        const resolve = waiting.get(parsed.thread_id);
        if (resolve) resolve(receivedAt, parsed.at);
        else early.set(parsed.thread_id, { receivedAt, at: parsed.at });
      },
      controller.signal,
    );
    const fromWrite: number[] = [];
    const fromAnswer: number[] = [];
    for (let i = 0; i < opts.warmup + opts.count; i += 1) {
      const result = await client.call(
        sender.apiKey,
        'message/send',
        handoffParams(recipient.handle, `${opts.runId}-ev-${suffix}-${i}`),
      );
      const answeredAt = Date.now();
      const threadId = result?.task_id as string;
      const got =
        early.get(threadId) ??
        (await new Promise<{ receivedAt: number; at: string }>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no event for ${threadId} within 10 s`)), 10_000);
          waiting.set(threadId, (receivedAt, at) => {
            clearTimeout(timer);
            resolve({ receivedAt, at });
          });
        }));
      waiting.delete(threadId);
      early.delete(threadId);
      if (i < opts.warmup) continue;
      fromWrite.push(got.receivedAt - Date.parse(got.at));
      fromAnswer.push(got.receivedAt - answeredAt);
    }
    const w = [...fromWrite].sort((a, b) => a - b);
    const a = [...fromAnswer].sort((x, y) => x - y);
    return `${name.padEnd(34)} ${String(w.length).padStart(6)}  outbox event → SSE: p50 ${percentile(w, 50).toFixed(1)} ms, p99 ${percentile(w, 99).toFixed(1)} ms, max ${w[w.length - 1]!.toFixed(1)} ms · API answer → SSE: p50 ${percentile(a, 50).toFixed(1)} ms, p99 ${percentile(a, 99).toFixed(1)} ms`;
  } finally {
    controller.abort();
    client.close();
  }
}

export async function benchEvents(opts: EventsBenchOptions): Promise<void> {
  const { progress, out } = opts;
  const started = performance.now();
  progress(`events: ${opts.count} handoffs per set-up, each waiting for its event on GET /events (SSE)…`);
  const one = await startServedRelay(opts);
  const lines: string[] = [];
  try {
    lines.push(await measureSetup('same process (in-process wake)', one, one, opts));
    const two = await startServedRelay(opts);
    try {
      lines.push(await measureSetup('two processes (Redis pub/sub wake)', one, two, opts));
    } finally {
      await two.stop();
    }
  } finally {
    await one.stop();
  }
  out(`\n## events: event latency (outbox event time → SSE event received; ms, same clock)`);
  out(`${'set-up'.padEnd(34)} ${'events'.padStart(6)}`);
  for (const line of lines) out(line);
  progress(`events: done in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}
