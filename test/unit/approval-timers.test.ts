// An approval's reminder and timeout (relay-core/service/approval-timers.ts) on the in-memory threads and approval
// records, with the relay's clock in the test's hand: arming puts one job per step on the queue (the same ids when
// armed again); firing does what is due by the clock, whatever the job's delay said — a reminder once, a timeout
// that rejects a held create or denies a held call, an escalation once to escalate_to with a fresh deadline, and a
// timeout instead when nobody to escalate to resolves — and nothing when nothing is due. Over a real relay, Slack
// and BullMQ: test/integration/approvals.test.ts.
import pino from 'pino';
import { approvalId, timerJobId, type ApprovalRecord } from '../../relay-core/domain/approval';
import type { ThreadDoc } from '../../relay-core/domain/documents';
import { RelayError } from '../../relay-core/domain/errors';
import { ApprovalTimers } from '../../relay-core/service/approval-timers';
import { HandoffTokens } from '../../relay-core/service/handoff-tokens';
import { InMemoryApprovalRecords } from '../fakes/in-memory-approval-records';
import { InMemoryThreads } from '../fakes/in-memory-threads';
import { agent, NOW, pendingApproval, recordingOutbox, storedPending, teammatesOf } from '../fakes/use-case-ports';

const HOUR = 3_600_000;
const sam = agent('sam@acme');
const rita = agent('rita@acme');
const lead = { ...agent('lead@acme'), slack_user_id: 'U0LEAD' };
const cto = { ...agent('cto@acme'), slack_user_id: 'U0CTO' };

interface QueuedJob {
  name: string;
  data: Record<string, unknown>;
  delayMs: number | undefined;
}

function setup(opts: { queueDown?: boolean } = {}) {
  let now = NOW.getTime();
  const clock = { now: () => new Date(now) };
  const threads = new InMemoryThreads();
  const records = new InMemoryApprovalRecords(threads);
  const outbox = recordingOutbox();
  // BullMQ keeps one job per id: adding an id it holds is a no-op.
  const queued = new Map<string, QueuedJob>();
  const warnings: string[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line).msg) });
  const timers = new ApprovalTimers({
    store: threads,
    outbox,
    teammates: teammatesOf([sam, rita, lead, cto]),
    records,
    approvers: {
      resolve: async (names, _parties, ruleId, step) =>
        names.map((name) => {
          if (name !== cto.handle) throw new RelayError('policy_denied', `rule ${ruleId}: ${name} is not a teammate`);
          return { label: name, handle: name, slack_user_id: cto.slack_user_id, source: name, step };
        }),
    },
    queue: {
      add: async (name, data, jobId, delayMs) => {
        if (opts.queueDown) throw new Error('connect ECONNREFUSED 127.0.0.1:6379');
        if (!queued.has(jobId)) queued.set(jobId, { name, data, delayMs });
      },
    },
    clock,
    log,
  });
  const tokens = new HandoffTokens('fast-tier-secret');
  /**
   * A create from Sam to Rita held for lead@acme's approval, due in an hour (a reminder after 20 minutes when asked);
   * with another `action`, a call held on the delivered handoff.
   */
  const heldCreate = async (over: Partial<ApprovalRecord> = {}) => {
    const create = (over.action ?? 'handoff.create') === 'handoff.create';
    const doc = await storedPending(threads, tokens, sam, rita);
    const record = pendingApproval(doc, {
      id: approvalId(doc._id, 1),
      timeout_ms: HOUR,
      deadline: new Date(NOW.getTime() + HOUR),
      ...over,
    });
    await threads.writeThread(doc._id, (d) => ({
      ...d,
      ...(create ? { status: 'awaiting_approval' as const, hidden_from_recipient: true } : {}),
      approvals: [record],
    }));
    await records.write(doc._id, record);
    return { doc, record };
  };
  const thread = async (id: string) => (await threads.readThread(id)) as ThreadDoc;
  const stored = async (id: string) => (await records.get(id)).record;
  const events = () => outbox.published.map((e) => e.type);
  return {
    timers,
    queued,
    warnings,
    heldCreate,
    thread,
    stored,
    events,
    records,
    advance: (ms: number) => void (now += ms),
  };
}

describe('arming', () => {
  test("puts the timeout and the reminder on the queue, each due at its time by the relay's clock; twice is once", async () => {
    const { timers, queued, heldCreate, advance } = setup();
    const { record } = await heldCreate({
      remind_after_ms: 20 * 60_000,
      remind_at: new Date(NOW.getTime() + 20 * 60_000),
    });
    advance(5 * 60_000);
    await timers.arm(record);
    await timers.arm(record);
    expect([...queued.keys()].sort()).toEqual([timerJobId(record, 'remind'), timerJobId(record, 'timeout')].sort());
    expect(queued.get(timerJobId(record, 'timeout'))).toEqual({
      name: 'approval-timer',
      data: { approval_id: record.id },
      delayMs: HOUR - 5 * 60_000,
    });
    expect(queued.get(timerJobId(record, 'remind'))?.delayMs).toBe(15 * 60_000);
  });

  test('a decided approval arms nothing; a queue that is down is logged and left to the sweep', async () => {
    const { timers, queued, heldCreate } = setup();
    const { record } = await heldCreate();
    await timers.arm({ ...record, status: 'approved' });
    expect(queued.size).toBe(0);

    const down = setup({ queueDown: true });
    const held = await down.heldCreate();
    await expect(down.timers.arm(held.record)).resolves.toBeUndefined();
    expect(down.warnings).toEqual(['approval timer not armed yet; the sweep arms it']);
  });
});

describe('firing', () => {
  test('before anything is due (a job that ran early): nothing changes', async () => {
    const { timers, heldCreate, thread, events, advance } = setup();
    const { doc, record } = await heldCreate({ remind_at: new Date(NOW.getTime() + 20 * 60_000) });
    const before = await thread(doc._id);
    advance(19 * 60_000);
    expect(await timers.fire(record.id)).toBe('not_due');
    expect(await thread(doc._id)).toEqual(before);
    expect(events()).toEqual([]);
    expect(await timers.fire('not-an-approval-id')).toBe('not_due');
  });

  test('a reminder asks the approvers again once, and arms only the timeout from there', async () => {
    const { timers, queued, heldCreate, stored, events, advance } = setup();
    const { record } = await heldCreate({
      remind_after_ms: 20 * 60_000,
      remind_at: new Date(NOW.getTime() + 20 * 60_000),
    });
    advance(20 * 60_000);
    expect(await timers.fire(record.id)).toBe('reminded');
    expect(await timers.fire(record.id)).toBe('not_due');
    const after = await stored(record.id);
    expect(after).toMatchObject({ status: 'pending', remind_at: null, deadline: record.deadline });
    expect(after.history).toEqual([{ at: new Date(NOW.getTime() + 20 * 60_000), what: 'reminded', note: 'step 0' }]);
    expect(events()).toEqual(['approval.requested']);
    expect([...queued.keys()]).toEqual([timerJobId(record, 'timeout')]);
  });

  test('the timeout of a held create rejects the handoff (its recipient never sees it) and says why', async () => {
    const { timers, heldCreate, thread, stored, events, records, advance } = setup();
    const { doc, record } = await heldCreate();
    advance(HOUR);
    expect(await timers.fire(record.id)).toBe('timed_out');
    expect(await timers.fire(record.id)).toBe('not_due');
    expect(await stored(record.id)).toMatchObject({
      status: 'timed_out',
      decided_by: 'policy',
      reason: 'no approval within 1h (rule r1, on_timeout: deny)',
    });
    expect(await thread(doc._id)).toMatchObject({ status: 'rejected', hidden_from_recipient: true });
    expect(events()).toEqual(['thread.rejected']);
    expect(await records.open(10)).toEqual([]);
  });

  test('the timeout of a held call on a delivered handoff denies the call and leaves the handoff as it was', async () => {
    const { timers, heldCreate, thread, stored, events, advance } = setup();
    const { doc, record } = await heldCreate({ action: 'handoff.accept', actor: rita.handle });
    advance(HOUR + 1);
    expect(await timers.fire(record.id)).toBe('timed_out');
    expect(await stored(record.id)).toMatchObject({ status: 'timed_out', decided_by: 'policy' });
    expect((await thread(doc._id)).status).toBe('pending');
    expect(events()).toEqual(['approval.decided']);
  });

  test('an escalating timeout asks escalate_to once with a fresh deadline; the next timeout denies', async () => {
    const { timers, queued, heldCreate, stored, events, advance } = setup();
    const { record } = await heldCreate({ on_timeout: 'escalate', escalate_to: [cto.handle] });
    advance(HOUR);
    expect(await timers.fire(record.id)).toBe('escalated');
    const escalated = await stored(record.id);
    expect(escalated).toMatchObject({ status: 'pending', step: 1, deadline: new Date(NOW.getTime() + 2 * HOUR) });
    expect(escalated.approvers.map((a) => a.label)).toEqual(['lead@acme', 'cto@acme']);
    expect(escalated.history).toEqual([
      { at: new Date(NOW.getTime() + HOUR), what: 'escalated', note: 'no decision within 1h; asked cto@acme' },
    ]);
    expect(queued.has(timerJobId(escalated, 'timeout'))).toBe(true);
    expect(await timers.fire(record.id)).toBe('not_due');

    advance(HOUR);
    expect(await timers.fire(record.id)).toBe('timed_out');
    expect((await stored(record.id)).reason).toBe('no approval within 1h after escalation (rule r1, on_timeout: deny)');
    expect(events()).toEqual(['approval.requested', 'thread.rejected']);
  });

  test('an escalation to nobody who resolves times out instead of moving the deadline', async () => {
    const { timers, heldCreate, stored, events, warnings, advance } = setup();
    const { record } = await heldCreate({ on_timeout: 'escalate', escalate_to: ['ghost@acme'] });
    advance(HOUR);
    expect(await timers.fire(record.id)).toBe('timed_out');
    expect(await stored(record.id)).toMatchObject({
      status: 'timed_out',
      step: 0,
      reason: 'no approval within 1h and nobody to escalate to (rule r1, on_timeout: deny)',
    });
    expect(events()).toEqual(['thread.rejected']);
    expect(warnings).toEqual(['escalation approvers do not resolve; the approval times out instead']);
  });
});
