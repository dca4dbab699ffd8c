// keepRunning's restart policy, on services that end when told to: restarts in a row, giving up, and stop().
import { keepRunning, type Restartable } from '../../scripts/local-services/keep-running';
import { waitUntil } from '../helpers/wait-until';

/** A service that exits when `die` is called, or stops when told to. */
function fakeService(): Restartable & { die(how: string): void; stopped: boolean } {
  let end!: (how: string) => void;
  const exited = new Promise<string>((resolve) => (end = resolve));
  const service = {
    exited,
    stopped: false,
    die: (how: string) => end(how),
    stop: async () => {
      service.stopped = true;
      end('stopped');
    },
  };
  return service;
}

describe('keepRunning', () => {
  test('starts the service again each time it dies, saying so, until it is stopped', async () => {
    const lines: string[] = [];
    const started = [fakeService()];
    const kept = keepRunning(started[0]!, async () => started[started.push(fakeService()) - 1]!, {
      name: 'Svc',
      where: '127.0.0.1:1',
      log: (line) => lines.push(line),
      onGiveUp: () => {
        throw new Error('should not give up');
      },
      delaysMs: [0, 0],
    });
    started[0]!.die('Svc exited on SIGKILL');
    await waitUntil(async () => started.length === 2, 'a second instance');
    // Tries count in a row: only a service that stayed up a minute starts them again from the first.
    started[1]!.die('Svc exited with code 2');
    await waitUntil(async () => started.length === 3, 'a third instance');
    expect(lines).toEqual([
      'Svc exited on SIGKILL; starting Svc again on 127.0.0.1:1 (try 1 of 2)…',
      'Svc is running again on 127.0.0.1:1',
      'Svc exited with code 2; starting Svc again on 127.0.0.1:1 (try 2 of 2)…',
      'Svc is running again on 127.0.0.1:1',
    ]);
    await kept.stop();
    expect(started[2]!.stopped).toBe(true);
    expect(started).toHaveLength(3); // stopping is not dying: nothing started after it
  });

  test('gives up, with the last reason, once its tries in a row are used up; nothing else is started', async () => {
    const reasons: string[] = [];
    let attempts = 0;
    const first = fakeService();
    keepRunning(
      first,
      async () => {
        attempts += 1;
        throw new Error(`port 1 is already in use (attempt ${attempts})`);
      },
      {
        name: 'Svc',
        where: '127.0.0.1:1',
        log: () => {},
        onGiveUp: (reason) => reasons.push(reason),
        delaysMs: [0, 5, 5],
      },
    );
    first.die('Svc exited on SIGSEGV');
    await waitUntil(async () => reasons.length === 1, 'giving up');
    expect(attempts).toBe(3);
    expect(reasons).toEqual([
      'Svc on 127.0.0.1:1 could not be started again after 3 tries (Svc did not start: port 1 is already in use (attempt 3))',
    ]);
  });

  test('stop() during the wait before a restart returns at once and starts nothing', async () => {
    let attempts = 0;
    const first = fakeService();
    const kept = keepRunning(
      first,
      async () => {
        attempts += 1;
        return fakeService();
      },
      { name: 'Svc', where: '127.0.0.1:1', log: () => {}, onGiveUp: () => {}, delaysMs: [600_000] },
    );
    first.die('Svc exited on SIGKILL');
    await new Promise((resolve) => setImmediate(resolve));
    await kept.stop(); // well within the test's timeout, not after the ten minutes' wait
    expect(attempts).toBe(0);
  });
});
