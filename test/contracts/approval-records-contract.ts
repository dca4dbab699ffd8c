// The approval records' contract (relay-core/service/approval-records.ts): what approval views, decisions and the
// sweep rely on of an approval read from its thread and of the listing. Run against the in-memory fake (test/unit/)
// and ApprovalRecords on the real server (test/integration/).
import { approvalId, type ApprovalRecord } from '../../relay-core/domain/approval';
import type { ThreadDoc } from '../../relay-core/domain/documents';
import type { ApprovalRecords } from '../../relay-core/service/approval-records';
import { pendingApproval } from '../fakes/use-case-ports';
import { threadDocAt } from '../helpers/thread-docs';

export interface ApprovalRecordsUnderTest {
  records: Pick<ApprovalRecords, 'get' | 'open' | 'listed' | 'write'>;
  /** Stores a thread as the relay does. */
  insert(doc: ThreadDoc): Promise<void>;
}

const at = (minutes: number) => new Date(Date.UTC(2026, 2, 2, 10, minutes));

/** `subject` answers records with an empty listing. */
export function approvalRecordsContract(name: string, subject: () => Promise<ApprovalRecordsUnderTest>): void {
  describe(`approval records contract: ${name}`, () => {
    /** A thread holding one approval, stored, and its listing entry written. */
    async function held(under: ApprovalRecordsUnderTest, minutes: number, over: Partial<ApprovalRecord> = {}) {
      const doc = threadDocAt('a@acme', 'b@acme', 'pending', at(minutes));
      const record = pendingApproval(doc, { id: approvalId(doc._id, 1), created_at: at(minutes), ...over });
      await under.insert({ ...doc, approvals: [record] });
      await under.records.write(doc._id, record);
      return { doc, record };
    }

    test('an approval reads back with its thread; an id not issued, or of no stored thread, is not_found', async () => {
      const under = await subject();
      const { doc, record } = await held(under, 0);
      const found = await under.records.get(record.id);
      expect(found.thread._id).toBe(doc._id);
      expect(found.record).toEqual(record);
      await expect(under.records.get('not-an-approval')).rejects.toMatchObject({ code: 'not_found' });
      await expect(under.records.get(approvalId(doc._id, 2))).rejects.toMatchObject({ code: 'not_found' });
      await expect(under.records.get(approvalId('00000000-0000-4000-8000-000000000000', 1))).rejects.toMatchObject({
        code: 'not_found',
      });
    });

    test('open lists the pending approvals oldest first, up to the limit; a decided one leaves it', async () => {
      const under = await subject();
      const newer = await held(under, 2);
      const older = await held(under, 1);
      const decided = await held(under, 0);
      expect((await under.records.open(10)).map((e) => e._id)).toEqual([
        decided.record.id,
        older.record.id,
        newer.record.id,
      ]);
      await under.records.write(decided.doc._id, { ...decided.record, status: 'rejected' });
      expect((await under.records.open(1)).map((e) => e._id)).toEqual([older.record.id]);
    });

    test('an approved append stays open until its outcome is recorded', async () => {
      const under = await subject();
      const { doc, record } = await held(under, 0, { action: 'message.append', status: 'approved' });
      expect((await under.records.open(10)).map((e) => e._id)).toEqual([record.id]);
      await under.records.write(doc._id, { ...record, outcome: { applied: true, message: 'appended' } });
      expect(await under.records.open(10)).toEqual([]);
    });

    test('listed answers the entries newest first, only those of a status when asked', async () => {
      const under = await subject();
      const first = await held(under, 0);
      const second = await held(under, 1, { status: 'rejected' });
      const third = await held(under, 2);
      expect((await under.records.listed(undefined, 10)).map((e) => e._id)).toEqual([
        third.record.id,
        second.record.id,
        first.record.id,
      ]);
      expect(await under.records.listed('rejected', 10)).toEqual([
        expect.objectContaining({
          _id: second.record.id,
          thread_id: second.doc._id,
          status: 'rejected',
          action: 'handoff.create',
          actor: 'a@acme',
          approvers: ['lead@acme'],
        }),
      ]);
      expect((await under.records.listed(undefined, 2)).map((e) => e._id)).toEqual([third.record.id, second.record.id]);
    });
  });
}
