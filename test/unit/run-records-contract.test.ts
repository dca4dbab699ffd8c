// The runs port's contract on the in-memory fake the fast tests of handoff runs use.
import { runRecordsContract } from '../contracts/run-records-contract';
import { InMemoryRuns } from '../fakes/in-memory-runs';

runRecordsContract('in memory', () => new InMemoryRuns());
