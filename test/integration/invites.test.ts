// Invitations against a real relay: POST/GET/DELETE /admin/invites and POST /invites/:id/redeem (create, redeem,
// expire on the relay's test clock, revoke, concurrent redemptions, bad input), the code kept out of lists, the
// store and logs; and the built CLI's `invite` and `join` over them.
import { execFile } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createLogger } from '../../relay-core/ops/logger';
import type { AgentCardInput } from '../../relay-core/domain/schemas';
import { Invites, REDEEM_DEADLINE_MS } from '../../relay-core/service/invites';
import type { OwnCard, Teammates } from '../../relay-core/service/teammates';
import { MongoInvites } from '../../relay-core/store/invite-records';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { TestClock } from '../helpers/test-clock';
import { waitUntil } from '../helpers/wait-until';

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

const redeem = (id: string, body: Record<string, unknown>) =>
  relay.rest('POST', `/invites/${id}/redeem`, undefined, body);
const inviteDoc = (id: string) => relay.store.invites.findOne({ _id: id });
const agentCount = () => relay.store.agents.countDocuments({});

test('an admin creates an invitation: the code once, the id and presets in the list, only a hash stored', async () => {
  const { id, token, body } = await invite({
    team: 'acme',
    role: 'backend',
    skills: ['go'],
    repos_owned: ['services/api/'],
    lead: 'lena@acme',
    expires_in: '48h',
    note: 'Frank',
  });
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
  const { id, token } = await invite({
    team: 'acme',
    role: 'backend',
    skills: ['go'],
    repos_owned: ['services/api/'],
    lead: 'lena@acme',
  });
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
  expect((await relay.rest('GET', '/agents/me', joined.body.api_key)).body).toMatchObject({
    handle: 'frank@acme',
    role: 'backend',
  });
  expect(await inviteDoc(id)).toMatchObject({ status: 'redeemed', redeemed_by: 'frank@acme' });
  const audit = await relay.rest('GET', '/agents/me/audit', joined.body.api_key);
  expect(audit.body.events).toEqual(
    expect.arrayContaining([
      expect.objectContaining({
        action: 'invite.redeemed',
        resource_type: 'invite',
        resource_id: id,
        actor_handle: 'frank@acme',
      }),
    ]),
  );

  const again = await redeem(id, { token, handle: 'frank2', name: 'Frank again' });
  expect(again.status).toBe(409);
  expect(again.body).toMatchObject({ code: 'conflict', message: expect.stringContaining('already used') });
  expect(await relay.store.agents.findOne({ _id: 'frank2@acme' })).toBeNull();

  // The whole code in the path works too (the shape some clients send), and is refused as used all the same.
  expect((await redeem(token, { handle: 'frank3', name: 'F' })).status).toBe(409);
  const revoke = await relay.rest('DELETE', `/admin/invites/${id}`, relay.adminKey);
  expect(revoke).toMatchObject({
    status: 409,
    body: { message: expect.stringContaining('already redeemed by frank@acme') },
  });
});

test('an invitation expires on the relay clock: 410 with when, listed as expired, nobody registered', async () => {
  const { id, token } = await invite({ role: 'qa', expires_in: '1h' });
  clock.advance(61 * 60_000);
  const before = await agentCount();
  const late = await redeem(id, { token, handle: 'late@acme', name: 'Late' });
  expect(late.status).toBe(410);
  expect(late.body).toMatchObject({
    code: 'conflict',
    message: expect.stringMatching(/^This invitation expired at \d{4}-.*ask an admin for a new one$/),
  });
  expect(await agentCount()).toBe(before);
  const listed = await relay.rest('GET', '/admin/invites', relay.adminKey);
  expect(listed.body.invites.find((i: { id: string }) => i.id === id)).toMatchObject({ status: 'expired' });
});

test('a revoked invitation is refused with 410; revoking again answers it as it is; unknown and malformed ids are clear', async () => {
  const { id, token } = await invite({ role: 'design' });
  const revoked = await relay.rest('DELETE', `/admin/invites/${id}`, relay.adminKey);
  expect(revoked).toMatchObject({ status: 200, body: { id, status: 'revoked', revoked_at: expect.any(String) } });
  expect((await relay.rest('DELETE', `/admin/invites/${id}`, relay.adminKey)).body).toMatchObject({
    id,
    status: 'revoked',
    revoked_at: revoked.body.revoked_at,
  });
  const refused = await redeem(id, { token, handle: 'rev@acme', name: 'Rev' });
  expect(refused).toMatchObject({
    status: 410,
    body: { code: 'conflict', message: expect.stringContaining('revoked') },
  });
  expect(await relay.store.agents.findOne({ _id: 'rev@acme' })).toBeNull();

  expect(await relay.rest('DELETE', '/admin/invites/000000000000', relay.adminKey)).toMatchObject({
    status: 404,
    body: { code: 'not_found' },
  });
  expect(await relay.rest('DELETE', '/admin/invites/nope', relay.adminKey)).toMatchObject({
    status: 400,
    body: { code: 'invalid_params', message: expect.stringContaining('path.id') },
  });
  expect((await relay.rest('DELETE', `/admin/invites/${id}`, undefined)).status).toBe(401);
});

test('redeeming one invitation many times at once makes one teammate; the others are told it was used', async () => {
  const { id, token } = await invite({ team: 'race', role: 'backend' });
  const handles = Array.from({ length: 8 }, (_, i) => `racer${i}`);
  const answers = await Promise.all(handles.map((handle) => redeem(id, { token, handle, name: handle })));
  const won = answers.filter((a) => a.status === 201);
  expect(won).toHaveLength(1);
  for (const lost of answers.filter((a) => a.status !== 201)) {
    expect(lost).toMatchObject({
      status: 409,
      body: { code: 'conflict', message: expect.stringMatching(/already used|being redeemed/) },
    });
  }
  expect(await relay.store.agents.countDocuments({ team: 'race' })).toBe(1);
  expect(await inviteDoc(id)).toMatchObject({ status: 'redeemed', redeemed_by: won[0]!.body.handle });
});

test('redemptions that all read the invitation open before any takes it still make one teammate (the conditional update decides)', async () => {
  // In one process, every redeem's read is sent before any claim: all of them see it open, only one claim can win.
  const invites = new Invites({
    invites: new MongoInvites(relay.store),
    accountLog: relay.store.accountLog,
    teammates: relay.relay.teammates,
    keyPepper: relay.config.keyPepper!,
    log: createLogger('silent'),
    clock,
  });
  const { token } = await invite({ team: 'race2', role: 'backend' });
  const outcomes = await Promise.allSettled(
    Array.from({ length: 6 }, (_, i) => invites.redeem(token, { handle: `r${i}`, name: `r${i}` })),
  );
  expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
  for (const o of outcomes)
    if (o.status === 'rejected')
      expect(o.reason).toMatchObject({
        code: 'conflict',
        message: expect.stringMatching(/already used|being redeemed/),
      });
  expect(await relay.store.agents.countDocuments({ team: 'race2' })).toBe(1);
});

describe('a redemption that stops between taking the invitation and registering', () => {
  /** Invites whose registrations run `register` instead of the relay's own (still reading and writing its store). */
  function invitesWith(register: (card: AgentCardInput) => Promise<{ card: OwnCard; api_key: string }>): Invites {
    const teammates = relay.relay.teammates;
    const stalling = Object.assign(Object.create(teammates) as Teammates, { register });
    return new Invites({
      invites: new MongoInvites(relay.store),
      accountLog: relay.store.accountLog,
      teammates: stalling,
      keyPepper: relay.config.keyPepper!,
      log: createLogger('silent'),
      clock,
    });
  }
  const taken = (id: string) => waitUntil(async () => (await inviteDoc(id))?.redeeming_until, 'the invitation taken');

  test('holds it until its deadline; after that a later redemption takes it and registers', async () => {
    const { id, token } = await invite({ team: 'dies', role: 'backend' });
    // A process that dies after taking it: its registration never ends.
    void invitesWith(() => new Promise(() => {})).redeem(token, { handle: 'ghost', name: 'Ghost' });
    const until = await taken(id);
    expect(until.getTime() - (await inviteDoc(id))!.redeemed_at!.getTime()).toBe(REDEEM_DEADLINE_MS);
    expect(await redeem(id, { token, handle: 'early', name: 'Early' })).toMatchObject({
      status: 409,
      body: { message: expect.stringContaining('being redeemed by someone else right now') },
    });

    clock.advance(REDEEM_DEADLINE_MS + 1_000);
    const late = await redeem(id, { token, handle: 'late', name: 'Late' });
    expect(late).toMatchObject({ status: 201, body: { handle: 'late@dies' } });
    const doc = await inviteDoc(id);
    expect(doc).toMatchObject({ status: 'redeemed', redeemed_by: 'late@dies' });
    expect(doc).not.toHaveProperty('redeeming_until');
    expect(
      await relay.store.agents
        .find({ team: 'dies' })
        .map((a) => a.handle)
        .toArray(),
    ).toEqual(['late@dies']);
    expect(await redeem(id, { token, handle: 'third', name: 'Third' })).toMatchObject({
      status: 409,
      body: { message: expect.stringContaining('already used') },
    });
  });

  test('the list shows it redeeming until its deadline; it can be revoked only after that', async () => {
    const { id, token } = await invite({ team: 'gone', role: 'backend' });
    void invitesWith(() => new Promise(() => {})).redeem(token, { handle: 'ghost', name: 'Ghost' });
    const until = await taken(id);
    const listed = async () =>
      (await relay.rest('GET', '/admin/invites', relay.adminKey)).body.invites.find((i: { id: string }) => i.id === id);
    expect(await listed()).toMatchObject({
      status: 'redeeming',
      redeemed_by: 'ghost@gone',
      redeeming_until: until.toISOString(),
    });
    expect(await relay.rest('DELETE', `/admin/invites/${id}`, relay.adminKey)).toMatchObject({
      status: 409,
      body: {
        message: `Invitation ${id} is being redeemed right now (as ghost@gone); if that does not finish, revoke it after ${until.toISOString()}`,
      },
    });

    clock.advance(REDEEM_DEADLINE_MS + 1_000);
    expect(await relay.rest('DELETE', `/admin/invites/${id}`, relay.adminKey)).toMatchObject({
      status: 200,
      body: { id, status: 'revoked', redeemed_by: null, redeeming_until: null },
    });
    expect(await redeem(id, { token, handle: 'late', name: 'Late' })).toMatchObject({
      status: 410,
      body: { message: expect.stringContaining('revoked') },
    });
    expect(await relay.store.agents.countDocuments({ team: 'gone' })).toBe(0);
  });

  test('one that registered its teammate and stopped before confirming leaves the invitation used', async () => {
    const { id, token } = await invite({ team: 'halfway', role: 'backend' });
    const teammates = relay.relay.teammates;
    void invitesWith(async (card) => {
      await teammates.register(card);
      return new Promise(() => {});
    }).redeem(token, { handle: 'first', name: 'First' });
    await waitUntil(async () => relay.store.agents.findOne({ _id: 'first@halfway' }), 'the first teammate registered');
    clock.advance(REDEEM_DEADLINE_MS + 1_000);
    expect(await redeem(id, { token, handle: 'second', name: 'Second' })).toMatchObject({
      status: 409,
      body: { message: expect.stringContaining('already used') },
    });
    expect(await relay.store.agents.countDocuments({ team: 'halfway' })).toBe(1);
    const doc = await inviteDoc(id);
    expect(doc).toMatchObject({ status: 'redeemed', redeemed_by: 'first@halfway' });
    expect(doc).not.toHaveProperty('redeeming_until');
  });

  test('one that resumes after another took the invitation over disables the teammate it made: one active teammate', async () => {
    const { id, token } = await invite({ team: 'stall', role: 'backend' });
    const teammates = relay.relay.teammates;
    let resume!: () => void;
    const resumed = new Promise<void>((resolve) => (resume = resolve));
    const stalled = invitesWith(async (card) => {
      await resumed;
      return teammates.register(card);
    }).redeem(token, { handle: 'slow', name: 'Slow' });
    await taken(id);
    clock.advance(REDEEM_DEADLINE_MS + 1_000);
    expect(await redeem(id, { token, handle: 'quick', name: 'Quick' })).toMatchObject({
      status: 201,
      body: { handle: 'quick@stall' },
    });
    resume();
    await expect(stalled).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringContaining('took too long and the invitation was used by another'),
    });
    expect(
      await relay.store.agents
        .find({ team: 'stall', status: 'active' })
        .map((a) => a.handle)
        .toArray(),
    ).toEqual(['quick@stall']);
    expect(await relay.store.agents.findOne({ _id: 'slow@stall' })).toMatchObject({ status: 'disabled' });
    expect(await inviteDoc(id)).toMatchObject({ status: 'redeemed', redeemed_by: 'quick@stall' });
  });
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
    expect({ body, status: answer.status, message: answer.body.message }).toEqual({
      body,
      status,
      message: expect.stringMatching(message),
    });
  }
  // A code whose id is unknown, a path that is neither id nor code, and a body that is not JSON.
  expect(
    await redeem('000000000000', { token: `hri_000000000000_${'A'.repeat(43)}`, handle: 'x', name: 'X' }),
  ).toMatchObject({ status: 404 });
  expect(await redeem('not-an-id', { token, handle: 'x', name: 'X' })).toMatchObject({
    status: 400,
    body: { message: expect.stringContaining('path.id') },
  });
  const notJson = await fetch(`${relay.url}/invites/${id}/redeem`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"token":',
  });
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
    expect({ body, status: answer.status, message: answer.body.message }).toEqual({
      body,
      status: 400,
      message: expect.stringMatching(message),
    });
  }

  expect(await agentCount()).toBe(agentsBefore);
  expect(await inviteDoc(id)).toMatchObject({ status: 'open' });
  expect(await inviteDoc(id)).not.toHaveProperty('redeemed_by');
  // Still good after all that (a refused registration gave the invitation back).
  expect((await redeem(id, { token, handle: 'nina', name: 'Nina' })).body).toMatchObject({
    handle: 'nina@acme',
    role: 'backend',
    lead: 'lena@acme',
  });
});

describe('the CLI', () => {
  const env = () => ({ PATH: process.env.PATH!, RELAY_URL: relay.url, RELAY_ADMIN_KEY: relay.adminKey });
  const cli = (args: string[], withEnv: Record<string, string> = env()) =>
    run('node', [CLI, ...args], { env: withEnv });

  test('invite prints the code once; join redeems it and prints the key and MCP configuration; --list and --revoke', async () => {
    const made = await cli([
      'invite',
      '--team',
      'cli',
      '--role',
      'backend',
      '--skills',
      'go,sql',
      '--expires',
      '2h',
      '--note',
      'Omar',
    ]);
    const code = /^ {2}(hri_\S+)$/m.exec(made.stdout)?.[1];
    expect(code).toMatch(/^hri_[0-9a-f]{12}_/);
    codes.push(code!);
    expect(made.stdout).toContain(`handoff-relay join ${code} --handle NAME --name "Their name"\n`);

    const listed = await cli(['invite', '--list']);
    const id = code!.slice(4, 16);
    expect(listed.stdout).toMatch(
      new RegExp(`^${id} {2}open .*\\[team cli; role backend; skills go,sql\\] {2}"Omar"$`, 'm'),
    );
    expect(listed.stdout).not.toContain(code!.slice(17));

    // join needs no key: the invitation is the credential.
    const joined = await cli(['join', code!, '--handle', 'omar', '--name', 'Omar', '--tools', 'git'], {
      PATH: process.env.PATH!,
      RELAY_URL: relay.url,
    });
    expect(joined.stdout).toMatch(/^Joined as omar@cli\.\n\nAPI key \(shown once, store it now\):\n {2}hr_\S+\n/);
    expect(joined.stdout).toContain('claude mcp add handoff-relay');
    const key = /^ {2}(hr_\S+)$/m.exec(joined.stdout)![1]!;
    expect((await relay.rest('GET', '/agents/me', key)).body).toMatchObject({
      handle: 'omar@cli',
      skills: ['go', 'sql'],
      tools: ['git'],
    });

    await expect(cli(['join', code!, '--handle', 'omar2', '--name', 'Omar'])).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('the relay refused: This invitation was already used'),
    });

    const other = await cli(['invite', '--role', 'qa']);
    const otherId = /^Invitation ([0-9a-f]{12}),/.exec(other.stdout)![1]!;
    codes.push(/^ {2}(hri_\S+)$/m.exec(other.stdout)![1]!);
    expect((await cli(['invite', '--revoke', otherId])).stdout).toBe(
      `Revoked invitation ${otherId}; its code is refused from now on.\n`,
    );
  });

  test('join and invite refuse what they cannot use, saying what to do', async () => {
    await expect(cli(['join', 'hr_not_an_invite', '--handle', 'a@b', '--name', 'A'])).rejects.toMatchObject({
      stderr: expect.stringContaining('join: that is not an invite code'),
    });
    await expect(cli(['join', '--handle', 'a@b'])).rejects.toMatchObject({
      stderr: expect.stringContaining('join needs the invite code you were given'),
    });
    await expect(cli(['join', codes[0]!, '--name', 'A'])).rejects.toMatchObject({
      stderr: expect.stringContaining('join: --handle is required'),
    });
    await expect(cli(['invite', '--list', '--role', 'x'])).rejects.toMatchObject({
      stderr: expect.stringContaining('are separate calls'),
    });
    await expect(cli(['invite', '--expires', 'forever'])).rejects.toMatchObject({
      stderr: expect.stringContaining('the relay refused: body.expires_in'),
    });
  });
});

describe('redeeming is limited per client address (no key to count by)', () => {
  let limited: TestRelay;

  beforeAll(async () => {
    limited = await startTestRelay({ name: 'invites_limit', env: { RELAY_REDEEM_RATE_LIMIT_PER_MINUTE: '3' } });
  });

  afterAll(async () => {
    await limited?.stop();
  });

  /** POST /invites/:id/redeem from a chosen loopback address; the status, Retry-After and parsed body. */
  function redeemFrom(
    localAddress: string,
    id: string,
    body: Record<string, unknown>,
  ): Promise<{ status: number; retryAfter: string | undefined; body: any }> {
    const url = new URL(`${limited.url}/invites/${id}/redeem`);
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          localAddress,
          headers: { 'content-type': 'application/json' },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () =>
            resolve({
              status: res.statusCode!,
              retryAfter: res.headers['retry-after'] as string | undefined,
              body: JSON.parse(text),
            }),
          );
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });
  }

  test('past the limit: 429 with when to retry, whatever the request; the invitation is untouched; another address is not limited', async () => {
    const created = await limited.rest('POST', '/admin/invites', limited.adminKey, { team: 'acme', role: 'qa' });
    const { id, token } = created.body as { id: string; token: string };
    codes.push(token);
    // Three wrong codes use up this address's minute.
    for (let i = 0; i < 3; i++) {
      expect(
        (await redeemFrom('127.0.0.1', id, { token: `${token.slice(0, -4)}AAA${i}`, handle: 'x', name: 'X' })).status,
      ).toBe(404);
    }
    const refused = [
      await redeemFrom('127.0.0.1', id, { token, handle: 'quinn', name: 'Quinn' }),
      await redeemFrom('127.0.0.1', '000000000000', { handle: 'x' }),
    ];
    for (const answer of refused) {
      expect(answer).toMatchObject({
        status: 429,
        body: {
          code: 'rate_limited',
          message: expect.stringMatching(
            /^Too many invitation redemptions from your address: at most 3 per 60 s; try again in \d+ s$/,
          ),
          retry_after_ms: expect.any(Number),
        },
      });
      expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(answer.retryAfter)).toBeLessThanOrEqual(60);
      expect(answer.body.retry_after_ms).toBeLessThanOrEqual(60_000);
    }
    expect(await limited.store.invites.findOne({ _id: id })).toMatchObject({ status: 'open' });
    expect(await limited.store.agents.findOne({ _id: 'quinn@acme' })).toBeNull();

    // The admin routes count nothing here, and another address still redeems.
    expect((await limited.rest('GET', '/admin/invites', limited.adminKey)).status).toBe(200);
    expect(await redeemFrom('127.0.0.2', id, { token, handle: 'quinn', name: 'Quinn' })).toMatchObject({
      status: 201,
      body: { handle: 'quinn@acme' },
    });
  });
});

test('no invite code appears in the relay log', async () => {
  expect(codes.length).toBeGreaterThan(5);
  expect(relay.logs.some((line) => line.msg === 'invitation redeemed')).toBe(true);
  const logged = JSON.stringify(relay.logs);
  for (const code of codes) expect(logged).not.toContain(code.slice(17));
});
