// The teammates' cards as agents/list and handoff targets read them, the same on every engine: a card registered or
// changed in one process is in another process's very next listing (nothing is cached); a listing by role, skill or
// repo is one query, on an index (multikey for skills and repos), the same with 30 or 300 teammates.
import type { CommandStartedEvent } from 'mongodb';
import { MongoStore } from '../../relay-core/store/mongo-store';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { readsIndexOn } from '../helpers/query-plans';
import { testMongoUrl } from '../helpers/test-env';
import { inParallel } from '../../relay-core/ops/in-parallel';

let relay: TestRelay;
let other: MongoStore;
let alice: string;

beforeAll(async () => {
  relay = await startTestRelay({ name: 'agent_cards' });
  alice = await relay.register({ handle: 'alice@acme' });
  // A second process's store on the same database, its commands counted.
  other = await MongoStore.connect(testMongoUrl(), relay.config.mongodbDb, { monitorCommands: true });
});

afterAll(async () => {
  await other?.close();
  await relay?.stop();
});

const list = async (filter: { role?: string; skill?: string; repo?: string }) =>
  (await other.cards.matching(filter, 500)).map((c) => c.handle);

/** The read commands `other` sends while `work` runs, as `find <collection>`. */
async function counted<T>(work: () => Promise<T>): Promise<{ result: T; reads: string[] }> {
  const reads: string[] = [];
  const started = (event: CommandStartedEvent) => {
    if (['find', 'aggregate', 'distinct', 'count'].includes(event.commandName))
      reads.push(`${event.commandName} ${event.command[event.commandName]}`);
  };
  other.db.client.on('commandStarted', started);
  try {
    return { result: await work(), reads };
  } finally {
    other.db.client.off('commandStarted', started);
  }
}

test("a card registered or changed through the relay is in the other process's next listing, by role, skill and repo", async () => {
  expect(await list({ role: 'designer' })).toEqual([]);
  const dana = await relay.register({
    handle: 'dana@acme',
    role: 'designer',
    skills: ['figma'],
    repos_owned: ['acme/web/'],
  });
  expect(await list({ role: 'designer' })).toEqual(['dana@acme']);
  expect(await list({ skill: 'figma' })).toEqual(['dana@acme']);
  expect(await list({ repo: 'acme/web/' })).toEqual(['dana@acme']);
  expect(await list({ repo: 'acme/' })).toEqual(['dana@acme']);
  expect(
    (await relay.rest('PUT', '/agents/me/card', dana, { role: 'backend', skills: ['go'], repos_owned: ['acme/api'] }))
      .status,
  ).toBe(200);
  expect(await list({ role: 'designer' })).toEqual([]);
  expect(await list({ skill: 'figma' })).toEqual([]);
  expect(await list({ skill: 'go' })).toEqual(['dana@acme']);
  expect(await list({ repo: 'acme/web/' })).toEqual([]);
  expect(await list({ repo: 'acme/api' })).toEqual(['dana@acme']);
});

test('a listing by role, skill or repo is one indexed query, the same with 30 or 300 teammates', async () => {
  // Ten registrations at a time: 300 one after the other took over a minute on FerretDB 2 beside the rest of the suite.
  const register = (from: number, to: number) =>
    inParallel(
      Array.from({ length: to - from }, (_, k) => from + k),
      10,
      async (i) => {
        await relay.register({
          handle: `m${String(i).padStart(3, '0')}@acme`,
          role: i % 10 === 0 ? 'sre' : 'dev',
          skills: i % 10 === 0 ? ['pager'] : ['ts'],
          repos_owned: [`acme/svc${i}/`],
        });
      },
    );
  const costs = async () => ({
    role: await counted(() => list({ role: 'sre' })),
    skill: await counted(() => list({ skill: 'pager' })),
    repo: await counted(() => list({ repo: 'acme/svc1' })),
  });
  await register(0, 30);
  const small = await costs();
  await register(30, 300);
  const large = await costs();
  expect(small.role.result).toHaveLength(3);
  expect(large.role.result).toHaveLength(30);
  expect(large.skill.result).toEqual(large.role.result);
  expect(large.repo.result).toEqual([]);
  for (const kind of ['role', 'skill', 'repo'] as const) expect(large[kind].reads).toEqual(small[kind].reads);
  for (const kind of ['role', 'skill', 'repo'] as const) expect(large[kind].reads).toEqual(['find agents']);
  const plan = async (filter: object, index: string, field: string) =>
    readsIndexOn(JSON.stringify((await other.agents.find(filter).explain()).queryPlanner), index, field);
  expect(await plan({ status: 'active', skills: 'pager' }, 'by_skill', 'skills')).toBe(true);
  expect(await plan({ status: 'active', repos_owned: { $in: ['acme/svc1', 'acme/'] } }, 'by_repo', 'repos_owned')).toBe(
    true,
  );
});

test('a disabled teammate is listed by no role, skill or repo', async () => {
  await relay.register({ handle: 'finn@acme', role: 'qa', skills: ['cypress'], repos_owned: ['acme/e2e/'] });
  expect(await list({ skill: 'cypress' })).toEqual(['finn@acme']);
  expect((await relay.rest('POST', '/admin/agents/finn@acme/disable', relay.adminKey)).status).toBe(200);
  expect(await list({ role: 'qa' })).toEqual([]);
  expect(await list({ skill: 'cypress' })).toEqual([]);
  expect(await list({ repo: 'acme/e2e/' })).toEqual([]);
  expect((await relay.rpc(alice, 'agents/list', { skill: 'cypress' })).body.result.teammates).toEqual([]);
});
