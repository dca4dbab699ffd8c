// Invitations (relay-core/service/invites.ts) on the in-memory invitations port and a recording team: an admin makes
// an invitation whose code is shown once; its invitee redeems it once with a handle and card, registered with the
// preset and recorded in their account history; a wrong code, a used, revoked or expired invitation, or a card the
// preset refuses is refused in words with nothing registered; a redemption that stalls past its deadline is taken
// over, and revoking answers what the invitation is. Over HTTP, the CLI and Slack: test/integration/invites.test.ts.
import pino from 'pino';
import type { AgentDoc } from '../../relay-core/domain/documents';
import { RelayError } from '../../relay-core/domain/errors';
import { inviteCreateSchema, type InviteRedemption } from '../../relay-core/domain/invite';
import { Invites, REDEEM_DEADLINE_MS } from '../../relay-core/service/invites';
import type { OwnCard } from '../../relay-core/service/teammates';
import type { AccountEvent } from '../../relay-core/store/account-log';
import { InMemoryInvites } from '../fakes/in-memory-invites';
import { agent, NOW } from '../fakes/use-case-ports';
import { refusal } from '../helpers/refusal';

const lead = agent('lead@acme');
/** What a teammate reads of their own card. */
const ownCard = ({ handle, name, role, skills, repos_owned, tools, slack_user_id }: AgentDoc): OwnCard => ({
  handle,
  name,
  role,
  skills,
  repos_owned,
  tools,
  slack_user_id,
  notification: null,
});
const HOUR = 3_600_000;

function setup() {
  const invites = new InMemoryInvites();
  const clock = { at: NOW.getTime(), now: () => new Date(clock.at) };
  const team = new Map<string, AgentDoc>([[lead.handle, lead]]);
  const history: AccountEvent[] = [];
  /** The handle whose registration waits for its release (a process that stalls between taking and registering). */
  let stall: { handle: string; until: Promise<void> } | null = null;
  const service = new Invites({
    invites,
    accountLog: { record: async (events) => void history.push(...events) },
    teammates: {
      get: async (handle) => team.get(handle) ?? null,
      register: async (card) => {
        if (stall?.handle === card.handle) await stall.until;
        if (team.has(card.handle))
          throw new RelayError('conflict', `body.handle: ${card.handle} is already registered`, { field: 'handle' });
        const doc = {
          ...agent(card.handle),
          name: card.name,
          role: card.role,
          skills: card.skills,
          created_at: clock.now(),
        };
        team.set(card.handle, doc);
        invites.registered.set(card.handle, doc.created_at);
        return { card: ownCard(doc), api_key: `hr_key_for_${card.handle}` };
      },
      disable: async (handle) => {
        const doc = { ...team.get(handle)!, status: 'disabled' as const };
        team.set(handle, doc);
        return ownCard(doc);
      },
    },
    keyPepper: 'fast-tier-pepper',
    log: pino({ level: 'silent' }),
    clock,
  });
  const create = (input: Record<string, unknown> = {}) =>
    service.create(inviteCreateSchema.parse({ team: 'acme', role: 'backend', ...input }), 'admin');
  const redeem = (code: string, choice: Partial<InviteRedemption> = {}) =>
    service.redeem(code, { handle: 'newbie', name: 'Newbie', ...choice });
  return {
    invites,
    service,
    clock,
    team,
    history,
    create,
    redeem,
    /** Stalls the registration of `handle` until the answered release is called. */
    stalling: (handle: string) => {
      let release!: () => void;
      stall = { handle, until: new Promise((resolve) => (release = resolve)) };
      return release;
    },
  };
}

test('an invitation answers its code once; the listing shows it without the code', async () => {
  const { service, create } = setup();
  const made = await create({ skills: ['go'], note: 'for the API team', expires_in: '24h' });
  expect(made).toMatchObject({
    status: 'open',
    preset: { team: 'acme', role: 'backend', skills: ['go'] },
    note: 'for the API team',
    created_by: 'admin',
    expires_at: new Date(NOW.getTime() + 24 * HOUR).toISOString(),
  });
  expect(made.token).toMatch(new RegExp(`^hri_${made.id}_`));
  const { token, ...view } = made;
  const listed = await service.list();
  expect(listed).toEqual([view]);
  expect(JSON.stringify(listed)).not.toContain(token);
});

test('an invitation naming a lead who is not an active teammate is refused; none is made', async () => {
  const { service, create } = setup();
  expect(await refusal(create({ lead: 'ghost@acme' }))).toMatchObject({
    code: 'invalid_params',
    message: 'body.lead: no active teammate with handle ghost@acme (register the lead first)',
  });
  expect(await service.list()).toEqual([]);
});

test('redeemed: the invitee is registered with the preset and their choice, once, and it is in their history', async () => {
  const { service, create, redeem, team, history } = setup();
  const { id, token } = await create({ skills: ['go'] });
  const answer = await redeem(token, { skills: ['sql'] });
  expect(answer).toMatchObject({
    invite_id: id,
    api_key: 'hr_key_for_newbie@acme',
    card: { handle: 'newbie@acme', name: 'Newbie', role: 'backend' },
  });
  expect(team.get('newbie@acme')!.skills.sort()).toEqual(['go', 'sql']);
  expect(await service.list()).toEqual([
    expect.objectContaining({ id, status: 'redeemed', redeemed_by: 'newbie@acme', redeeming_until: null }),
  ]);
  expect(history).toEqual([
    expect.objectContaining({ handle: 'newbie@acme', action: 'invite.redeemed', resource_id: id, via: 'api' }),
  ]);
  // Used: a second redemption, even with the same choice, registers no one.
  expect(await refusal(redeem(token, { handle: 'other' }))).toMatchObject({
    code: 'conflict',
    message: 'This invitation was already used; ask an admin for a new one',
  });
  expect(team.has('other@acme')).toBe(false);
});

test('a wrong code or an unknown invitation is the same not_found, and nothing is taken', async () => {
  const { create, redeem, service } = setup();
  const { token } = await create();
  const wrong = `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`;
  const unknown = 'hri_000000000000_' + 'A'.repeat(43);
  for (const code of [wrong, unknown, 'not-a-code']) {
    expect(await refusal(redeem(code))).toMatchObject({
      code: 'not_found',
      message: 'No such invitation: check the code you were given (handoff-relay join hri_…)',
    });
  }
  expect((await service.list())[0]).toMatchObject({ status: 'open' });
});

test('a card the invitation refuses names the field; the invitation stays open for a corrected one', async () => {
  const { create, redeem, service, team } = setup();
  const { token } = await create();
  expect(await refusal(redeem(token, { handle: 'newbie@other' }))).toMatchObject({
    code: 'invalid_params',
    message: 'body.handle: this invitation is for team acme: the handle must end in @acme',
  });
  expect(await refusal(redeem(token, { role: 'frontend' }))).toMatchObject({
    message: 'body.role: this invitation sets role backend; leave it out or send the same',
  });
  expect((await service.list())[0]).toMatchObject({ status: 'open' });
  await redeem(token);
  expect(team.has('newbie@acme')).toBe(true);
});

test('a refused registration (the handle is taken) gives the invitation back', async () => {
  const { create, redeem, service } = setup();
  const { token } = await create();
  expect(await refusal(redeem(token, { handle: 'lead' }))).toMatchObject({
    code: 'conflict',
    message: 'body.handle: lead@acme is already registered',
  });
  expect((await service.list())[0]).toMatchObject({ status: 'open', redeemed_by: null });
  expect((await redeem(token)).card.handle).toBe('newbie@acme');
});

test('expired and revoked invitations are gone (410) and say so', async () => {
  const { create, redeem, service, clock } = setup();
  const expiring = await create({ expires_in: '1h' });
  const revoked = await create();
  await service.revoke(revoked.id);
  clock.at += HOUR;
  expect(await refusal(redeem(expiring.token))).toMatchObject({
    code: 'conflict',
    httpStatus: 410,
    message: `This invitation expired at ${new Date(NOW.getTime() + HOUR).toISOString()}; ask an admin for a new one`,
  });
  expect(await refusal(redeem(revoked.token))).toMatchObject({
    code: 'conflict',
    httpStatus: 410,
    message: 'This invitation was revoked; ask an admin for a new one',
  });
});

test('revoking: an open invitation is revoked, again answers it as it is; a redeemed one is a conflict', async () => {
  const { create, redeem, service } = setup();
  const open = await create();
  const first = await service.revoke(open.id);
  expect(first).toMatchObject({ id: open.id, status: 'revoked', revoked_at: NOW.toISOString() });
  expect(await service.revoke(open.id)).toEqual(first);
  const used = await create();
  await redeem(used.token);
  expect(await refusal(service.revoke(used.id))).toMatchObject({
    code: 'conflict',
    message: `Invitation ${used.id} was already redeemed by newbie@acme; disable that teammate instead (POST /admin/agents/newbie@acme/disable)`,
  });
  expect(await refusal(service.revoke('nope'))).toMatchObject({ code: 'invalid_params' });
  expect(await refusal(service.revoke('0123456789ab'))).toMatchObject({ code: 'not_found' });
});

describe('a redemption that stalls between taking the invitation and registering', () => {
  test('holds it until its deadline: another is told it is busy, and revoking it is a conflict', async () => {
    const { create, redeem, service, stalling } = setup();
    const { id, token } = await create();
    const release = stalling('slow@acme');
    const stalled = redeem(token, { handle: 'slow' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(await refusal(redeem(token, { handle: 'fast' }))).toMatchObject({
      code: 'conflict',
      message: 'This invitation is being redeemed by someone else right now; try again in a moment',
    });
    expect(await refusal(service.revoke(id))).toMatchObject({ code: 'conflict', details: { reason: 'busy' } });
    release();
    expect((await stalled).card.handle).toBe('slow@acme');
  });

  test('past its deadline a later redemption takes it over; the stalled one, resuming, disables what it made', async () => {
    const { create, redeem, service, clock, team, stalling } = setup();
    const { id, token } = await create();
    const release = stalling('slow@acme');
    const stalled = refusal(redeem(token, { handle: 'slow' }));
    await new Promise((resolve) => setImmediate(resolve));
    clock.at += REDEEM_DEADLINE_MS;
    expect((await redeem(token, { handle: 'fast' })).card.handle).toBe('fast@acme');
    release();
    expect(await stalled).toMatchObject({
      code: 'conflict',
      message: 'This redemption took too long and the invitation was used by another; ask an admin for a new one',
    });
    expect(team.get('slow@acme')!.status).toBe('disabled');
    expect(team.get('fast@acme')!.status).toBe('active');
    expect((await service.list())[0]).toMatchObject({ id, redeemed_by: 'fast@acme' });
  });

  test('revoked past its deadline when no teammate came of it; used when one did', async () => {
    const { create, redeem, service, clock, stalling, invites } = setup();
    const dead = await create();
    const release = stalling('ghost@acme');
    void redeem(dead.token, { handle: 'ghost' }).catch(() => undefined);
    await new Promise((resolve) => setImmediate(resolve));
    clock.at += REDEEM_DEADLINE_MS;
    expect(await service.revoke(dead.id)).toMatchObject({ status: 'revoked', redeemed_by: null });
    release();
    // A process that registered its teammate and stopped before confirming: past the deadline the invitation is
    // used, not revocable, and a redemption is told so.
    const made = await create();
    await invites.take(
      made.id,
      { handle: 'done@acme', at: new Date(clock.at) },
      new Date(clock.at + REDEEM_DEADLINE_MS),
    );
    invites.registered.set('done@acme', new Date(clock.at));
    clock.at += REDEEM_DEADLINE_MS;
    expect(await refusal(service.revoke(made.id))).toMatchObject({ details: { reason: 'redeemed' } });
    expect(await refusal(redeem(made.token))).toMatchObject({
      message: 'This invitation was already used; ask an admin for a new one',
    });
  });
});
