// Handoff runs (relay-core/service/handoff-runs.ts) on in-memory ports: the recipient asks for a run of an accepted
// handoff, a runner claims it under a lease, heartbeats and sends progress, and finishes it with each outcome; a lease
// left to expire is taken over; every refusal says why and changes nothing. The same over JSON-RPC, the CLI runner
// and Slack: test/integration/handoff-runs.test.ts, agent-runner*.test.ts.
import pino from 'pino';
import type { ThreadDoc } from '../../relay-core/domain/documents';
import { DEFAULT_RUN_SETTINGS, HandoffRuns, type FinishRequest } from '../../relay-core/service/handoff-runs';
import type { AppendRequest } from '../../relay-core/service/message-append';
import { MAX_OPEN_RUNS } from '../../relay-core/store/run-store';
import { InMemoryRuns } from '../fakes/in-memory-runs';
import { InMemoryThreads } from '../fakes/in-memory-threads';
import { agent, NOW, recordingOutbox } from '../fakes/use-case-ports';
import { threadDocAt } from '../helpers/thread-docs';
import { refusal } from '../helpers/refusal';

const sam = agent('sam@acme');
const rita = agent('rita@acme');
const eve = agent('eve@acme');
const LEASE_MS = DEFAULT_RUN_SETTINGS.leaseMs;

function setup() {
  const threads = new InMemoryThreads();
  const runs = new InMemoryRuns();
  const outbox = recordingOutbox();
  const clock = { at: NOW.getTime(), now: () => new Date(clock.at) };
  const gated: string[] = [];
  const completed: Array<{ thread_id: string; result_summary: string; key: string }> = [];
  const appended: Array<AppendRequest & { key: string }> = [];
  const service = new HandoffRuns({
    store: {
      readThread: (id) => threads.readThread(id),
      writeThread: (id, change) => threads.writeThread(id, change),
      runs,
    },
    outbox,
    clock,
    log: pino({ level: 'silent' }),
    settings: DEFAULT_RUN_SETTINGS,
    gate: async (caller, threadId) => void gated.push(`${caller.handle} ${threadId}`),
    complete: async (_caller, request, _via, key) => {
      completed.push({ thread_id: request.thread_id, result_summary: request.result_summary, key });
      await threads.writeThread(request.thread_id, (doc) => ({ ...doc, status: 'completed' }));
    },
    append: async (_caller, request, _via, key) => void appended.push({ ...request, key }),
  });
  const stored = async (status: ThreadDoc['status'] = 'accepted') => {
    const doc = threadDocAt(sam.handle, rita.handle, status, NOW);
    await threads.insert(doc);
    return doc;
  };
  const events = () => outbox.published.map((e) => e.type);
  /** Rita's run of an accepted handoff, claimed by `laptop`. */
  const claimed = async () => {
    const doc = await stored();
    const queued = await service.request(rita, doc._id, 'api');
    const run = (await service.claim(rita, 'laptop', 0))!;
    return { doc, queued, run };
  };
  return { threads, runs, service, clock, gated, completed, appended, stored, events, claimed };
}

describe('request', () => {
  test("the recipient's request queues one run, asked of the policy, recorded on the thread with run.queued", async () => {
    const { service, threads, runs, gated, stored, events } = setup();
    const doc = await stored();
    const view = await service.request(rita, doc._id, 'slack');
    expect(view).toMatchObject({ task_id: doc._id, status: 'queued', runner: null, claims: 0, reported: false });
    expect(gated).toEqual([`rita@acme ${doc._id}`]);
    expect((await threads.readThread(doc._id))!.run).toMatchObject({ id: view.run_id, status: 'queued' });
    expect(await runs.openRuns(rita.handle)).toEqual([view.run_id]);
    expect(events()).toEqual(['run.queued']);
  });

  test('asking again while it is open answers the same run: one run, one event', async () => {
    const { service, runs, stored, events } = setup();
    const doc = await stored();
    const first = await service.request(rita, doc._id, 'api');
    expect(await service.request(rita, doc._id, 'mcp')).toEqual(first);
    expect(await runs.openRuns(rita.handle)).toEqual([first.run_id]);
    expect(events()).toEqual(['run.queued']);
  });

  test('approved: the policy is not asked again', async () => {
    const { service, gated, stored } = setup();
    const doc = await stored();
    await service.request(rita, doc._id, 'slack', undefined, { approved: true });
    expect(gated).toEqual([]);
  });

  test.each([
    ['the sender', sam, 'not_authorized_transition'],
    ['a stranger', eve, 'not_a_participant'],
  ])('%s is refused: only the recipient can hand it to their agent; nothing is written', async (_who, caller, code) => {
    const { service, threads, runs, stored, events } = setup();
    const doc = await stored();
    const error = await refusal(service.request(caller, doc._id, 'api'));
    expect(error.code).toBe(code);
    expect(error.message).toBe('Only the recipient (rita@acme) can hand this handoff to their agent');
    expect(threads.writes).toBe(0);
    expect(await runs.openRuns(caller.handle)).toEqual([]);
    expect(events()).toEqual([]);
  });

  test.each([
    ['pending', 'invalid_transition', 'this one is pending (accept it first, or accept with run: true)'],
    ['completed', 'thread_terminal', 'this one is completed'],
  ] as const)('a %s handoff is refused with %s; nothing is queued', async (status, code, words) => {
    const { service, threads, runs, gated, stored } = setup();
    const doc = await stored(status);
    const error = await refusal(service.request(rita, doc._id, 'api'));
    expect(error.code).toBe(code);
    expect(error.message).toBe(`Only an accepted handoff can be handed to your agent; ${words}`);
    expect(gated).toEqual([]);
    expect(threads.writes).toBe(0);
    expect(await runs.openRuns(rita.handle)).toEqual([]);
  });

  test('an unknown thread is thread_not_found', async () => {
    const { service } = setup();
    expect((await refusal(service.request(rita, '00000000-0000-4000-8000-000000000000', 'api'))).code).toBe(
      'thread_not_found',
    );
  });

  test(`a recipient with ${MAX_OPEN_RUNS} open runs is refused (rate_limited); the run is not kept anywhere`, async () => {
    const { service, threads, runs, stored } = setup();
    for (let i = 0; i < MAX_OPEN_RUNS; i += 1) await runs.open(rita.handle, `other-${i}`);
    const doc = await stored();
    const error = await refusal(service.request(rita, doc._id, 'api'));
    expect(error.code).toBe('rate_limited');
    expect(error.message).toBe('You have too many runs queued or running; stop some first');
    expect((await threads.readThread(doc._id))!.run).toBeFalsy();
    const open = await runs.openRuns(rita.handle);
    expect(open).toHaveLength(MAX_OPEN_RUNS);
    expect(open.every((id) => id.startsWith('other-'))).toBe(true);
  });
});

describe('the runner', () => {
  test('a claim takes the oldest queued run under a fresh lease: running, run.started on the thread', async () => {
    const { service, threads, events, claimed } = setup();
    const { doc, queued, run } = await claimed();
    expect(run).toMatchObject({
      run_id: queued.run_id,
      status: 'running',
      runner: 'laptop',
      claims: 1,
      started_at: NOW.toISOString(),
      lease_expires_at: new Date(NOW.getTime() + LEASE_MS).toISOString(),
      lease_ms: LEASE_MS,
      next_progress_seq: 1,
    });
    expect(run.lease_id).toEqual(expect.any(String));
    expect((await threads.readThread(doc._id))!.run).toMatchObject({ status: 'running', runner: 'laptop' });
    expect(events()).toEqual(['run.queued', 'run.started']);
    // Held: another runner finds nothing to take.
    expect(await service.claim(rita, 'desktop', 0)).toBeNull();
  });

  test('nothing queued: the claim answers null', async () => {
    const { service } = setup();
    expect(await service.claim(rita, 'laptop', 0)).toBeNull();
  });

  test('a heartbeat renews the lease from now', async () => {
    const { service, clock, claimed } = setup();
    const { run } = await claimed();
    clock.at += 20_000;
    const beat = await service.heartbeat(rita, run.run_id, run.lease_id);
    expect(beat.heartbeat_at).toBe(new Date(clock.at).toISOString());
    expect(beat.lease_expires_at).toBe(new Date(clock.at + LEASE_MS).toISOString());
    expect(beat.stop_requested).toBe(false);
  });

  test('progress: batch n is a thread message once; too soon, out of order and a replay each answer as they should', async () => {
    const { service, clock, appended, claimed } = setup();
    const { doc, run } = await claimed();
    expect(await service.progress(rita, run.run_id, run.lease_id, 1, 'step one\nreading files', 'api')).toEqual({
      run_id: run.run_id,
      seq: 1,
      recorded: true,
    });
    expect(appended).toEqual([
      {
        thread_id: doc._id,
        body: 'step one\nreading files',
        payload: { kind: 'run_progress', run_id: run.run_id, seq: 1 },
        artifacts: [],
        key: `run:${run.run_id}:p1`,
      },
    ]);
    const soon = await refusal(service.progress(rita, run.run_id, run.lease_id, 2, 'more', 'api'));
    expect(soon.code).toBe('rate_limited');
    expect(soon.details).toEqual({ retry_after_ms: DEFAULT_RUN_SETTINGS.progressIntervalMs });
    clock.at += DEFAULT_RUN_SETTINGS.progressIntervalMs;
    const skipped = await refusal(service.progress(rita, run.run_id, run.lease_id, 3, 'skipped', 'api'));
    expect(skipped).toMatchObject({
      code: 'invalid_params',
      message: 'params.seq: must be 2 (the next batch of this run)',
    });
    // A retry of batch 1 records it under the same key (the message ledger keeps it once).
    await service.progress(rita, run.run_id, run.lease_id, 1, 'step one\nreading files', 'api');
    expect(appended.map((a) => a.key)).toEqual([`run:${run.run_id}:p1`, `run:${run.run_id}:p1`]);
    expect((await service.get(rita, run.run_id)).progress).toMatchObject({ batches: 1, last_line: 'reading files' });
  });

  test('finish succeeded completes the handoff with the report, closes the run and reports it; a retry answers the same', async () => {
    const { service, runs, completed, claimed, events } = setup();
    const { doc, run } = await claimed();
    const finish: FinishRequest = {
      run_id: run.run_id,
      lease_id: run.lease_id,
      outcome: 'succeeded',
      reason: 'exit',
      exit_code: 0,
      report: 'Shipped it.',
    };
    const done = await service.finish(rita, finish, 'api');
    expect(done).toMatchObject({ status: 'succeeded', result: { reason: 'exit', exit_code: 0 }, reported: true });
    expect(completed).toEqual([{ thread_id: doc._id, result_summary: 'Shipped it.', key: `run:${run.run_id}:end` }]);
    expect(await runs.openRuns(rita.handle)).toEqual([]);
    expect(events()).toEqual(['run.queued', 'run.started', 'run.finished']);
    expect(await service.finish(rita, finish, 'api')).toEqual(done);
    expect(events()).toHaveLength(3);
  });

  test.each([
    ['failed', 'exit', 2, "rita@acme's agent failed (exit code 2). The handoff stays accepted.\n\nboom"],
    [
      'failed',
      'time_limit',
      null,
      "rita@acme's agent ran out of its time limit and was stopped. The handoff stays accepted.\n\nboom",
    ],
    ['stopped', 'stopped', null, "rita@acme's agent was stopped. The handoff stays accepted.\n\nboom"],
  ] as const)(
    'finish %s (%s) posts what happened and leaves the handoff accepted',
    async (outcome, reason, exit_code, body) => {
      const { service, threads, completed, appended, claimed } = setup();
      const { doc, run } = await claimed();
      const done = await service.finish(
        rita,
        { run_id: run.run_id, lease_id: run.lease_id, outcome, reason, exit_code, report: 'boom' },
        'api',
      );
      expect(done).toMatchObject({ status: outcome, reported: true });
      expect(completed).toEqual([]);
      expect(appended).toEqual([
        {
          thread_id: doc._id,
          body,
          payload: { kind: 'run_ended', run_id: run.run_id, status: outcome },
          artifacts: [],
          key: `run:${run.run_id}:end`,
        },
      ]);
      expect(await threads.readThread(doc._id)).toMatchObject({ status: 'accepted', run: { status: outcome } });
    },
  );

  test('a lease left to expire is taken over by another runner; the first runner then hears it lost the run', async () => {
    const { service, clock, claimed } = setup();
    const { run } = await claimed();
    clock.at += LEASE_MS - 1;
    expect(await service.claim(rita, 'desktop', 0)).toBeNull();
    clock.at += 1;
    const taken = (await service.claim(rita, 'desktop', 0))!;
    expect(taken).toMatchObject({ run_id: run.run_id, runner: 'desktop', claims: 2, started_at: NOW.toISOString() });
    expect(taken.lease_id).not.toBe(run.lease_id);
    const lost = await refusal(service.heartbeat(rita, run.run_id, run.lease_id));
    expect(lost).toMatchObject({ code: 'conflict', details: { status: 'running', lease_lost: true } });
    expect(lost.message).toBe(
      `Run ${run.run_id} is held by another lease (desktop): this runner lost it; stop the agent`,
    );
    const late = await refusal(
      service.finish(
        rita,
        {
          run_id: run.run_id,
          lease_id: run.lease_id,
          outcome: 'succeeded',
          reason: 'exit',
          exit_code: 0,
          report: null,
        },
        'api',
      ),
    );
    expect(late.code).toBe('conflict');
    expect((await service.get(rita, run.run_id)).status).toBe('running');
  });

  test("refusals of the lease calls: someone else's run, a finished run, an unknown run", async () => {
    const { service, claimed } = setup();
    const { run } = await claimed();
    expect(await refusal(service.heartbeat(eve, run.run_id, run.lease_id))).toMatchObject({
      code: 'forbidden',
      message: `Run ${run.run_id} is rita@acme's`,
    });
    await service.finish(
      rita,
      { run_id: run.run_id, lease_id: run.lease_id, outcome: 'failed', reason: 'exit', exit_code: 1, report: null },
      'api',
    );
    expect(await refusal(service.progress(rita, run.run_id, run.lease_id, 1, 'late', 'api'))).toMatchObject({
      code: 'conflict',
      message: `Run ${run.run_id} is failed; it takes no more calls`,
    });
    expect((await refusal(service.heartbeat(rita, 'no-such-run', run.lease_id))).code).toBe('not_found');
  });

  test('stopping a queued run ends it at once, posted on the thread; a claim then finds nothing', async () => {
    const { service, runs, appended, stored } = setup();
    const doc = await stored();
    const queued = await service.request(rita, doc._id, 'api');
    expect(await service.stop(rita, queued.run_id, 'slack')).toMatchObject({ status: 'stopped', stop_requested: true });
    expect(appended.map((a) => a.body)).toEqual([
      "rita@acme's agent was stopped by rita@acme before it started. The handoff stays accepted.",
    ]);
    expect(await runs.openRuns(rita.handle)).toEqual([]);
    expect(await service.claim(rita, 'laptop', 0)).toBeNull();
    expect((await refusal(service.stop(sam, queued.run_id, 'api'))).code).toBe('not_authorized_transition');
  });
});
