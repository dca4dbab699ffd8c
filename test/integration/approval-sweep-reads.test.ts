// The approval sweep reads only the open approvals (store/approval-ledger.ts): the commands it sends to FerretDB do
// not grow with the number of decided approvals, and none of them filters the approvals listing (which FerretDB on
// SQLite would serve by decoding the whole collection). Counted with the driver's command monitoring, not timed.
import type { CommandStartedEvent } from 'mongodb';
import { createLogger } from '../../relay-core/ops/logger';
import { createRelay, type Relay } from '../../relay-core/service/relay-service';
import { Teammates } from '../../relay-core/service/teammates';
import { MongoStore } from '../../relay-core/store/mongo-store';
import { text } from '../helpers/handoffs';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { testMongoUrl } from '../helpers/test-env';
import { noPublisher } from '../helpers/no-publisher';

const POLICY = `rules:\n  - { id: to-memo-needs-lead, match: { action: handoff.create, recipient: { handle: memo@acme } }, effect: require_approval, approvers: [lead@acme] }\n`;

let relay: TestRelay;
let senderKey: string;
let store: MongoStore;
let sweeper: Relay;
const commands: CommandStartedEvent[] = [];

beforeAll(async () => {
  relay = await startTestRelay({ name: 'approval_sweep_reads' });
  await relay.register({ handle: 'lead@acme' });
  await relay.register({ handle: 'memo@acme' });
  senderKey = await relay.register({ handle: 'sender@acme' });
  expect((await relay.rest('PUT', '/admin/policy', relay.adminKey, { source: POLICY })).status).toBe(200);
  // A second relay service on the same database, whose every command is seen: it runs the sweep under count.
  store = await MongoStore.connect(testMongoUrl(), relay.config.mongodbDb, { monitorCommands: true });
  store.db.client.on('commandStarted', (event) => commands.push(event));
  const log = createLogger('silent');
  const webhooks = {
    newEndpoint: async () => {
      throw new Error('not in this test');
    },
    onEndpointSet: async () => {},
  };
  const teammates = new Teammates({ store, keyPepper: relay.config.keyPepper!, log, webhooks });
  sweeper = createRelay({ store, teammates, events: noPublisher, publicUrl: relay.url, log });
});

afterAll(async () => {
  await store?.close();
  await relay?.stop();
});

async function heldCreate(summary: string): Promise<string> {
  const { body } = await relay.rpc(senderKey, 'message/send', {
    recipient: 'memo@acme',
    intent: 'inform',
    message: text(summary),
  });
  expect(body.result).toMatchObject({ status: { state: 'awaiting_approval' } });
  return body.result.approval.approval_id as string;
}

async function decided(n: number, round: number): Promise<void> {
  for (let i = 0; i < n; i += 1) {
    const id = await heldCreate(`decided ${round}.${i}`);
    const answer = await relay.rest('POST', `/admin/approvals/${id}/reject`, relay.adminKey, {
      as: 'lead@acme',
      reason: 'not now',
    });
    expect(answer.body).toMatchObject({ changed: true, approval: { status: 'rejected' } });
  }
}

/** The commands one sweep sends, by command and collection. */
async function sweepCommands(): Promise<string[]> {
  commands.length = 0;
  await sweeper.approvalSweep.sweep();
  return commands
    .map((c) => `${c.commandName} ${String((c.command as Record<string, unknown>)[c.commandName])}`)
    .sort();
}

test('the sweep reads as much with 30 decided approvals as with 3: one read of the open ones, on their index', async () => {
  const open = [await heldCreate('open 1'), await heldCreate('open 2')];
  await decided(3, 1);
  const few = await sweepCommands();
  await decided(27, 2);
  const many = await sweepCommands();
  expect(many).toEqual(few);
  expect(many.length).toBeGreaterThan(0);
  // Its one listing read is of the open approvals (the `open` index), exactly the two still pending.
  expect(many.filter((c) => c.endsWith(' approvals'))).toEqual(['find approvals']);
  expect((await store.approvals.find({ open: 1 }).toArray()).map((e) => e._id).sort()).toEqual([...open].sort());
  // `approvals list --status pending` answers from the same open approvals.
  const listed = await relay.rest('GET', '/admin/approvals?status=pending', relay.adminKey);
  expect(listed.body.approvals.map((a: { approval_id: string }) => a.approval_id).sort()).toEqual([...open].sort());
});
