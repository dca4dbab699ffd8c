// The history logs' contract on EventLog, AccountLog and the server the tests use (the fast tier runs it on the fakes).
import { historyLogsContract } from '../contracts/history-logs-contract';
import { contractStore } from '../helpers/contract-store';

const store = contractStore('history_logs_contract');

historyLogsContract('EventLog and AccountLog', () => ({ eventLog: store().eventLog, accountLog: store().accountLog }));
