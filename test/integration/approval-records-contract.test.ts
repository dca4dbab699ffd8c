// The approval records' contract on ApprovalRecords and the server the tests use (the fast tier runs it on the fake).
import pino from 'pino';
import { ApprovalRecords } from '../../relay-core/service/approval-records';
import { MongoStore } from '../../relay-core/store/mongo-store';
import { approvalRecordsContract } from '../contracts/approval-records-contract';
import { testMongoUrl, uniqueName } from '../helpers/test-env';

let store: MongoStore;

beforeAll(async () => {
  store = await MongoStore.connect(testMongoUrl(), uniqueName('approval_records_contract'));
  await store.ensureIndexes();
});

afterAll(async () => {
  await store?.db.dropDatabase();
  await store?.close();
});

approvalRecordsContract('ApprovalRecords', async () => {
  await store.approvals.deleteMany({});
  return {
    records: new ApprovalRecords({ store, log: pino({ level: 'silent' }) }),
    insert: async (doc) => void (await store.threads.insertOne(doc)),
  };
});
