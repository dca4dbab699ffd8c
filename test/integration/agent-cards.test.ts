// The teammates' cards as agents/list and handoff targets read them, the same on every engine: a card registered or
// changed in one process is in another process's very next listing (nothing is cached); a listing by role, skill or
// repo is one or two indexed queries, the same count with 30 or 300 teammates; and a tag a dead process left behind
// never lists a card for what it no longer has.
import type { CommandStartedEvent } from 'mongodb';
import { MongoStore } from '../../relay-core/store/mongo-store';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
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
  // Its old tags are gone, not only filtered out.
  expect(await other.cards.tags.countDocuments({ handle: 'dana@acme' })).toBe(2);
});

test('a listing by role, skill or repo reads the same few commands with 30 or 300 teammates', async () => {
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
  expect(large.role.reads).toEqual(['find agents']);
  expect(large.skill.reads).toEqual(['find agent_tags', 'find agents']);
});

test('a tag left behind by a process that died between a card write and its clean-up lists nothing wrong; reconcile removes it', async () => {
  const erin = await relay.register({ handle: 'erin@acme', skills: ['rust'] });
  expect(await list({ skill: 'rust' })).toEqual(['erin@acme']);
  // What a process killed after the card write leaves: the card says go (its tag went in first), a tag still says rust.
  await other.cards.adding({ ...(await other.agents.findOne({ _id: 'erin@acme' }))!, skills: ['go'] });
  await other.agents.updateOne({ _id: 'erin@acme' }, { $set: { skills: ['go'] } });
  expect(await list({ skill: 'rust' })).toEqual([]);
  expect(await list({ skill: 'go' })).toContain('erin@acme');
  expect(await other.cards.reconcile()).toBe(1);
  expect(await other.cards.tags.countDocuments({ handle: 'erin@acme', value: 'rust' })).toBe(0);
  expect(erin).toMatch(/^hr_/);
});

test('a disabled teammate has no tags left and is listed by no role, skill or repo', async () => {
  await relay.register({ handle: 'finn@acme', role: 'qa', skills: ['cypress'], repos_owned: ['acme/e2e/'] });
  expect(await list({ skill: 'cypress' })).toEqual(['finn@acme']);
  expect((await relay.rest('POST', '/admin/agents/finn@acme/disable', relay.adminKey)).status).toBe(200);
  expect(await list({ role: 'qa' })).toEqual([]);
  expect(await list({ skill: 'cypress' })).toEqual([]);
  expect(await list({ repo: 'acme/e2e/' })).toEqual([]);
  expect(await other.cards.tags.countDocuments({ handle: 'finn@acme' })).toBe(0);
  expect((await relay.rpc(alice, 'agents/list', { skill: 'cypress' })).body.result.teammates).toEqual([]);
});
