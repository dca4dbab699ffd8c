// Bench arithmetic and output: runs a request function at a fixed concurrency, reduces latencies to
// figures, and prints them beside the baseline they are judged against. Measurements, never assertions.
import { performance } from 'node:perf_hooks';

/** What every bench phase prints through: progress lines (stderr-ish) and its result lines. */
export interface PhaseOutput {
  progress: (line: string) => void;
  out: (line: string) => void;
}

/** The servers and the run id a phase that starts its own relay works against. */
export interface PhaseServers extends PhaseOutput {
  mongodbUrl: string;
  redisUrl: string;
  /** Database name and queue prefix stem of this run (the phase adds its own suffix). */
  runId: string;
}

export interface Sample {
  latenciesMs: number[];
  elapsedMs: number;
  /** CPU (user + system) this process spent meanwhile: the relay and the bench client together. */
  cpuMs: number;
}

/**
 * Runs `fn(0..count-1)` with `concurrency` calls in flight at every moment; one latency per call.
 * After `maxMs` no new call starts, so a very slow path is sampled rather than waited out.
 */
export async function measure(
  concurrency: number,
  count: number,
  fn: (i: number) => Promise<void>,
  maxMs = Infinity,
): Promise<Sample> {
  const latenciesMs: number[] = [];
  const deadline = performance.now() + maxMs;
  let next = 0;
  const lane = async () => {
    while (next < count && performance.now() < deadline) {
      const i = next++;
      const started = performance.now();
      await fn(i);
      latenciesMs.push(performance.now() - started);
    }
  };
  const started = performance.now();
  const cpu = process.cpuUsage();
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
  const used = process.cpuUsage(cpu);
  return { latenciesMs, elapsedMs: performance.now() - started, cpuMs: (used.user + used.system) / 1000 };
}

/** Nearest-rank percentile (p in 0..100) of an ascending array. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export interface Figures {
  requests: number;
  reqPerSec: number;
  p50: number;
  p99: number;
  cpuMsPerRequest: number;
}

export function summarize(sample: Sample): Figures {
  const sorted = [...sample.latenciesMs].sort((a, b) => a - b);
  return {
    requests: sorted.length,
    reqPerSec: (sorted.length * 1000) / sample.elapsedMs,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    cpuMsPerRequest: sample.cpuMs / sorted.length,
  };
}

export interface Target {
  label: string;
  met(ours: Figures, baseline: Figures): boolean;
}

export interface Row {
  name: string;
  concurrency: number;
  ours: Figures;
  baseline: Figures;
  target: Target;
}

/**
 * One table: our figures, the baseline's, the ratios (ours/baseline) and the target with PASS/MISS.
 * cpu ms/req is this process's CPU per request (relay + bench client), not the servers'.
 */
export function printTable(
  title: string,
  baselineName: string,
  rows: readonly Row[],
  out: (line: string) => void,
): void {
  const header = [
    'name',
    'conc',
    'requests',
    'req/s',
    'p50 ms',
    'p99 ms',
    'cpu ms/req',
    'base req/s',
    'base p50',
    'base p99',
    'base cpu',
    'tput ratio',
    'p50 ratio',
    'p99 ratio',
    'target',
    '',
  ];
  const lines = rows.map((r) => [
    r.name,
    String(r.concurrency),
    String(r.ours.requests),
    r.ours.reqPerSec.toFixed(1),
    r.ours.p50.toFixed(2),
    r.ours.p99.toFixed(2),
    r.ours.cpuMsPerRequest.toFixed(2),
    r.baseline.reqPerSec.toFixed(1),
    r.baseline.p50.toFixed(2),
    r.baseline.p99.toFixed(2),
    r.baseline.cpuMsPerRequest.toFixed(2),
    `${(r.ours.reqPerSec / r.baseline.reqPerSec).toFixed(2)}×`,
    `${(r.ours.p50 / r.baseline.p50).toFixed(2)}×`,
    `${(r.ours.p99 / r.baseline.p99).toFixed(2)}×`,
    r.target.label,
    r.target.met(r.ours, r.baseline) ? 'PASS' : 'MISS',
  ]);
  const widths = header.map((h, col) => Math.max(h.length, ...lines.map((l) => l[col]!.length)));
  const format = (cells: string[]) =>
    cells
      .map((c, col) => (col === 0 || col >= 14 ? c.padEnd(widths[col]!) : c.padStart(widths[col]!)))
      .join('  ')
      .trimEnd();
  out('');
  out(`${title} (baseline: ${baselineName})`);
  out(format(header));
  out(format(widths.map((w) => '-'.repeat(w))));
  for (const line of lines) out(format(line));
}

export function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
}
