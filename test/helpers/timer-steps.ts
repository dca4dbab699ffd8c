// Waiting on a handoff's timer steps in tests that move the relay's clock (TestClock): the clock moved to a time
// after the thread's creation, a step fired, its Slack post (by post key), the timer armed for a step.
import type { ThreadDoc } from '../../relay-core/domain/documents';
import type { FakeSlack, FakeSlackCall } from '../../scripts/fake-slack/fake-slack-api';
import type { TestRelay } from './relay-harness';
import type { TestClock } from './test-clock';
import { waitUntil } from './wait-until';
import { armedTimerOf } from './thread-docs';

/** `ctx` is read on each call, so the helpers can be made before beforeAll starts the relay. */
export function timerSteps(ctx: () => { relay: TestRelay; slack: FakeSlack }, clock: TestClock) {
  const read = async (id: string): Promise<ThreadDoc> => (await ctx().relay.store.readThread(id))!;

  /** Moves the relay's clock to `offsetMs` after the thread was created (never backwards). */
  async function at(id: string, offsetMs: number): Promise<void> {
    const delta = (await read(id)).created_at.getTime() + offsetMs - clock.now().getTime();
    if (delta > 0) clock.advance(delta);
  }

  /** The successful posts Slack got for this thread under the post key `kind` (e.g. recipient:t:remind-1). */
  function posts(id: string, kind: string): FakeSlackCall[] {
    return ctx()
      .slack.callsTo('chat.postMessage')
      .filter(
        (c) =>
          (c.args.metadata as any)?.event_payload?.thread_id === id &&
          (c.args.metadata as any).event_payload.kind === kind,
      );
  }

  async function posted(id: string, kind: string): Promise<FakeSlackCall> {
    return waitUntil(async () => posts(id, kind)[0], `the ${kind} post of ${id}`);
  }

  async function fired(id: string, step: string): Promise<ThreadDoc> {
    return waitUntil(async () => {
      const doc = await read(id);
      return (doc.timers?.fired as Record<string, Date> | undefined)?.[step] ? doc : undefined;
    }, `${step} to fire on ${id}`);
  }

  /** Waits until the thread's timer names `step` (null: until it has none). */
  async function armed(id: string, step: string | null): Promise<void> {
    await waitUntil(async () => {
      const row = await armedTimerOf(ctx().relay.store, id);
      return step === null ? !row : row?.step === step;
    }, `${id}'s timer armed for ${step}`);
  }

  return { read, at, posts, posted, fired, armed };
}
