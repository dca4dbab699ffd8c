// Bench phase `soak` (npm run bench:soak, or BENCH_ONLY=soak): the built relay as a process of its own, every role,
// under steady load (handoffs at a fixed rate, each DM'd to a fake Slack and posted to the recipient's verified
// webhook on a loopback receiver, and the recipient listing its inbox), with
// its RSS read from /proc every sample interval. Target (PERFORMANCE.md): RSS ≤ 110 MiB steady, flat within 10%.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { startFakeSlack } from './fake-slack/fake-slack-api';
import { setVerifiedWebhook, startTimedReceiver } from './bench-delivery';
import type { PhaseServers } from './bench-measure';
import { readMemoryMiB, readRssMiB, RELAY_READY_LINE, relayNodeFlags, trackRelay } from './bench-process';
import { findFreePort } from './local-services/ports';

export interface SoakOptions extends PhaseServers {
  /** The bench's own FerretDB (null with MONGODB_URL): its RSS is sampled beside the relay's. */
  ferretPid: number | null;
  durationSeconds: number;
  sampleSeconds: number;
  /** Handoffs per second. */
  rate: number;
}

const TARGET_MIB = 110;
/** One tasks/list per this many handoffs (on FerretDB 1.24 every list reads the whole collection). */
const INBOX_EVERY = 50;
const TARGET_SPREAD = 0.1;

export async function benchSoak(opts: SoakOptions): Promise<void> {
  const slack = await startFakeSlack();
  slack.addUser('U0SOAK001');
  const hooks = await startTimedReceiver();
  const port = await findFreePort();
  const url = `http://127.0.0.1:${port}`;
  const adminKey = `hra_${randomBytes(24).toString('base64url')}`;
  const name = `${opts.runId.slice(0, 30)}_sk`;
  // Node flags for the relay, e.g. BENCH_SOAK_NODE_OPTIONS="--heap-prof" or "--require ./probe.js" to see where its
  // memory goes (on the command line: NODE_OPTIONS refuses some V8 flags, like --optimize-for-size).
  const nodeFlags = (process.env.BENCH_SOAK_NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean);
  const child = spawn(process.execPath, [...relayNodeFlags(), ...nodeFlags, join(__dirname, 'cli.js'), 'start'], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(port),
      MONGODB_URL: opts.mongodbUrl,
      MONGODB_DB: name,
      REDIS_URL: opts.redisUrl,
      RELAY_QUEUE_PREFIX: name,
      RELAY_ADMIN_KEY: adminKey,
      RELAY_KEY_PEPPER: randomBytes(32).toString('hex'),
      RELAY_RATE_LIMIT_PER_MINUTE: '1000000',
      // LOG_LEVEL is left at what users run (info); stdout goes to /dev/null.
      SLACK_BOT_TOKEN: slack.token,
      SLACK_SIGNING_SECRET: randomBytes(16).toString('hex'),
      SLACK_API_URL: slack.url,
      RELAY_DIGEST_AT: 'off', // a digest tick would add DMs the bench does not count
      RELAY_WEBHOOK_ALLOW_PRIVATE: '1',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  trackRelay(child);
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  try {
    const deadline = Date.now() + 30_000;
    while (!stderr.includes(RELAY_READY_LINE)) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the relay did not start:\n${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const post = async (path: string, key: string, body: unknown) => {
      const response = await fetch(`${url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return (await response.json()) as any;
    };
    const sender = (await post('/admin/agents', adminKey, { handle: 'soak-sender@acme', name: 'S', role: 'engineer' }))
      .api_key as string;
    const recipient = (
      await post('/admin/agents', adminKey, {
        handle: 'soak-recipient@acme',
        name: 'R',
        role: 'engineer',
        slack_user_id: 'U0SOAK001',
      })
    ).api_key as string;
    await setVerifiedWebhook(url, recipient, hooks.receiver.url());

    opts.progress(
      `soak: relay pid ${child.pid}, ${opts.rate} handoffs/s for ${opts.durationSeconds} s, RSS every ${opts.sampleSeconds} s…`,
    );
    let sent = 0;
    let failed = 0;
    const load = setInterval(() => {
      const n = sent++;
      post('/a2a', sender, {
        jsonrpc: '2.0',
        id: n,
        method: 'message/send',
        params: {
          recipient: 'soak-recipient@acme',
          intent: 'inform',
          message: { parts: [{ type: 'text', text: `soak ${n}: the API pages users now; update the web client.` }] },
        },
      })
        .then((a) => {
          if (!a.result) failed += 1;
        })
        .catch(() => (failed += 1));
      // The recipient checks its inbox now and then, as an agent would.
      if (n % INBOX_EVERY === 0) {
        post('/a2a', recipient, {
          jsonrpc: '2.0',
          id: n,
          method: 'tasks/list',
          params: { filter: { role: 'recipient', status: ['pending'] }, page: { limit: 20 } },
        }).catch(() => (failed += 1));
      }
    }, 1000 / opts.rate);

    const samples: Array<{ at: number; mib: number; anon: number }> = [];
    const started = Date.now();
    opts.out('');
    opts.out(
      `Soak: relay process RSS under ${opts.rate} handoffs/s (+ a tasks/list every ${INBOX_EVERY}), DMs to a fake Slack, the recipient's webhook on loopback`,
    );
    opts.out(`   t s   RSS MiB  (anon + file)   handoffs   DMs  webhooks${opts.ferretPid ? '  FerretDB RSS MiB' : ''}`);
    const sample = async () => {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(
          `the relay exited (${child.exitCode ?? child.signalCode}) during the soak:\n${stderr.slice(-4000)}`,
        );
      const memory = await readMemoryMiB(child.pid!);
      const mib = memory.rss;
      if (mib === 0) throw new Error(`no VmRSS for pid ${child.pid}`);
      const ferret = opts.ferretPid ? `  ${(await readRssMiB(opts.ferretPid)).toFixed(1).padStart(16)}` : '';
      const at = Math.round((Date.now() - started) / 1000);
      samples.push({ at, mib, anon: memory.anon });
      const parts = `(${memory.anon.toFixed(1)} + ${memory.file.toFixed(1)})`;
      opts.out(
        `${String(at).padStart(6)}  ${mib.toFixed(1).padStart(8)}  ${parts.padStart(13)}  ${String(sent).padStart(9)}  ${String(slack.callsTo('chat.postMessage').length).padStart(5)}  ${String(hooks.events()).padStart(8)}${ferret}`,
      );
    };
    while (Date.now() - started < opts.durationSeconds * 1000) {
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(opts.sampleSeconds * 1000, opts.durationSeconds * 1000 - (Date.now() - started))),
      );
      await sample();
    }
    clearInterval(load);
    // Steady: after the first sample (start-up, JIT and connection pools warming).
    const steady = samples.length > 2 ? samples.slice(1) : samples;
    const values = steady.map((s) => s.mib);
    const min = Math.min(...values);
    const max = Math.max(...values);
    const drift = ((values[values.length - 1]! - values[0]!) / values[0]!) * 100;
    const spread = (max - min) / min;
    opts.out(
      `steady (from ${steady[0]!.at} s): min ${min.toFixed(1)} MiB, max ${max.toFixed(1)} MiB, spread ${(spread * 100).toFixed(1)}%, ` +
        `drift first→last ${drift >= 0 ? '+' : ''}${drift.toFixed(1)}% · sent ${sent}, failed ${failed}, DMs ${slack.callsTo('chat.postMessage').length}, webhook calls ${hooks.events()}`,
    );
    opts.out(
      `target: max ≤ ${TARGET_MIB} MiB and spread ≤ ${TARGET_SPREAD * 100}% → ${max <= TARGET_MIB && spread <= TARGET_SPREAD ? 'PASS' : 'MISS'}`,
    );
    const anon = steady.map((s) => s.anon);
    opts.out(
      `of which the relay's own (anonymous) memory: min ${Math.min(...anon).toFixed(1)} MiB, max ${Math.max(...anon).toFixed(1)} MiB; ` +
        `the rest is file-backed, mostly the node binary's code (a bare \`node\` is about 39 MiB RSS)`,
    );
    // The relay's own view of the run: what its workers did, and what is still owed.
    const metrics = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${adminKey}` } })).text();
    const wanted =
      /^relay_(jobs_\w+_total\{queue="(slack|slack-sync|webhooks)"\}|outbox_backlog_threads|delivery_latency_seconds_(count|sum)\{channel="(slack|webhook)"\}) /;
    opts.out(
      `relay metrics at the end: ${metrics
        .split('\n')
        .filter((l) => wanted.test(l))
        .join(' · ')}`,
    );
    if (opts.durationSeconds < 600)
      opts.out(`(a ${opts.durationSeconds} s soak; the target is stated for 10 minutes: BENCH_SOAK_SECONDS=600)`);
  } finally {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    await slack.close();
    await hooks.close();
  }
}
