// The approval records' contract on the in-memory fake the fast tests of approval views and decisions use.
import { approvalRecordsContract } from '../contracts/approval-records-contract';
import { InMemoryApprovalRecords } from '../fakes/in-memory-approval-records';
import { InMemoryThreads } from '../fakes/in-memory-threads';

approvalRecordsContract('in memory', async () => {
  const threads = new InMemoryThreads();
  return { records: new InMemoryApprovalRecords(threads), insert: (doc) => threads.insert(doc) };
});
