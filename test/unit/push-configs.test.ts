// A task's push notification configs (relay-core/service/push-configs.ts) on the in-memory configs and thread ports:
// a task starts with none, a change stores what it answers, a refused change keeps them as they were, and the thread
// is marked as one with push configs once, however often it is asked. What A2A clients see of it (set, get, list,
// delete, deliveries): test/integration/a2a-push.test.ts.
import { PushConfigs } from '../../relay-core/service/push-configs';
import type { PushConfigEntry } from '../../relay-core/store/push-configs';
import { InMemoryPushConfigs } from '../fakes/in-memory-push-configs';
import { InMemoryThreads } from '../fakes/in-memory-threads';
import { NOW } from '../fakes/use-case-ports';
import { threadDocAt } from '../helpers/thread-docs';

const hook = (id: string, owner: string): PushConfigEntry => ({
  id,
  owner,
  url: `https://agent.test/hooks/${id}`,
  secret: `whsec_${id}`,
  created_at: NOW,
});

async function setup() {
  const threads = new InMemoryThreads();
  const doc = threadDocAt('sam@acme', 'rita@acme', 'pending', NOW);
  await threads.insert(doc);
  threads.writes = 0;
  return { threads, doc, pushConfigs: new PushConfigs({ configs: new InMemoryPushConfigs(), threads }) };
}

test("a task starts with no configs; a participant's config is stored and read back", async () => {
  const { pushConfigs, doc } = await setup();
  expect(await pushConfigs.of(doc._id)).toEqual([]);
  const after = await pushConfigs.change(doc._id, (d) => ({ ...d, configs: [...d.configs, hook('h1', 'rita@acme')] }));
  expect(after).toEqual([hook('h1', 'rita@acme')]);
  expect(await pushConfigs.of(doc._id)).toEqual([hook('h1', 'rita@acme')]);
});

test("each participant's change keeps the other's config", async () => {
  const { pushConfigs, doc } = await setup();
  await pushConfigs.change(doc._id, (d) => ({ ...d, configs: [...d.configs, hook('h1', 'rita@acme')] }));
  await pushConfigs.change(doc._id, (d) => ({ ...d, configs: [...d.configs, hook('h2', 'sam@acme')] }));
  const removed = await pushConfigs.change(doc._id, (d) => ({
    ...d,
    configs: d.configs.filter((c) => !(c.id === 'h1' && c.owner === 'rita@acme')),
  }));
  expect(removed).toEqual([hook('h2', 'sam@acme')]);
});

test('a change that refuses (answers undefined) leaves the configs as they were', async () => {
  const { pushConfigs, doc } = await setup();
  await pushConfigs.change(doc._id, (d) => ({ ...d, configs: [hook('h1', 'rita@acme')] }));
  expect(await pushConfigs.change(doc._id, () => undefined)).toEqual([hook('h1', 'rita@acme')]);
  expect(await pushConfigs.of(doc._id)).toEqual([hook('h1', 'rita@acme')]);
});

test('mark records on the thread that it has push configs, in one write however often it is asked', async () => {
  const { pushConfigs, threads, doc } = await setup();
  await pushConfigs.mark(doc._id);
  await pushConfigs.mark(doc._id);
  expect(await threads.readThread(doc._id)).toMatchObject({ push_configs: true, version: (doc.version ?? 0) + 1 });
  expect(threads.writes).toBe(1);
});

test('mark of an unknown task writes nothing', async () => {
  const { pushConfigs, threads } = await setup();
  await pushConfigs.mark('00000000-0000-4000-8000-000000000000');
  expect(threads.writes).toBe(0);
});
