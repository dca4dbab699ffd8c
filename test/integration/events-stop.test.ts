// GET /events and a relay stop: a long poll that is still authenticating or finding its start when the relay stops
// is ended by the stop like any other (OpenEventStreams holds it from its arrival), not left to run out its wait.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { AgentDoc } from '../../relay-core/domain/documents';
import { mountEventsRoute, OpenEventStreams } from '../../relay-core/http/events-route';
import { createLogger } from '../../relay-core/ops/logger';
import { EventFeed, LocalWakeups } from '../../relay-core/service/event-feed';
import { EventLog } from '../../relay-core/store/event-log';
import { MongoStore } from '../../relay-core/store/mongo-store';
import { testMongoUrl, uniqueName } from '../helpers/test-env';
import { waitUntil } from '../helpers/wait-until';

let store: MongoStore;

beforeAll(async () => {
  store = await MongoStore.connect(testMongoUrl(), uniqueName('events_stop'));
});

afterAll(async () => {
  await store?.close();
});

/** A step that holds every caller until released, and says when the first one arrived. */
function gate() {
  let arrived = false;
  let release!: () => void;
  const open = new Promise<void>((resolve) => (release = resolve));
  return {
    async pass(): Promise<void> {
      arrived = true;
      await open;
    },
    arrived: () => arrived,
    release,
  };
}

type Step = 'authentication' | 'the feed start';

/** GET /events alone on a server over the test database, `step` of every request held at `held`. */
async function eventsServer(held: ReturnType<typeof gate>, step?: Step) {
  // The event log the feed starts from: its head read is 'the feed start'.
  class HeldEventLog extends EventLog {
    override async head(handle: string): Promise<number> {
      if (step === 'the feed start') await held.pass();
      return super.head(handle);
    }
  }
  const log = createLogger('silent');
  const streams = new OpenEventStreams();
  const app = express();
  mountEventsRoute(app, {
    feed: new EventFeed({ store: { eventLog: new HeldEventLog(store.db) }, wakeups: new LocalWakeups(), log }),
    streams,
    log,
    authenticate: async () => {
      if (step === 'authentication') await held.pass();
      return { handle: 'dave@acme' } as AgentDoc;
    },
  });
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  /** A long poll of 60 s; returns what it got so far (undefined until it ends). */
  const poll = () => {
    let answer: { status: number; body: unknown } | { error: string } | undefined;
    void fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/events?wait=60`).then(
      async (r) => (answer = { status: r.status, body: await r.json() }),
      (error: Error) => (answer = { error: error.message }),
    );
    return () => answer;
  };
  return { server, streams, poll };
}

test.each(['authentication', 'the feed start'] as const)(
  'a long poll still in %s when the relay stops ends with the stop, not after its wait',
  async (step) => {
    const held = gate();
    const { server, streams, poll } = await eventsServer(held, step);
    try {
      const answer = poll();
      await waitUntil(async () => held.arrived(), `the poll in ${step}`);
      // What the relay's stop does with its server (scripts/relay.ts), begun while the poll is held; then it goes on.
      let stopped = false;
      void (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        await streams.closeAll();
        server.closeIdleConnections();
        await closed;
        stopped = true;
      })();
      held.release();
      // Well under the poll's 60 s wait, which both waited for when the stop did not know of the poll yet.
      expect(await waitUntil(async () => answer(), 'the poll answered')).toEqual({
        status: 200,
        body: { events: [], cursor: '0' },
      });
      await waitUntil(async () => stopped, 'the stop');
    } finally {
      server.closeAllConnections();
    }
  },
);

test('a long poll that arrives once the stop has ended the open ones (on a keep-alive connection that was busy) ends at once', async () => {
  const { server, streams, poll } = await eventsServer(gate());
  try {
    await streams.closeAll();
    const answer = poll();
    expect(await waitUntil(async () => answer(), 'the poll answered')).toEqual({
      status: 200,
      body: { events: [], cursor: '0' },
    });
  } finally {
    server.closeAllConnections();
    server.close();
  }
});
