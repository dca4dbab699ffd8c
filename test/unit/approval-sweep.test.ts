// The approvals' sweep (relay-core/service/approval-sweep.ts) over recording records, timers and decisions: over the
// open approvals only, a lost timer is armed again, an overdue one fired, an approved append a crash left unapplied
// finished, a decided one taken off the open list, and a gone one dropped from it. On the real store:
// test/integration/ (policy approvals).
import type { ApprovalRecord } from '../../relay-core/domain/approval';
import { RelayError } from '../../relay-core/domain/errors';
import { ApprovalSweep } from '../../relay-core/service/approval-sweep';
import { NOW, pendingApproval } from '../fakes/use-case-ports';
import { threadDocAt } from '../helpers/thread-docs';

const thread = threadDocAt('a@acme', 'b@acme', 'pending', NOW);
const HOUR = 3_600_000;

/** The sweep at NOW over `records` (by id; a missing id is an approval that is gone), recording what it asks. */
function sweepOver(records: Record<string, ApprovalRecord | null>, fired: 'reminded' | 'not_due' = 'reminded') {
  const steps: unknown[][] = [];
  const sweep = new ApprovalSweep({
    store: {
      approvals: {
        updateOne: (async (...args: unknown[]) => {
          steps.push(['unlist', ...args]);
          return {};
        }) as never,
      },
    },
    records: {
      open: async () => Object.keys(records).map((_id) => ({ _id }) as never),
      get: async (id) => {
        const record = records[id];
        if (!record) throw new RelayError('not_found', `No approval ${id}`);
        return { thread, record };
      },
      index: async (...args) => void steps.push(['index', ...args]),
    },
    timers: {
      arm: async (record) => void steps.push(['arm', record.id]),
      fire: async (id) => {
        steps.push(['fire', id]);
        return fired;
      },
    },
    decisions: {
      finishHeld: async (...args) => {
        steps.push(['finish', ...args]);
        return {} as never;
      },
    },
    clock: { now: () => NOW },
  });
  return { sweep, steps };
}

const approval = (n: number, over: Partial<ApprovalRecord>) =>
  pendingApproval(thread, { id: `${thread._id}_a${n}`, deadline: new Date(NOW.getTime() + HOUR), ...over });

test('a pending approval not due is armed again; an overdue one is fired and counted', async () => {
  const waiting = approval(0, {});
  const overdue = approval(1, { deadline: new Date(NOW.getTime() - 1) });
  const { sweep, steps } = sweepOver({ [waiting.id]: waiting, [overdue.id]: overdue });
  expect(await sweep.sweep()).toBe(1);
  expect(steps).toEqual([
    ['arm', waiting.id],
    ['fire', overdue.id],
  ]);
});

test('an approved append with no outcome is finished; a decided approval is taken off the open list', async () => {
  const unapplied = approval(0, { action: 'message.append', status: 'approved' });
  const decided = approval(1, { status: 'rejected' });
  const { sweep, steps } = sweepOver({ [unapplied.id]: unapplied, [decided.id]: decided });
  expect(await sweep.sweep()).toBe(0);
  expect(steps).toEqual([
    ['finish', thread._id, unapplied.id],
    ['index', thread._id, decided],
  ]);
});

test('an approval that is gone is dropped from the open list; one fired by another process is not counted', async () => {
  const overdue = approval(1, { remind_at: new Date(NOW.getTime() - 1) });
  const { sweep, steps } = sweepOver({ gone: null, [overdue.id]: overdue }, 'not_due');
  expect(await sweep.sweep()).toBe(0);
  expect(steps).toEqual([
    ['unlist', { _id: 'gone' }, { $unset: { open: '' } }],
    ['fire', overdue.id],
  ]);
});
