// The history logs' contract on the in-memory fakes the fast test of the audit trail uses.
import { historyLogsContract } from '../contracts/history-logs-contract';
import { InMemoryAccountLog, InMemoryEventLog } from '../fakes/in-memory-history';

historyLogsContract('in memory', () => ({ eventLog: new InMemoryEventLog(), accountLog: new InMemoryAccountLog() }));
