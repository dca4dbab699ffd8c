// Invitations against a real relay: POST/GET/DELETE /admin/invites and POST /invites/:id/redeem (create, redeem,
// expire on the relay's test clock, revoke, concurrent redemptions, bad input), the code kept out of lists, the
// store and logs; and the built CLI's `invite` and `join` over them.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createLogger } from '../../relay-core/ops/logger';
import { Invites } from '../../relay-core/service/invites';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { TestClock } from '../helpers/test-clock';

const run = promisify(execFile);
const CLI = join(__dirname, '..', '..', 'dist', 'scripts', 'cli.js');

const clock = new TestClock();
let relay: TestRelay;
/** Every code this file was given, to look for in lists, documents and logs. */
const codes: string[] = [];

beforeAll(async () => {
  relay = await startTestRelay({ name: 'invites', captureLogs: true, clock });
  await relay.register({ handle: 'lena@acme', role: 'lead' });
  await relay.register({ handle: 'taken@acme' });
});

afterAll(async () => {
  await relay?.stop();
});

async function invite(body: Record<string, unknown> = {}): Promise<{ id: string; token: string; body: any }> {
  const created = await relay.rest('POST', '/admin/invites', relay.adminKey, body);
  expect(created.status).toBe(201);
  codes.push(created.body.token);
  return { id: created.body.id, token: created.body.token, body: created.body };
}

const redeem = (id: string, body: Record<string, unknown>) => relay.rest('POST', `/invites/${id}/redeem`, undefined, body);
const inviteDoc = (id: string) => relay.store.invites.findOne({ _id: id });
const agentCount = () => relay.store.agents.countDocuments({});

test('an admin creates an invitation: the code once, the id and presets in the list, only a hash stored', async () => {
  const { id, token, body } = await invite({ team: 'acme', role: 'backend', skills: ['go'], repos_owned: ['services/api/'], lead: 'lena@acme', expires_in: '48h', note: 'Frank' });
  expect(token).toMatch(/^hri_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
  expect(token).toContain(id);
  expect(body).toMatchObject({
    id,
    status: 'open',
    preset: { team: 'acme', role: 'backend', skills: ['go'], repos_owned: ['services/api/'], lead: 'lena@acme' },
    note: 'Frank',
    created_by: 'admin',
    redeemed_by: null,
    redeem_url: `${relay.relay.links.publicUrl}/invites/${id}/redeem`,
    join_command: `handoff-relay join ${token}`,
  });
  expect(new Date(body.expires_at).getTime() - new Date(body.created_at).getTime()).toBe(48 * 3_600_000);

  const listed = await relay.rest('GET', '/admin/invites', relay.adminKey);
  expect(listed.status).toBe(200);
  expect(listed.body.invites[0]).toMatchObject({ id, status: 'open', note: 'Frank' });
  expect(listed.body.invites[0]).not.toHaveProperty('token');
  expect(listed.body.invites[0]).not.toHaveProperty('token_hash');
  expect(JSON.stringify(listed.body)).not.toContain(token.slice(17));

  const stored = await inviteDoc(id);
  expect(stored!.token_hash).toMatch(/^[0-9a-f]{64}$/);
  expect(JSON.stringify(stored)).not.toContain(token.slice(17));

  expect((await relay.rest('GET', '/admin/invites', undefined)).status).toBe(401);
  expect((await relay.rest('POST', '/admin/invites', 'hr_not_admin', {})).status).toBe(401);
});

test('redeeming registers the invitee with the presets and its own card, once; the key works and the history says so', async () => {
  const { id, token } = await invite({ team: 'acme', role: 'backend', skills: ['go'], repos_owned: ['services/api/'], lead: 'lena@acme' });
  const joined = await redeem(id, { token, handle: 'frank', name: 'Frank', skills: ['sql', 'go'], tools: ['git'] });
  expect(joined.status).toBe(201);
  expect(joined.body).toMatchObject({
    handle: 'frank@acme',
    agent_id: 'frank@acme',
    name: 'Frank',
    role: 'backend',
    skills: ['go', 'sql'],
    repos_owned: ['services/api/'],
    tools: ['git'],
    lead: 'lena@acme',
    invite_id: id,
    api_key: expect.stringMatching(/^hr_/),
  });
  expect((await relay.rest('GET', '/agents/me', joined.body.api_key)).body).toMatchObject({ handle: 'frank@acme', role: 'backend' });
  expect(await inviteDoc(id)).toMatchObject({ status: 'redeemed', redeemed_by: 'frank@acme' });
  const audit = await relay.rest('GET', '/agents/me/audit', joined.body.api_key);
  expect(audit.body.events).toEqual(expect.arrayContaining([expect.objectContaining({ action: 'invite.redeemed', resource_type: 'invite', resource_id: id, actor_handle: 'frank@acme' })]));

  const again = await redeem(id, { token, handle: 'frank2', name: 'Frank again' });
  expect(again.status).toBe(409);
  expect(again.body).toMatchObject({ code: 'conflict', message: expect.stringContaining('already used') });
  expect(await relay.store.agents.findOne({ _id: 'frank2@acme' })).toBeNull();

  // The whole code in the path works too (the shape some clients send), and is refused as used all the same.
  expect((await redeem(token, { handle: 'frank3', name: 'F' })).status).toBe(409);
  const revoke = await relay.rest('DELETE', `/admin/invites/${id}`, relay.adminKey);
  expect(revoke).toMatchObject({ status: 409, body: { message: expect.stringContaining('already redeemed by frank@acme') } });
});

test('an invitation expires on the relay clock: 410 with when, listed as expired, nobody registered', async () => {
  const { id, token } = await invite({ role: 'qa', expires_in: '1h' });
  clock.advance(61 * 60_000);
  const before = await agentCount();
  const late = await redeem(id, { token, handle: 'late@acme', name: 'Late' });
  expect(late.status).toBe(410);
  expect(late.body).toMatchObject({ code: 'conflict', message: expect.stringMatching(/^This invitation expired at \d{4}-.*ask an admin for a new one$/) });
  expect(await agentCount()).toBe(before);
  const listed = await relay.rest('GET', '/admin/invites', relay.adminKey);
  expect(listed.body.invites.find((i: { id: string }) => i.id === id)).toMatchObject({ status: 'expired' });
});

test('a revoked invitation is refused with 410; revoking again answers it as it is; unknown and malformed ids are clear', async () => {
  const { id, token } = await invite({ role: 'design' });
  const revoked = await relay.rest('DELETE', `/admin/invites/${id}`, relay.adminKey);
  expect(revoked).toMatchObject({ status: 200, body: { id, status: 'revoked', revoked_at: expect.any(String) } });
  expect((await relay.rest('DELETE', `/admin/invites/${id}`, relay.adminKey)).body).toMatchObject({ id, status: 'revoked', revoked_at: revoked.body.revoked_at });
  const refused = await redeem(id, { token, handle: 'rev@acme', name: 'Rev' });
  expect(refused).toMatchObject({ status: 410, body: { code: 'conflict', message: expect.stringContaining('revoked') } });
  expect(await relay.store.agents.findOne({ _id: 'rev@acme' })).toBeNull();

  expect(await relay.rest('DELETE', '/admin/invites/000000000000', relay.adminKey)).toMatchObject({ status: 404, body: { code: 'not_found' } });
  expect(await relay.rest('DELETE', '/admin/invites/nope', relay.adminKey)).toMatchObject({ status: 400, body: { code: 'invalid_params', message: expect.stringContaining('path.id') } });
  expect((await relay.rest('DELETE', `/admin/invites/${id}`, undefined)).status).toBe(401);
});

test('redeeming one invitation many times at once makes one teammate; the others are told it was used', async () => {
  const { id, token } = await invite({ team: 'race', role: 'backend' });
  const handles = Array.from({ length: 8 }, (_, i) => `racer${i}`);
  const answers = await Promise.all(handles.map((handle) => redeem(id, { token, handle, name: handle })));
  const won = answers.filter((a) => a.status === 201);
  expect(won).toHaveLength(1);
  for (const lost of answers.filter((a) => a.status !== 201)) {
    expect(lost).toMatchObject({ status: 409, body: { code: 'conflict', message: expect.stringMatching(/already used|being redeemed/) } });
  }
  expect(await relay.store.agents.countDocuments({ team: 'race' })).toBe(1);
  expect(await inviteDoc(id)).toMatchObject({ status: 'redeemed', redeemed_by: won[0]!.body.handle });
});

test('redemptions that all read the invitation open before any takes it still make one teammate (the conditional update decides)', async () => {
  // In one process, every redeem's read is sent before any claim: all of them see it open, only one claim can win.
  const invites = new Invites({ store: relay.store, teammates: relay.relay.teammates, keyPepper: relay.config.keyPepper!, log: createLogger('silent'), clock });
  const { token } = await invite({ team: 'race2', role: 'backend' });
  const outcomes = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => invites.redeem(token, { handle: `r${i}`, name: `r${i}` })));
  expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
  for (const o of outcomes) if (o.status === 'rejected') expect(o.reason).toMatchObject({ code: 'conflict', message: expect.stringMatching(/already used|being redeemed/) });
  expect(await relay.store.agents.countDocuments({ team: 'race2' })).toBe(1);
});

test('bad input answers a clear error naming what is wrong, and changes nothing', async () => {
  const { id, token } = await invite({ team: 'acme', role: 'backend', lead: 'lena@acme' });
  const otherToken = (await invite({})).token;
  const agentsBefore = await agentCount();
  const cases: Array<[string | Record<string, unknown>, number, RegExp]> = [
    [{ token, handle: 'x@other', name: 'X' }, 400, /^body\.handle: this invitation is for team acme/],
    [{ token, handle: 'x', name: 'X', role: 'frontend' }, 400, /^body\.role: this invitation sets role backend/],
    [{ token, handle: 'x', name: 'X', lead: 'frank@acme' }, 400, /^body\.lead: this invitation sets lead lena@acme/],
    [{ token, handle: 'x' }, 400, /^body\.name: required/],
    [{ token, handle: 'bad handle!', name: 'X' }, 400, /^body\.handle: must be a handle/],
    [{ token, handle: 'x', name: 'X', slack_user_id: 'U0123456' }, 400, /^body: Unrecognized key: "slack_user_id"/],
    [{ token, handle: 'x', name: 'X', skills: 'go' }, 400, /^body\.skills/],
    [{ handle: 'x', name: 'X' }, 400, /^body\.token: required/],
    [{ token: otherToken, handle: 'x', name: 'X' }, 404, /^No such invitation/],
    [{ token: `${token.slice(0, -4)}AAAA`, handle: 'x', name: 'X' }, 404, /^No such invitation/],
    [{ token, handle: 'taken', name: 'Taken again' }, 409, /taken@acme is already registered/],
  ];
  for (const [body, status, message] of cases) {
    const answer = await redeem(id, body as Record<string, unknown>);
    expect({ body, status: answer.status, message: answer.body.message }).toEqual({ body, status, message: expect.stringMatching(message) });
  }
  // A code whose id is unknown, a path that is neither id nor code, and a body that is not JSON.
  expect(await redeem('000000000000', { token: `hri_000000000000_${'A'.repeat(43)}`, handle: 'x', name: 'X' })).toMatchObject({ status: 404 });
  expect(await redeem('not-an-id', { token, handle: 'x', name: 'X' })).toMatchObject({ status: 400, body: { message: expect.stringContaining('path.id') } });
  const notJson = await fetch(`${relay.url}/invites/${id}/redeem`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"token":' });
  expect(notJson.status).toBe(400);

  // Creating: a bad duration, an unknown lead, a malformed team, an unknown field.
  for (const [body, message] of [
    [{ expires_in: '90d' }, /^body\.expires_in: must be a duration such as 30m, 24h or 7d \(at most 30d\)/],
    [{ expires_in: 'soon' }, /^body\.expires_in/],
    [{ lead: 'ghost@acme' }, /^body\.lead: no active teammate with handle ghost@acme/],
    [{ team: 'a team' }, /^body\.team/],
    [{ colour: 'red' }, /^body: Unrecognized key: "colour"/],
  ] as const) {
    const answer = await relay.rest('POST', '/admin/invites', relay.adminKey, body);
    expect({ body, status: answer.status, message: answer.body.message }).toEqual({ body, status: 400, message: expect.stringMatching(message) });
  }

  expect(await agentCount()).toBe(agentsBefore);
  expect(await inviteDoc(id)).toMatchObject({ status: 'open' });
  expect(await inviteDoc(id)).not.toHaveProperty('redeemed_by');
  // Still good after all that (a refused registration gave the invitation back).
  expect((await redeem(id, { token, handle: 'nina', name: 'Nina' })).body).toMatchObject({ handle: 'nina@acme', role: 'backend', lead: 'lena@acme' });
});

describe('the CLI', () => {
  const env = () => ({ PATH: process.env.PATH!, RELAY_URL: relay.url, RELAY_ADMIN_KEY: relay.adminKey });
  const cli = (args: string[], withEnv: Record<string, string> = env()) => run('node', [CLI, ...args], { env: withEnv });

  test('invite prints the code once; join redeems it and prints the key and MCP configuration; --list and --revoke', async () => {
    const made = await cli(['invite', '--team', 'cli', '--role', 'backend', '--skills', 'go,sql', '--expires', '2h', '--note', 'Omar']);
    const code = /^ {2}(hri_\S+)$/m.exec(made.stdout)?.[1];
    expect(code).toMatch(/^hri_[0-9a-f]{12}_/);
    codes.push(code!);
    expect(made.stdout).toContain(`handoff-relay join ${code} --handle NAME --name "Their name"\n`);

    const listed = await cli(['invite', '--list']);
    const id = code!.slice(4, 16);
    expect(listed.stdout).toMatch(new RegExp(`^${id} {2}open .*\\[team cli; role backend; skills go,sql\\] {2}"Omar"$`, 'm'));
    expect(listed.stdout).not.toContain(code!.slice(17));

    // join needs no key: the invitation is the credential.
    const joined = await cli(['join', code!, '--handle', 'omar', '--name', 'Omar', '--tools', 'git'], { PATH: process.env.PATH!, RELAY_URL: relay.url });
    expect(joined.stdout).toMatch(/^Joined as omar@cli\.\n\nAPI key \(shown once, store it now\):\n {2}hr_\S+\n/);
    expect(joined.stdout).toContain('claude mcp add handoff-relay');
    const key = /^ {2}(hr_\S+)$/m.exec(joined.stdout)![1]!;
    expect((await relay.rest('GET', '/agents/me', key)).body).toMatchObject({ handle: 'omar@cli', skills: ['go', 'sql'], tools: ['git'] });

    await expect(cli(['join', code!, '--handle', 'omar2', '--name', 'Omar'])).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('the relay refused: This invitation was already used') });

    const other = await cli(['invite', '--role', 'qa']);
    const otherId = /^Invitation ([0-9a-f]{12}),/.exec(other.stdout)![1]!;
    codes.push(/^ {2}(hri_\S+)$/m.exec(other.stdout)![1]!);
    expect((await cli(['invite', '--revoke', otherId])).stdout).toBe(`Revoked invitation ${otherId}; its code is refused from now on.\n`);
  });

  test('join and invite refuse what they cannot use, saying what to do', async () => {
    await expect(cli(['join', 'hr_not_an_invite', '--handle', 'a@b', '--name', 'A'])).rejects.toMatchObject({ stderr: expect.stringContaining('join: that is not an invite code') });
    await expect(cli(['join', '--handle', 'a@b'])).rejects.toMatchObject({ stderr: expect.stringContaining('join needs the invite code you were given') });
    await expect(cli(['join', codes[0]!, '--name', 'A'])).rejects.toMatchObject({ stderr: expect.stringContaining('join: --handle is required') });
    await expect(cli(['invite', '--list', '--role', 'x'])).rejects.toMatchObject({ stderr: expect.stringContaining('are separate calls') });
    await expect(cli(['invite', '--expires', 'forever'])).rejects.toMatchObject({ stderr: expect.stringContaining('the relay refused: body.expires_in') });
  });
});

test('no invite code appears in the relay log', async () => {
  expect(codes.length).toBeGreaterThan(5);
  expect(relay.logs.some((line) => line.msg === 'invitation redeemed')).toBe(true);
  const logged = JSON.stringify(relay.logs);
  for (const code of codes) expect(logged).not.toContain(code.slice(17));
});
