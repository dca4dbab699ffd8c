// Bench phase `runs`: what a run of the recipient's agent costs the relay (`handoff-relay agent`'s calls), against
// the relay as its own process (every role, Slack off): heartbeats and progress batches of one running run, as a
// runner sends them but back to back, with their latency, the relay's and FerretDB's CPU and FerretDB's commands per
// call (its background work, the event logs and webhook fan-out of each batch, included). The baseline is
// `tasks/get` of the same thread, one `_id` read through the same HTTP and auth path, measured in the same run.
import { BenchHttpClient } from './bench-http';
import {
  handoffParams,
  measureServed,
  register,
  startServedRelay,
  type PathFigures,
  type ServedPhase,
} from './bench-paths';

export type RunsBenchOptions = ServedPhase;

export async function benchRuns(opts: RunsBenchOptions): Promise<void> {
  // Progress as often as the bench sends it; the lease long enough for the whole phase.
  const relay = await startServedRelay(opts, { RELAY_RUN_PROGRESS_INTERVAL: '0s', RELAY_RUN_LEASE: '10m' });
  const client = new BenchHttpClient(relay.url);
  const pids = [relay.pid, ...(opts.ferretPid ? [opts.ferretPid] : [])];
  try {
    const sender = await register(client, relay.adminKey, 'bench-run-sender@acme');
    const recipient = await register(client, relay.adminKey, 'bench-run-recipient@acme');
    const { task_id } = await client.call(
      sender.apiKey,
      'message/send',
      handoffParams(recipient.handle, `${opts.runId}-run`),
    );
    const accepted = await client.call(recipient.apiKey, 'tasks/update', { task_id, transition: 'accept', run: true });
    const { run } = await client.call(recipient.apiKey, 'runs/claim', { runner: 'bench', wait_seconds: 5 });
    if (run?.run_id !== accepted.run?.run_id) throw new Error(`runs/claim answered ${JSON.stringify(run)}`);
    const lease = { run_id: run.run_id, lease_id: run.lease_id };
    const n = opts.requests;
    const rows: Array<[string, PathFigures]> = [];
    const measureOne = async (name: string, fn: (i: number) => Promise<void>) => {
      const figures = await measureServed(pids, 1, opts.warmup, n, fn, opts.ferretMetricsUrl);
      rows.push([name, figures]);
      opts.progress(
        `  ${name}: p50 ${figures.p50.toFixed(1)} ms, relay+FerretDB ${figures.serverCpuMsPerRequest.toFixed(1)} ms CPU/call` +
          (figures.commandMix !== undefined
            ? `, FerretDB commands/call ${figures.commandsPerRequest!.toFixed(1)} (${figures.commandMix})`
            : ''),
      );
    };
    await measureOne(
      'baseline tasks/get',
      async () => void (await client.call(recipient.apiKey, 'tasks/get', { task_id })),
    );
    await measureOne('runs/heartbeat', async () => void (await client.call(recipient.apiKey, 'runs/heartbeat', lease)));
    let seq = 0;
    await measureOne('runs/progress (one batch)', async () => {
      seq += 1;
      await client.call(recipient.apiKey, 'runs/progress', {
        ...lease,
        seq,
        text: `step ${seq}: running the tests…\n${'output line\n'.repeat(20)}`,
      });
    });
    await client.call(recipient.apiKey, 'runs/finish', { ...lease, outcome: 'succeeded', report: 'done' });
    const base = rows[0]![1];
    opts.out('');
    opts.out(`What a run costs the relay (c=1, ${n} calls each; ratio to tasks/get of the same thread):`);
    for (const [name, f] of rows) {
      opts.out(
        `  ${name.padEnd(26)} p50 ${f.p50.toFixed(1).padStart(6)} ms  p99 ${f.p99.toFixed(1).padStart(7)} ms  ${f.serverCpuMsPerRequest.toFixed(1).padStart(5)} ms CPU/call` +
          `  ${f.commandsPerRequest?.toFixed(1).padStart(5) ?? '    -'} FerretDB commands/call  (CPU ${(f.serverCpuMsPerRequest / base.serverCpuMsPerRequest).toFixed(1)}×)`,
      );
    }
  } finally {
    client.close();
    await relay.stop();
  }
}
