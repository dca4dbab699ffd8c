// `npm run bench` told to stop. A SIGTERM (`kill`, a CI timeout) reaches the bench alone, not the processes it
// started: it stops its relay processes and its FerretDB and exits 143, so nothing of it goes on loading the box and
// skewing whatever is measured next.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { testRedisUrl } from '../helpers/test-env';
import { waitUntil } from '../helpers/wait-until';
import { isRunning } from '../helpers/processes';

const BENCH = join(__dirname, '..', '..', 'dist', 'scripts', 'bench.js');

/** The pids whose command line mentions `text` (this bench's FerretDB names its own data directory). */
async function pidsMentioning(text: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(text)) pids.push(Number(entry));
  }
  return pids;
}

describe('the bench, stopped with SIGTERM', () => {
  let bench: ChildProcess | undefined;
  /** What the bench started, stopped here should it fail to stop them itself. */
  const started: number[] = [];

  afterAll(() => {
    if (bench?.exitCode === null) bench.kill('SIGKILL');
    for (const pid of started) if (isRunning(pid)) process.kill(pid, 'SIGKILL');
  });

  test('stops the relay and FerretDB it started and exits 143', async () => {
    // The paths phase on a small database, far more requests than it gets to send before the signal.
    bench = spawn(process.execPath, [BENCH], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        REDIS_URL: testRedisUrl(),
        BENCH_ONLY: 'paths',
        BENCH_SIZES: '100',
        BENCH_REQUESTS: '100000',
        BENCH_WARMUP: '10',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    bench.stdout!.on('data', (d) => (output += d));
    bench.stderr!.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => bench!.once('exit', (code) => resolve(code)));

    const relayPid = Number(
      await waitUntil(
        async () =>
          /relay pid (\d+)/.exec(output)?.[1] ?? (bench!.exitCode !== null && Promise.reject(new Error(output))),
        'the relay process',
        90_000,
      ),
    );
    const dataDir = /starting it on SQLite under (\S+?)…/.exec(output)?.[1];
    expect(dataDir).toBeDefined();
    const [ferretPid] = await pidsMentioning(dataDir!);
    expect(ferretPid).toBeDefined();
    started.push(relayPid, ferretPid!);
    expect(isRunning(relayPid)).toBe(true);

    bench.kill('SIGTERM');
    expect(await exited).toBe(143);
    expect(output).toContain('SIGTERM: stopping');
    // The relay drains first (RELAY_SHUTDOWN_GRACE_MS, 25 s at most, when a job was mid-write as FerretDB stopped).
    await waitUntil(async () => !isRunning(relayPid), `relay ${relayPid} to exit`, 40_000);
    await waitUntil(async () => !isRunning(ferretPid!), `FerretDB ${ferretPid} to exit`);
    expect(existsSync(dataDir!)).toBe(false);
  }, 150_000);
});
