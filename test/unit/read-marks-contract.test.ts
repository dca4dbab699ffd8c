// The read markers port's contract on the in-memory fake the fast tests of thread reads and lists use.
import { readMarksContract } from '../contracts/read-marks-contract';
import { InMemoryReadMarks } from '../fakes/in-memory-read-marks';

readMarksContract('in memory', () => new InMemoryReadMarks());
