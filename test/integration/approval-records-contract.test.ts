// The approval records' contract on ApprovalRecords and the server the tests use (the fast tier runs it on the fake).
import pino from 'pino';
import { ApprovalRecords } from '../../relay-core/service/approval-records';
import { approvalRecordsContract } from '../contracts/approval-records-contract';
import { contractStore } from '../helpers/contract-store';

const store = contractStore('approval_records_contract');

approvalRecordsContract('ApprovalRecords', async () => {
  await store().approvals.deleteMany({});
  return {
    records: new ApprovalRecords({ store: store(), log: pino({ level: 'silent' }) }),
    insert: async (doc) => void (await store().threads.insertOne(doc)),
  };
});
