// Handoff runs over JSON-RPC (runs/*, tasks/update accept with run: true): the lease, takeover, progress, finish,
// stop and the policy's handoff.run, against a real relay on FerretDB and Redis.
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { sendHandoff } from '../helpers/handoffs';
import { waitUntil } from '../helpers/wait-until';

let relay: TestRelay;
let alice: string;
let bob: string;
let carol: string;
let dan: string;
const policyFile = join(tmpdir(), `runs-policy-${process.pid}.yaml`);

beforeAll(async () => {
  await writeFile(
    policyFile,
    'rules:\n' +
      '  - { id: no-runs-for-carol, match: { action: handoff.run, actor: { handle: carol@acme } }, effect: deny, reason: carol runs by hand }\n' +
      '  - { id: dan-runs-need-alice, match: { action: handoff.run, actor: { handle: dan@acme } }, effect: require_approval, approvers: [alice@acme] }\n',
  );
  // Progress at most once a minute per run: the too-soon test's second batch is too soon however slow the box.
  relay = await startTestRelay({
    name: 'handoff_runs',
    env: { RELAY_RUN_LEASE: '1500ms', RELAY_RUN_PROGRESS_INTERVAL: '60s', RELAY_POLICY_FILE: policyFile },
  });
  [alice, bob, carol, dan] = await Promise.all(
    ['alice@acme', 'bob@acme', 'carol@acme', 'dan@acme'].map((handle) => relay.register({ handle })),
  );
});

afterAll(async () => {
  await relay?.stop();
});

async function ok(key: string, method: string, params: unknown): Promise<any> {
  const { body } = await relay.rpc(key, method, params);
  if (!body.result) throw new Error(`${method} failed: ${JSON.stringify(body.error)}`);
  return body.result;
}

async function refused(
  key: string,
  method: string,
  params: unknown,
): Promise<{ code: string; message: string; data: any }> {
  const { body } = await relay.rpc(key, method, params);
  if (!body.error) throw new Error(`${method} was not refused: ${JSON.stringify(body.result)}`);
  return { code: body.error.data.code, message: body.error.message, data: body.error.data };
}

async function acceptedWithRun(summary: string): Promise<{ id: string; run: any }> {
  const id = await sendHandoff(relay, alice, 'bob@acme', summary);
  const answer = await ok(bob, 'tasks/update', { task_id: id, transition: 'accept', run: true });
  expect(answer.status).toBe('accepted');
  return { id, run: answer.run };
}

/** Bob's runner claims until it gets `runId` (older runs of other tests may come first: those it finishes). */
async function claim(runner: string, runId: string): Promise<any> {
  return waitUntil(async () => {
    const { run } = await ok(bob, 'runs/claim', { runner, wait_seconds: 1 });
    if (run && run.run_id !== runId)
      await ok(bob, 'runs/finish', {
        run_id: run.run_id,
        lease_id: run.lease_id,
        outcome: 'stopped',
        reason: 'stopped',
      });
    return run?.run_id === runId ? run : null;
  }, `claim of ${runId}`);
}

test('accept with run: true queues one run; a runner claims it, sends progress, and a success completes the handoff with its report', async () => {
  const { id, run } = await acceptedWithRun('fix the flaky test');
  expect(run).toMatchObject({ task_id: id, status: 'queued', claims: 0 });
  // Asking again answers the same run.
  expect((await ok(bob, 'runs/request', { task_id: id })).run_id).toBe(run.run_id);
  expect((await ok(bob, 'tasks/update', { task_id: id, transition: 'accept', run: true })).run.run_id).toBe(run.run_id);

  const claimed = await claim('laptop', run.run_id);
  expect(claimed).toMatchObject({
    status: 'running',
    runner: 'laptop',
    claims: 1,
    lease_ms: 1500,
    next_progress_seq: 1,
  });
  expect((await ok(bob, 'tasks/get', { task_id: id })).status).toBe('accepted');

  const lease = { run_id: run.run_id, lease_id: claimed.lease_id };
  expect(await ok(bob, 'runs/progress', { ...lease, seq: 1, text: 'reading the code\nrunning tests…' })).toEqual({
    run_id: run.run_id,
    seq: 1,
    recorded: true,
  });
  // A retry of batch 1 records it once; batch 3 before 2 names the seq expected.
  expect(
    (await ok(bob, 'runs/progress', { ...lease, seq: 1, text: 'reading the code\nrunning tests…' })).recorded,
  ).toBe(true);
  expect(await refused(bob, 'runs/progress', { ...lease, seq: 3, text: 'x' })).toMatchObject({
    code: 'invalid_params',
    message: expect.stringContaining('params.seq: must be 2'),
  });
  expect((await ok(bob, 'runs/heartbeat', lease)).stop_requested).toBe(false);

  const thread = await relay.store.readThread(id);
  expect(thread?.run).toMatchObject({
    id: run.run_id,
    status: 'running',
    runner: 'laptop',
    last_line: 'running tests…',
  });
  const view = await ok(bob, 'tasks/get', { task_id: id });
  expect(view.messages.map((m: any) => m.body)).toEqual(['reading the code\nrunning tests…']);

  const done = await ok(bob, 'runs/finish', {
    ...lease,
    outcome: 'succeeded',
    exit_code: 0,
    report: 'Fixed: the test waited on a timer.',
  });
  expect(done).toMatchObject({
    status: 'succeeded',
    result: { reason: 'exit', exit_code: 0, report: 'Fixed: the test waited on a timer.' },
  });
  // The same finish again answers the same; the handoff completed once.
  expect(
    (
      await ok(bob, 'runs/finish', {
        ...lease,
        outcome: 'succeeded',
        exit_code: 0,
        report: 'Fixed: the test waited on a timer.',
      })
    ).status,
  ).toBe('succeeded');
  const completed = await ok(alice, 'tasks/get', { task_id: id });
  expect(completed).toMatchObject({ status: 'completed', completed_summary: 'Fixed: the test waited on a timer.' });
  const after = await relay.store.readThread(id);
  expect(after?.status_history.filter((h) => h.status === 'completed')).toHaveLength(1);
  expect(after?.outbox.map((e) => e.type).filter((t) => t.startsWith('run.'))).toEqual([
    'run.queued',
    'run.started',
    'run.finished',
  ]);
  expect(await refused(bob, 'runs/heartbeat', lease)).toMatchObject({ code: 'conflict' });
});

test('a failure posts what happened as a thread message and leaves the handoff accepted; a new run can be asked for', async () => {
  const { id, run } = await acceptedWithRun('migrate the schema');
  const claimed = await claim('laptop', run.run_id);
  await ok(bob, 'runs/finish', {
    run_id: run.run_id,
    lease_id: claimed.lease_id,
    outcome: 'failed',
    exit_code: 1,
    report: 'Error: tests failed',
  });
  const view = await ok(alice, 'tasks/get', { task_id: id });
  expect(view.status).toBe('accepted');
  expect(view.messages.at(-1).body).toMatch(
    /failed \(exit code 1\)\. The handoff stays accepted\.\n\nError: tests failed/,
  );
  const again = await ok(bob, 'runs/request', { task_id: id });
  expect(again.run_id).not.toBe(run.run_id);
  expect(again.status).toBe('queued');
  await ok(bob, 'runs/stop', { run_id: again.run_id });
  expect((await ok(bob, 'runs/get', { run_id: again.run_id })).status).toBe('stopped');
});

test('a runner that stops heartbeating loses the lease; another takes the run over and only its finish counts', async () => {
  const { id, run } = await acceptedWithRun('rename the module');
  const first = await claim('runner-a', run.run_id);
  // While the lease holds, nobody else gets the run.
  expect((await ok(bob, 'runs/claim', { runner: 'runner-b', wait_seconds: 0 })).run).toBeNull();
  const second = await waitUntil(
    async () => (await ok(bob, 'runs/claim', { runner: 'runner-b', wait_seconds: 1 })).run,
    'the takeover after the lease expired',
  );
  expect(second).toMatchObject({ run_id: run.run_id, runner: 'runner-b', claims: 2 });
  expect(second.lease_id).not.toBe(first.lease_id);
  // The first runner's calls are refused from now on: it must stop its agent.
  expect(await refused(bob, 'runs/heartbeat', { run_id: run.run_id, lease_id: first.lease_id })).toMatchObject({
    code: 'conflict',
    data: { details: { lease_lost: true } },
  });
  expect(
    (
      await refused(bob, 'runs/finish', {
        run_id: run.run_id,
        lease_id: first.lease_id,
        outcome: 'succeeded',
        report: 'first',
      })
    ).code,
  ).toBe('conflict');
  await ok(bob, 'runs/finish', {
    run_id: run.run_id,
    lease_id: second.lease_id,
    outcome: 'succeeded',
    report: 'second',
  });
  expect((await ok(alice, 'tasks/get', { task_id: id })).completed_summary).toBe('second');
});

test('stop on a running run reaches the runner in its heartbeat; its stopped finish posts who stopped it', async () => {
  const { id, run } = await acceptedWithRun('long task');
  const claimed = await claim('laptop', run.run_id);
  expect((await ok(alice, 'runs/get', { run_id: run.run_id })).status).toBe('running');
  expect((await refused(alice, 'runs/stop', { run_id: run.run_id })).code).toBe('not_authorized_transition');
  expect((await ok(bob, 'runs/stop', { run_id: run.run_id })).stop_requested).toBe(true);
  expect((await relay.store.readThread(id))?.run?.stop_requested).toBe(true);
  expect((await ok(bob, 'runs/heartbeat', { run_id: run.run_id, lease_id: claimed.lease_id })).stop_requested).toBe(
    true,
  );
  await ok(bob, 'runs/finish', {
    run_id: run.run_id,
    lease_id: claimed.lease_id,
    outcome: 'stopped',
    reason: 'stopped',
    exit_code: null,
  });
  const view = await ok(bob, 'tasks/get', { task_id: id });
  expect(view.status).toBe('accepted');
  expect(view.messages.at(-1).body).toMatch(/was stopped by bob@acme/);
});

test('only the recipient asks for a run, of an accepted handoff; the policy can deny handoff.run; bad params name the field', async () => {
  const id = await sendHandoff(relay, alice, 'bob@acme', 'pending one');
  expect(await refused(bob, 'runs/request', { task_id: id })).toMatchObject({
    code: 'invalid_transition',
    message: expect.stringContaining('accept it first'),
  });
  expect((await refused(alice, 'runs/request', { task_id: id })).code).toBe('not_authorized_transition');
  expect((await refused(carol, 'runs/request', { task_id: id })).code).toBe('not_a_participant');
  expect(await refused(bob, 'tasks/update', { task_id: id, transition: 'decline', run: true })).toMatchObject({
    code: 'invalid_params',
    message: expect.stringContaining('params.run'),
  });
  expect(await refused(bob, 'runs/claim', { wait_seconds: 99 })).toMatchObject({
    code: 'invalid_params',
    message: expect.stringContaining('params.wait_seconds'),
  });
  expect(await refused(bob, 'runs/heartbeat', { run_id: 'nope', lease_id: 'x' })).toMatchObject({
    code: 'invalid_params',
    message: expect.stringContaining('params.run_id'),
  });
  expect(await refused(bob, 'runs/finish', { run_id: id, lease_id: id, outcome: 'done' })).toMatchObject({
    code: 'invalid_params',
    message: expect.stringContaining('params.outcome'),
  });
  expect((await refused(bob, 'runs/heartbeat', { run_id: id, lease_id: id })).code).toBe('not_found');

  const toCarol = await sendHandoff(relay, alice, 'carol@acme', 'for carol');
  const denied = await refused(carol, 'tasks/update', { task_id: toCarol, transition: 'accept', run: true });
  expect(denied).toMatchObject({ code: 'policy_denied', message: expect.stringContaining('carol runs by hand') });
  // The accept itself went through; only the run was refused.
  expect((await ok(carol, 'tasks/get', { task_id: toCarol })).status).toBe('accepted');
});

test('a require_approval rule holds the run: the accept goes through, the run waits, and once approved it is queued once', async () => {
  const id = await sendHandoff(relay, alice, 'dan@acme', 'needs a yes first');
  const held = await refused(dan, 'tasks/update', { task_id: id, transition: 'accept', run: true });
  expect(held).toMatchObject({
    code: 'approval_pending',
    data: { details: { approvers: ['alice@acme'], rule_id: 'dan-runs-need-alice' } },
  });
  const approvalId = held.data.details.approval_id as string;
  expect((await ok(dan, 'tasks/get', { task_id: id })).status).toBe('accepted');
  // Asking again is the same approval, and nothing is queued meanwhile.
  expect((await refused(dan, 'runs/request', { task_id: id })).data.details.approval_id).toBe(approvalId);
  expect((await ok(dan, 'runs/claim', { runner: 'dan-laptop', wait_seconds: 0 })).run).toBeNull();

  expect((await relay.rest('POST', `/approvals/${approvalId}/approve`, alice, {})).status).toBe(200);
  const run = await waitUntil(
    async () => (await ok(dan, 'runs/claim', { runner: 'dan-laptop', wait_seconds: 1 })).run,
    'the approved run to be queued',
  );
  expect(run).toMatchObject({ task_id: id });
  const approval = await waitUntil(async () => {
    const { approvals } = await ok(dan, 'approvals/get', { approval_id: approvalId });
    return approvals[0].outcome ? approvals[0] : null;
  }, 'the approval outcome');
  expect(approval).toMatchObject({
    status: 'approved',
    outcome: {
      applied: true,
      message: expect.stringContaining(`handoff.run was applied as dan@acme (run ${run.run_id}`),
    },
  });
  const doc = await relay.store.readThread(id);
  expect(doc?.outbox.filter((e) => e.type === 'run.queued')).toHaveLength(1);
  await ok(dan, 'runs/finish', { run_id: run.run_id, lease_id: run.lease_id, outcome: 'stopped', reason: 'stopped' });
});

test('progress is bounded: a batch too soon is rate_limited with a retry time, one too large is invalid_params', async () => {
  const { run } = await acceptedWithRun('chatty');
  const claimed = await claim('laptop', run.run_id);
  const lease = { run_id: run.run_id, lease_id: claimed.lease_id };
  await ok(bob, 'runs/progress', { ...lease, seq: 1, text: 'one' });
  const soon = await refused(bob, 'runs/progress', { ...lease, seq: 2, text: 'two' });
  expect(soon).toMatchObject({ code: 'rate_limited', data: { details: { retry_after_ms: expect.any(Number) } } });
  expect(await refused(bob, 'runs/progress', { ...lease, seq: 2, text: 'x'.repeat(4_001) })).toMatchObject({
    code: 'invalid_params',
    message: expect.stringContaining('params.text'),
  });
  await ok(bob, 'runs/finish', { ...lease, outcome: 'stopped', reason: 'stopped' });
});

test('a claim waits for a run queued while it waits', async () => {
  const id = await sendHandoff(relay, alice, 'bob@acme', 'soon');
  await ok(bob, 'tasks/update', { task_id: id, transition: 'accept' });
  const waiting = relay.rpc(bob, 'runs/claim', { runner: 'waiter', wait_seconds: 10 });
  const run = await ok(bob, 'runs/request', { task_id: id });
  const { body } = await waiting;
  expect(body.result.run?.run_id).toBe(run.run_id);
  await ok(bob, 'runs/finish', {
    run_id: run.run_id,
    lease_id: body.result.run.lease_id,
    outcome: 'succeeded',
    report: 'done',
  });
});
