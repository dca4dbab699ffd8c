// `npm start`'s program with zero configuration: it starts its own FerretDB under the data dir, generates an
// owner-only admin key the CLI then finds, and serves health checks; bad settings stop it with one line.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { findFreePort } from '../../scripts/local-services/ports';
import { testRedisUrl } from '../helpers/test-env';
import { waitUntil } from '../helpers/wait-until';
import { queuePrefix } from '../helpers/queue-keys';
import { connectMcpHttp, toolOk } from '../helpers/mcp-http-client';

const run = promisify(execFile);
const CLI = join(__dirname, '..', '..', 'dist', 'scripts', 'cli.js');

/** The environment of a fresh shell: nothing of ours set. */
function bareEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, ...extra };
}

describe('handoff-relay start with zero configuration', () => {
  let dataDir: string;
  let child: ChildProcess;
  let output = '';
  let url: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'handoff-relay-start-'));
    const port = await findFreePort();
    url = `http://127.0.0.1:${port}`;
    // PORT, the data dir and the queue prefix only keep this test apart from a relay a developer may be running.
    child = spawn('node', [CLI, 'start'], {
      env: relayEnv(dataDir, port, 'start'),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    await waitUntil(
      async () => output.includes('listening on'),
      `the relay to listen; output so far:\n${output}`,
      30_000,
    );
  });

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await rm(dataDir, { recursive: true, force: true });
  });

  test('serves health and readiness on real storage and Redis', async () => {
    expect(output).toContain(`listening on ${url}`);
    expect(output).toMatch(/FerretDB \(SQLite under .*ferretdb\)/);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', checks: { mongodb: 'ok', redis: 'ok' } });
    // A clean start warns of nothing (the first sweeps once ran before Redis had connected: "timer sweep failed").
    const warnings = output.split('\n').filter((line) => /"level":(4|5|6)0/.test(line));
    expect(warnings).toEqual([]);
  });

  test('generates an owner-only admin key that register finds without configuration', async () => {
    const keyFile = await stat(join(dataDir, 'admin-key'));
    expect(keyFile.mode & 0o777).toBe(0o600);
    const { stdout } = await run(
      'node',
      [
        CLI,
        'register',
        '--handle',
        'web-dev@acme',
        '--name',
        'Web developer',
        '--role',
        'frontend',
        '--slack-user',
        'U0123456',
      ],
      {
        env: bareEnv({ RELAY_URL: url, RELAY_DATA_DIR: dataDir }),
      },
    );
    expect(stdout).toMatch(/API key \(shown once, store it now\):\n\s+hr_[0-9a-f]{12}_\S+/);
    expect(output).not.toContain(/hr_[0-9a-f]{12}_\S+/.exec(stdout)![0]);
  });

  test('opens the queue board to the generated admin key (bull-board loads on its first request)', async () => {
    const adminKey = (await readFile(join(dataDir, 'admin-key'), 'utf8')).trim();
    expect((await fetch(`${url}/admin/queues`)).status).toBe(401);
    const page = await fetch(`${url}/admin/queues`, { headers: { authorization: `Bearer ${adminKey}` } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const api = await fetch(`${url}/admin/queues/api/queues`, { headers: { authorization: `Bearer ${adminKey}` } });
    expect(((await api.json()) as { queues: Array<{ name: string }> }).queues.map((q) => q.name).sort()).toEqual([
      'slack',
      'slack-sync',
      'verify',
      'webhooks',
    ]);
  });

  test('serves MCP over Streamable HTTP to a registered key (the MCP SDK loads on the first /mcp request)', async () => {
    const refused = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(refused.status).toBe(401);
    const { stdout } = await run(
      'node',
      [CLI, 'register', '--handle', 'mcp-dev@acme', '--name', 'MCP developer', '--role', 'backend'],
      {
        env: bareEnv({ RELAY_URL: url, RELAY_DATA_DIR: dataDir }),
      },
    );
    const apiKey = /hr_[0-9a-f]{12}_\S+/.exec(stdout)![0];
    const client = await connectMcpHttp(url, apiKey);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('handoff_to_teammate');
      const teammates = toolOk(await client.callTool({ name: 'list_teammates', arguments: {} }));
      expect(JSON.stringify(teammates)).toContain('mcp-dev@acme');
    } finally {
      await client.close();
    }
  });

  test('a second relay on the same PORT stops with one line saying the port is taken, having started and touched nothing', async () => {
    const port = new URL(url).port;
    const otherDir = await mkdtemp(join(tmpdir(), 'handoff-relay-start-'));
    const prefix = queuePrefix('start_twice');
    const redis = new Redis(testRedisUrl());
    try {
      const env = bareEnv({
        PORT: port,
        RELAY_DATA_DIR: otherDir,
        REDIS_URL: testRedisUrl(),
        RELAY_QUEUE_PREFIX: prefix,
        LOG_LEVEL: 'warn',
      });
      const failure = await run('node', [CLI, 'start'], { env }).then(
        () => {
          throw new Error('the second start should have failed');
        },
        (error: { code: number; stderr: string }) => error,
      );
      expect(failure.code).toBe(1);
      expect(failure.stderr.trim().split('\n').at(-1)).toBe(
        `handoff-relay: PORT: 127.0.0.1:${port} is already in use (another relay?): stop that process or set PORT to a free port`,
      );
      // Its own FerretDB went with it; the first relay still serves.
      await waitUntil(
        async () =>
          (await run('pgrep', ['-f', otherDir]).then(
            () => false,
            () => true,
          )) || undefined,
        'the second FerretDB to stop',
      );
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      // The port is bound first: no FerretDB was started for it, nothing was queued or scheduled under its prefix.
      expect(await readdir(otherDir)).not.toContain('ferretdb');
      expect(await redis.keys(`${prefix}:*`)).toEqual([]);
    } finally {
      redis.disconnect();
      await rm(otherDir, { recursive: true, force: true });
    }
  });

  test('starts its FerretDB again when it dies, on the same port and data, and serves again', async () => {
    const ferretPid = async () =>
      Number((await run('pgrep', ['-f', '--', `--state-dir=${join(dataDir, 'ferretdb')}`])).stdout.trim());
    const before = await ferretPid();
    process.kill(before, 'SIGKILL');
    await waitUntil(
      async () => output.includes('FerretDB is running again'),
      `FerretDB to be started again; output so far:\n${output}`,
      30_000,
    );
    expect(output).toMatch(/FerretDB exited on SIGKILL; starting FerretDB again on 127\.0\.0\.1:\d+ \(try 1 of \d+\)…/);
    expect(await ferretPid()).not.toBe(before);
    await waitUntil(async () => (await fetch(`${url}/readyz`)).status === 200, 'the relay to be ready again', 15_000);

    // What it held before is there, and it takes writes again.
    const { stdout } = await run(
      'node',
      [CLI, 'register', '--handle', 'after-restart@acme', '--name', 'After restart', '--role', 'qa'],
      {
        env: bareEnv({ RELAY_URL: url, RELAY_DATA_DIR: dataDir }),
      },
    );
    const apiKey = /hr_[0-9a-f]{12}_\S+/.exec(stdout)![0];
    const listed = await fetch(`${url}/a2a`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'agents/list', params: {} }),
    });
    const handles = (
      (await listed.json()) as { result: { teammates: Array<{ handle: string }> } }
    ).result.teammates.map((t) => t.handle);
    expect(handles).toEqual(expect.arrayContaining(['web-dev@acme', 'after-restart@acme']));
  });

  test('stops cleanly on SIGTERM, taking its FerretDB with it', async () => {
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
    // Stopped, not started again.
    await expect(run('pgrep', ['-f', '--', `--state-dir=${join(dataDir, 'ferretdb')}`])).rejects.toMatchObject({
      code: 1,
    });
  });
});

/** Starts `command args` and resolves once it says it listens; `output()` is all it has printed so far. */
async function startListening(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd?: string,
): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(command, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let said = '';
  child.stdout!.on('data', (d) => (said += d));
  child.stderr!.on('data', (d) => (said += d));
  await waitUntil(async () => said.includes('listening on'), `the relay to listen; output so far:\n${said}`, 30_000);
  return { child, output: () => said };
}

/** A relay's environment on its own data dir, port and queue prefix, warnings only. */
function relayEnv(dataDir: string, port: number, prefix: string): NodeJS.ProcessEnv {
  return bareEnv({
    PORT: String(port),
    RELAY_DATA_DIR: dataDir,
    REDIS_URL: testRedisUrl(),
    RELAY_QUEUE_PREFIX: queuePrefix(prefix),
    LOG_LEVEL: 'warn',
  });
}

/** The FerretDB processes serving `dataDir` (by their --state-dir). */
async function ferretDbPidsOn(dataDir: string): Promise<number[]> {
  const { stdout } = await run('pgrep', ['-f', '--', `--state-dir=${join(dataDir, 'ferretdb')}`]).catch(() => ({
    stdout: '',
  }));
  return stdout.split('\n').filter(Boolean).map(Number);
}

describe('handoff-relay start after a relay killed with SIGKILL', () => {
  test('stops the FerretDB the killed relay left running on its data, then serves', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'handoff-relay-start-killed-'));
    const ferretPids = () => ferretDbPidsOn(dataDir);
    const start = async () => {
      const port = await findFreePort();
      const env = relayEnv(dataDir, port, 'start_killed');
      const { child, output } = await startListening('node', [CLI, 'start'], env);
      return { relay: child, url: `http://127.0.0.1:${port}`, output };
    };
    let second: ChildProcess | undefined;
    try {
      const first = await start();
      const [leftBehind] = await ferretPids();
      const killed = new Promise((resolve) => first.relay.once('exit', resolve));
      first.relay.kill('SIGKILL');
      await killed;
      // Its exit handler never ran: its FerretDB is still up.
      expect(await ferretPids()).toEqual([leftBehind]);

      const next = await start();
      second = next.relay;
      expect(next.output()).toContain(
        `stopping FerretDB (pid ${leftBehind}) left running on ${join(dataDir, 'ferretdb')} by a process that was killed (pid ${first.relay.pid})…`,
      );
      const now = await ferretPids();
      expect(now).toHaveLength(1);
      expect(now).not.toContain(leftBehind);
      expect((await fetch(`${next.url}/readyz`)).status).toBe(200);
    } finally {
      if (second && second.exitCode === null) {
        const exited = new Promise((resolve) => second!.once('exit', resolve));
        second.kill('SIGTERM');
        await exited;
      }
      for (const pid of await ferretPids()) process.kill(pid, 'SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe("npm start's script line", () => {
  // npm runs a script as `sh -c '<line>'` and forwards a SIGTERM (a supervisor's, docker stop's) to that shell; a
  // shell that forks the relay instead of exec'ing it dies of the signal and leaves the relay running, orphaned.
  test('hands a SIGTERM to the relay, which stops with its FerretDB', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'handoff-relay-npm-start-'));
    const port = await findFreePort();
    const { scripts } = JSON.parse(await readFile(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
      scripts: { start: string };
    };
    const env = relayEnv(dataDir, port, 'npm_start');
    // Processes started on this data dir: the relay (by its environment) and its FerretDB (by its command line).
    const ours = async () => {
      const pids: number[] = [];
      for (const entry of await readdir('/proc')) {
        if (!/^\d+$/.test(entry)) continue;
        const [cmdline, environ] = await Promise.all(
          ['cmdline', 'environ'].map((f) => readFile(`/proc/${entry}/${f}`, 'utf8').catch(() => '')),
        );
        if (
          cmdline!.includes(dataDir) ||
          (cmdline!.includes('cli.js') && environ!.split('\0').includes(`RELAY_DATA_DIR=${dataDir}`))
        )
          pids.push(Number(entry));
      }
      return pids;
    };
    try {
      const { child: shell, output } = await startListening(
        'sh',
        ['-c', scripts.start],
        env,
        join(__dirname, '..', '..'),
      );
      const exited = new Promise((resolve) => shell.once('exit', resolve));
      shell.kill('SIGTERM');
      await exited;
      // A relay orphaned by its shell never stops; a draining one on a loaded 2-core box (another suite on a second
      // engine beside this one: load ~10) took more than 15 s to close its workers and stop its FerretDB.
      const stopped = await waitUntil(
        async () => (await ours()).length === 0 || undefined,
        'the relay and its FerretDB to stop',
        60_000,
      ).catch(async (error: Error) => {
        // What is left, and what the relay said, so that a stop that hangs can be told apart from one that is slow.
        const left = await Promise.all(
          (await ours()).map(
            async (pid) =>
              `${pid}: ${(await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0').join(' ')}`,
          ),
        );
        const ferretLog = (await readFile(join(dataDir, 'ferretdb', 'ferretdb.log'), 'utf8').catch(() => '')).slice(
          -3_000,
        );
        throw new Error(
          `${error.message}\nstill running:\n${left.join('\n')}\nthe relay said:\n${output()}\nFerretDB's log ends:\n${ferretLog}`,
        );
      });
      expect(stopped).toBe(true);
      expect(output()).toContain('SIGTERM: draining');
    } finally {
      for (const pid of await ours()) process.kill(pid, 'SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('a SIGTERM the moment the relay says it listens', () => {
  // A supervisor or a script that waits for the line and stops the relay at once: the drain must already be in place
  // (Node's default action for an unhandled SIGTERM kills the process, leaving its FerretDB running).
  test('drains and stops the relay with its FerretDB', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'handoff-relay-term-on-listen-'));
    const port = await findFreePort();
    const env = relayEnv(dataDir, port, 'term_on_listen');
    // `start` with a `say` that sends the process its own SIGTERM as it writes the line, before anything after it runs.
    const script = `
      const { startCommand } = require(${JSON.stringify(join(__dirname, '..', '..', 'dist', 'scripts', 'start-command.js'))});
      startCommand({ env: process.env, say: (line) => {
        process.stdout.write(line + '\\n');
        if (line.includes('listening on')) process.kill(process.pid, 'SIGTERM');
      } });`;
    const ferretPids = () => ferretDbPidsOn(dataDir);
    try {
      const child = spawn('node', ['-e', script], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let said = '';
      child.stdout!.on('data', (d) => (said += d));
      child.stderr!.on('data', (d) => (said += d));
      const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
        child.once('exit', (c, s) => resolve([c, s])),
      );
      expect({ code, signal, drained: said.includes('SIGTERM: draining') }).toEqual({
        code: 0,
        signal: null,
        drained: true,
      });
      expect(await ferretPids()).toEqual([]);
    } finally {
      for (const pid of await ferretPids()) process.kill(pid, 'SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('bad settings stop start-up with one line naming the variable', () => {
  test.each([
    [{ PORT: 'abc' }, /^handoff-relay: PORT: /],
    [{ MONGODB_URL: 'postgres://x' }, /^handoff-relay: MONGODB_URL: must start with mongodb:\/\//],
    [{ REDIS_URL: 'http://x' }, /^handoff-relay: REDIS_URL: /],
    [{ RELAY_ROLES: 'api,cron' }, /^handoff-relay: RELAY_ROLES: must be a comma-separated subset of api,worker,bot/],
    [{ SLACK_BOT_TOKEN: 'xoxb-1' }, /^handoff-relay: SLACK_SIGNING_SECRET: must be set together/],
    [
      { SLACK_BOT_TOKEN: 'abc', SLACK_SIGNING_SECRET: 'secretsecret' },
      /^handoff-relay: SLACK_BOT_TOKEN: must be a bot token/,
    ],
    [{ SLACK_APP_TOKEN: 'xapp-1-A1-1-abc' }, /^handoff-relay: SLACK_BOT_TOKEN: must be set when SLACK_APP_TOKEN is/],
    [
      { SLACK_APP_TOKEN: 'xoxb-1', SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: 'secretsecret' },
      /^handoff-relay: SLACK_APP_TOKEN: must be an app-level token starting with xapp-/,
    ],
    [
      { SLACK_API_URL: 'not a url', SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: 'secretsecret' },
      /^handoff-relay: SLACK_API_URL: /,
    ],
    [
      { RELAY_DIGEST_AT: '9:30' },
      /^handoff-relay: RELAY_DIGEST_AT: must be a local time HH:MM \(00:00–23:59\), or off \(got "9:30"\)/,
    ],
  ])('%j', async (env, line) => {
    const failure = await run('node', [CLI, 'start'], { env: bareEnv(env) }).then(
      () => {
        throw new Error('start-up should have failed');
      },
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure.code).toBe(1);
    const lines = failure.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(line);
  });
});
