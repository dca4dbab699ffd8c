// The claims use case (relay-core/service/claims.ts) on the in-memory thread port: the first candidate's claim wins
// and makes them the recipient with a handoff token, the winner asking again answers the same, anyone else is refused.
// The same over JSON-RPC, MCP and Slack's Claim button: test/integration/handoff-targets.test.ts, slack-claim.test.ts.
import pino from 'pino';
import { parseRecipient, type RecipientTarget } from '../../relay-core/domain/schemas';
import { Claims } from '../../relay-core/service/claims';
import { HandoffTokens } from '../../relay-core/service/handoff-tokens';
import { InMemoryThreads } from '../fakes/in-memory-threads';
import { agent, NOW, recordingOutbox, storedUnclaimed } from '../fakes/use-case-ports';

const sender = agent('lead@acme');
const ana = agent('ana@acme');
const bo = agent('bo@acme');
const target = parseRecipient('role:frontend') as RecipientTarget;

function setup() {
  const threads = new InMemoryThreads();
  const tokens = new HandoffTokens('fast-tier-secret');
  const outbox = recordingOutbox();
  const claims = new Claims({
    store: threads,
    outbox,
    tokens,
    policy: { forClaim: async () => undefined },
    clock: { now: () => NOW },
    log: pino({ level: 'silent' }),
  });
  return {
    threads,
    claims,
    published: outbox.published,
    unclaimed: () => storedUnclaimed(threads, tokens, sender, target, [ana.handle, bo.handle]),
  };
}

test('the first candidate to claim becomes the recipient: pending, with a handoff token, thread.claimed out', async () => {
  const { threads, claims, published, unclaimed } = setup();
  const doc = await unclaimed();
  expect(await claims.claim(ana, doc._id, 'api')).toEqual({
    thread_id: doc._id,
    status: 'pending',
    recipient: ana.handle,
    claimed_by: ana.handle,
    claimed_at: NOW.toISOString(),
  });
  const stored = await threads.readThread(doc._id);
  expect(stored).toMatchObject({ status: 'pending', to: ana.handle, claimed_by: ana.handle });
  expect(stored!.handoff_token).toMatchObject({ team: 'acme', consumed_at: null });
  expect(published.map((e) => e.type)).toEqual(['thread.claimed']);
});

test('the winner claiming again answers the same and writes nothing', async () => {
  const { threads, claims, unclaimed } = setup();
  const doc = await unclaimed();
  const first = await claims.claim(ana, doc._id, 'api');
  expect(await claims.claim(ana, doc._id, 'slack')).toEqual(first);
  expect(threads.writes).toBe(1);
});

test('another candidate after the claim is refused, told who has it, and nothing changes', async () => {
  const { threads, claims, unclaimed } = setup();
  const doc = await unclaimed();
  await claims.claim(ana, doc._id, 'api');
  await expect(claims.claim(bo, doc._id, 'api')).rejects.toMatchObject({
    message: expect.stringContaining(ana.handle),
  });
  expect(threads.writes).toBe(1);
});

test('someone who is no candidate cannot claim', async () => {
  const { threads, claims, unclaimed } = setup();
  const doc = await unclaimed();
  await expect(claims.claim(agent('eve@acme'), doc._id, 'api')).rejects.toHaveProperty('code');
  expect(threads.writes).toBe(0);
});
