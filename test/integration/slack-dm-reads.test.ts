// What a new handoff's DM costs the store before it reaches Slack, counted on the driver's command monitoring: the
// Slack job of a thread.created event, run by the process that created the thread moments ago, starts from the
// document it inserted, so nothing is read between the create and chat.postMessage (on FerretDB that was a read of
// the thread and a probe of its claims: 2 of the 3 round trips in front of the post).
import type { CommandStartedEvent } from 'mongodb';
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { sendHandoff } from '../helpers/handoffs';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { testMongoUrl } from '../helpers/test-env';
import { waitUntil } from '../helpers/wait-until';

const BOB = 'U0DMREADS';

let slack: FakeSlack;
let relay: TestRelay;
let aliceKey: string;

beforeAll(async () => {
  slack = await startFakeSlack();
  slack.addUser(BOB);
  const url = new URL(testMongoUrl());
  url.searchParams.set('monitorCommands', 'true');
  relay = await startTestRelay({ name: 'slack_dm_reads', slack, env: { MONGODB_URL: url.toString() } });
  aliceKey = await relay.register({ handle: 'alice@acme' });
  await relay.register({ handle: 'bob@acme', slack_user_id: BOB });
});

afterAll(async () => {
  await relay?.stop();
  await slack?.close();
});

const dmOf = (id: string) =>
  slack
    .callsTo('chat.postMessage')
    .find(
      (c) =>
        (c.args.metadata as { event_payload?: { thread_id?: string } } | undefined)?.event_payload?.thread_id === id,
    );

test("a new handoff's DM reads nothing of its thread before it is posted, shows the handoff, and is recorded on it", async () => {
  const reads: Array<{ at: number; what: string }> = [];
  const started = (event: CommandStartedEvent) => {
    if (event.commandName === 'find' && event.command.find === 'threads') {
      reads.push({ at: Date.now(), what: `${event.command.find} ${String(event.command.filter?._id)}` });
    }
  };
  relay.store.db.client.on('commandStarted', started);
  try {
    const id = await sendHandoff(relay, aliceKey, 'bob@acme', 'rotate the staging database credentials');
    await waitUntil(async () => dmOf(id), 'the DM at the fake Slack');
    const dm = dmOf(id)!;
    expect(dm.args.channel).toBe(slack.imChannelId(BOB));
    expect(JSON.stringify(dm.args.blocks)).toContain('rotate the staging database credentials');
    expect(reads.filter((r) => r.what.includes(id) && r.at <= dm.at)).toEqual([]);
    // The post's record lands on the thread (the ledger's claim and record went through the versioned write).
    await waitUntil(
      async () => (await relay.store.readThread(id))?.slack?.ts === dm.response.ts,
      'the DM recorded on its thread',
    );
  } finally {
    relay.store.db.client.off('commandStarted', started);
  }
});
