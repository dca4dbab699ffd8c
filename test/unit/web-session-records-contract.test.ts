// The web sign-in links and sessions port's contract on the in-memory fake the fast test of web sessions uses.
import { webSessionRecordsContract } from '../contracts/web-session-records-contract';
import { InMemoryWebSessions } from '../fakes/in-memory-web-sessions';

webSessionRecordsContract('in memory', () => new InMemoryWebSessions());
