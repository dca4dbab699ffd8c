// The due steps' contract on the in-memory fake the fast tests of the timers use.
import { timerDueContract } from '../contracts/timer-due-contract';
import { InMemoryThreads } from '../fakes/in-memory-threads';
import { InMemoryTimerDue } from '../fakes/in-memory-timer-due';

timerDueContract('in memory', () => {
  const threads = new InMemoryThreads();
  return { due: new InMemoryTimerDue(threads), insert: (doc) => threads.insert(doc) };
});
