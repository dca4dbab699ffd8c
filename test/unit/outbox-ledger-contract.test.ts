// The outbox ledger's contract on the in-memory fake the outbox sweep's fast tests use (the real one: test/integration/).
import { outboxLedgerContract } from '../contracts/outbox-ledger-contract';
import { InMemoryOutboxLedger } from '../fakes/in-memory-outbox-ledger';

outboxLedgerContract('InMemoryOutboxLedger', () => {
  const ledger = new InMemoryOutboxLedger();
  return { ledger, insert: (doc) => ledger.insert(doc), read: (id) => ledger.read(id) };
});
