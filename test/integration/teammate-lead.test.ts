// The card's optional `lead`: a registered teammate's handle, set at registration or with PUT /agents/me/card,
// checked (unknown, disabled or oneself is invalid_params naming the field and handle), removable with null.
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';

let relay: TestRelay;

beforeAll(async () => {
  relay = await startTestRelay({ name: 'lead' });
});

afterAll(async () => {
  await relay?.stop();
});

test('a lead given at registration is on the card, readable by the teammate and by anyone', async () => {
  const leadKey = await relay.register({ handle: 'lead@acme' });
  const key = await relay.register({ handle: 'dev@acme', lead: 'lead@acme' });
  expect((await relay.rest('GET', '/agents/me', key)).body).toMatchObject({ handle: 'dev@acme', lead: 'lead@acme' });
  const list = (await relay.rest('GET', '/agents?role=engineer', leadKey)).body.teammates as Array<{
    handle: string;
    lead?: string;
  }>;
  expect(list.find((c) => c.handle === 'dev@acme')?.lead).toBe('lead@acme');
  expect(list.find((c) => c.handle === 'lead@acme')).not.toHaveProperty('lead');
});

test('agents/list answers every card with its lead, by role, by skill and by repo', async () => {
  await relay.register({ handle: 'tl@acme', role: 'reviewer' });
  await relay.register({
    handle: 'rev@acme',
    role: 'reviewer',
    skills: ['go'],
    repos_owned: ['acme/api'],
    lead: 'tl@acme',
  });
  const rev = {
    handle: 'rev@acme',
    name: 'rev',
    role: 'reviewer',
    skills: ['go'],
    repos_owned: ['acme/api'],
    lead: 'tl@acme',
  };
  expect(await relay.relay.teammates.list({ role: 'reviewer' })).toEqual([
    rev,
    { handle: 'tl@acme', name: 'tl', role: 'reviewer', skills: [], repos_owned: [] },
  ]);
  expect(await relay.relay.teammates.list({ skill: 'go' })).toEqual([rev]);
  expect(await relay.relay.teammates.list({ repo: 'acme/' })).toEqual([rev]);
});

test('a lead that is not a registered teammate is refused at registration and nothing is created', async () => {
  const response = await relay.rest('POST', '/admin/agents', relay.adminKey, {
    handle: 'orphan@acme',
    name: 'Orphan',
    role: 'engineer',
    lead: 'nobody@acme',
  });
  expect(response.status).toBe(400);
  expect(response.body).toMatchObject({ code: 'invalid_params' });
  expect(response.body.message).toBe('body.lead: no teammate with handle nobody@acme (register the lead first)');
  const again = await relay.rest('POST', '/admin/agents', relay.adminKey, {
    handle: 'orphan@acme',
    name: 'Orphan',
    role: 'engineer',
  });
  expect(again.status).toBe(201);
});

test('PUT /agents/me/card sets, checks and removes the lead', async () => {
  await relay.register({ handle: 'boss@acme' });
  const key = await relay.register({ handle: 'worker@acme' });
  expect((await relay.rest('PUT', '/agents/me/card', key, { lead: 'boss@acme' })).body).toMatchObject({
    lead: 'boss@acme',
  });

  const unknown = await relay.rest('PUT', '/agents/me/card', key, { lead: 'ghost@acme' });
  expect(unknown.status).toBe(400);
  expect(unknown.body.message).toBe('body.lead: no teammate with handle ghost@acme (register the lead first)');
  const self = await relay.rest('PUT', '/agents/me/card', key, { lead: 'worker@acme' });
  expect(self.status).toBe(400);
  expect(self.body.message).toBe('body.lead: a teammate cannot be its own lead');
  const malformed = await relay.rest('PUT', '/agents/me/card', key, { lead: 'not a handle' });
  expect(malformed.status).toBe(400);
  expect(malformed.body.message).toMatch(/^body\.lead: must be a handle like name@team/);
  expect((await relay.rest('GET', '/agents/me', key)).body.lead).toBe('boss@acme');

  const disabledKey = await relay.register({ handle: 'gone@acme' });
  expect(disabledKey).toBeTruthy();
  expect((await relay.rest('POST', '/admin/agents/gone@acme/disable', relay.adminKey)).status).toBe(200);
  const disabled = await relay.rest('PUT', '/agents/me/card', key, { lead: 'gone@acme' });
  expect(disabled.body.message).toBe('body.lead: gone@acme is disabled');

  const cleared = await relay.rest('PUT', '/agents/me/card', key, { lead: null });
  expect(cleared.status).toBe(200);
  expect(cleared.body).not.toHaveProperty('lead');
  expect((await relay.rest('GET', '/agents/me', key)).body).not.toHaveProperty('lead');
});

test('the built CLI registers with --lead and names a bad lead', async () => {
  const { execFile } = await import('node:child_process');
  const { promisify } = await import('node:util');
  const { join } = await import('node:path');
  const run = promisify(execFile);
  const cli = join(__dirname, '..', '..', 'dist', 'scripts', 'cli.js');
  const env = { PATH: process.env.PATH!, RELAY_URL: relay.url, RELAY_ADMIN_KEY: relay.adminKey };
  await relay.register({ handle: 'cli-lead@acme' });
  const ok = await run(
    'node',
    [cli, 'register', '--handle', 'cli-dev@acme', '--name', 'CLI dev', '--role', 'backend', '--lead', 'cli-lead@acme'],
    { env },
  );
  expect(ok.stdout).toContain('Registered cli-dev@acme.');
  const key = /hr_[0-9a-f]{12}_\S+/.exec(ok.stdout)![0];
  expect((await relay.rest('GET', '/agents/me', key)).body.lead).toBe('cli-lead@acme');
  const bad = await run(
    'node',
    [cli, 'register', '--handle', 'cli-dev2@acme', '--name', 'CLI dev', '--role', 'backend', '--lead', 'nope@acme'],
    { env },
  ).catch((e: { code: number; stderr: string }) => e);
  expect(bad).toMatchObject({
    code: 1,
    stderr:
      'handoff-relay: the relay refused: body.lead: no teammate with handle nope@acme (register the lead first)\n',
  });
});
