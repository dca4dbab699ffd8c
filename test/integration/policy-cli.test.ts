// `handoff-relay policy …` (the built CLI) against a real relay: check offline, apply, show, test, audit.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { text } from '../helpers/handoffs';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';

const run = promisify(execFile);
const CLI = join(__dirname, '..', '..', 'dist', 'scripts', 'cli.js');

let relay: TestRelay;
let dir: string;

beforeAll(async () => {
  relay = await startTestRelay({ name: 'policy_cli' });
  dir = await mkdtemp(join(tmpdir(), 'policy-cli-'));
  await relay.register({ handle: 'alice@acme' });
  await relay.register({ handle: 'night@contractor', role: 'contractor' });
});

afterAll(async () => {
  await relay?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { PATH: process.env.PATH!, RELAY_URL: relay.url, RELAY_ADMIN_KEY: relay.adminKey, RELAY_DATA_DIR: dir };
  try {
    const { stdout, stderr } = await run('node', [CLI, 'policy', ...args], { env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const GOOD = `rules:
  - id: contractors-by-day
    match: { action: handoff.create, recipient: { team: contractor }, time: { from: "19:00", to: "07:00", zone: UTC } }
    effect: deny
    reason: Contractors get handoffs in working hours
`;

test('check validates offline and names the line of a mistake', async () => {
  await writeFile(join(dir, 'good.yaml'), GOOD);
  await writeFile(join(dir, 'bad.yaml'), 'rules:\n  - id: a\n    effect: deny\n    reson: typo\n');
  const good = await cli('check', join(dir, 'good.yaml'));
  expect(good.code).toBe(0);
  expect(good.stdout).toMatch(/good\.yaml: valid · version [0-9a-f]{16} · default allow · 1 rules/);
  const bad = await cli('check', join(dir, 'bad.yaml'));
  expect(bad.code).toBe(1);
  expect(bad.stderr).toContain(`handoff-relay: ${join(dir, 'bad.yaml')}:2: rules[0]: Unrecognized key: "reson"`);
  expect((await cli('check', join(dir, 'none.yaml'))).stderr).toContain('cannot read');
});

test('apply, show, test and audit go through the admin API', async () => {
  const applied = await cli('apply', join(dir, 'good.yaml'));
  expect(applied.code).toBe(0);
  expect(applied.stdout).toMatch(/^Applied .*good\.yaml: version [0-9a-f]{16}, 1 rules/);
  const shown = await cli('show');
  expect(shown.stdout).toContain('id: contractors-by-day');
  const night = await cli(
    'test',
    '--action',
    'handoff.create',
    '--from',
    'alice@acme',
    '--to',
    'night@contractor',
    '--at',
    '2026-12-01T23:00:00Z',
  );
  expect(night.stdout).toMatch(
    /^deny {2}rule contractors-by-day {2}policy [0-9a-f]{16} {2}reason: Contractors get handoffs in working hours/,
  );
  const day = await cli(
    'test',
    '--action',
    'handoff.create',
    '--from',
    'alice@acme',
    '--to',
    'night@contractor',
    '--at',
    '2026-12-01T12:00:00Z',
  );
  expect(day.stdout).toMatch(/^allow {2}rule \(default\)/);
  expect((await cli('test', '--action', 'handoff.create', '--from', 'alice@acme')).stderr).toContain(
    'policy test needs --to',
  );
  expect((await cli('audit')).stdout).toBe('No refused calls.\n');
});

test('a refused call shows up in the audit', async () => {
  await cli('apply', join(dir, 'good.yaml'));
  await writeFile(
    join(dir, 'always.yaml'),
    'rules:\n  - { id: never, match: { action: handoff.create, recipient: { team: contractor } }, effect: deny, reason: No }\n',
  );
  await cli('apply', join(dir, 'always.yaml'));
  const alice = await relay.register({ handle: 'alice2@acme' });
  const refused = await relay.rpc(alice, 'message/send', {
    recipient: 'night@contractor',
    intent: 'inform',
    message: text('hi'),
  });
  expect(refused.body.error.code).toBe(-32020);
  const audit = await cli('audit', '--limit', '5');
  expect(audit.stdout).toMatch(/denied {2}handoff\.create by alice2@acme via a2a {2}rule never {2}No/);
});
