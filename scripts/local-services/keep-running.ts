// Local services: the FerretDB and redis-server `start` runs for itself are started again when they die.
import { setTimeout as sleep } from 'node:timers/promises';
import { errorMessage, type Log } from './child-process';

/** A running local service: how it ended, once it has, and how to stop it. */
export interface Restartable {
  exited: Promise<string>;
  stop(): Promise<void>;
}

/** Waits before each restart in a row; once they are used up, the service is given up. */
export const RESTART_DELAYS_MS: readonly number[] = [0, 500, 1_000, 2_000, 5_000, 10_000];

/** A service that stays up this long has recovered: a later exit starts the delays again from the first. */
const RECOVERED_AFTER_MS = 60_000;

export interface KeepRunningOptions {
  /** How the service is named in the lines logged ("FerretDB"). */
  name: string;
  /** Where it runs ("127.0.0.1:27017"), for the lines logged. */
  where: string;
  log: Log;
  /** Called once when the restarts in a row are used up; the service is then down. */
  onGiveUp(reason: string): void;
  delaysMs?: readonly number[];
}

export interface KeptRunning {
  /** Stops the service for good: no restart after this. */
  stop(): Promise<void>;
}

/**
 * Starts the service again, on the same port and data, whenever it exits while nobody stopped it (a crash, an OOM
 * kill, someone's `kill`). Its clients reconnect to the same address by themselves: the MongoDB driver and ioredis
 * retry, BullMQ's workers resume, so the relay serves again within a second or so instead of answering every
 * request with an error until someone restarts it. A service that keeps failing to start (its port taken, its
 * data unreadable) is given up after `delaysMs` tries in a row, and `onGiveUp` decides what then.
 */
export function keepRunning(
  first: Restartable,
  startAgain: () => Promise<Restartable>,
  opts: KeepRunningOptions,
): KeptRunning {
  const delays = opts.delaysMs ?? RESTART_DELAYS_MS;
  let current: Restartable | null = first;
  let stopped = false;
  let startedAt = Date.now();
  const stopping = new AbortController();

  const watch = async (): Promise<void> => {
    let tries = 0;
    while (current && !stopped) {
      const how = await current.exited;
      if (stopped) return;
      current = null;
      if (Date.now() - startedAt >= RECOVERED_AFTER_MS) tries = 0;
      let why = how;
      while (!current && !stopped) {
        if (tries >= delays.length) {
          opts.onGiveUp(`${opts.name} on ${opts.where} could not be started again after ${tries} tries (${why})`);
          return;
        }
        opts.log(`${why}; starting ${opts.name} again on ${opts.where} (try ${tries + 1} of ${delays.length})…`);
        await sleep(delays[tries]!, undefined, { signal: stopping.signal }).catch(() => {});
        tries += 1;
        if (stopped) return;
        try {
          current = await startAgain();
          startedAt = Date.now();
          opts.log(`${opts.name} is running again on ${opts.where}`);
        } catch (error) {
          why = `${opts.name} did not start: ${errorMessage(error)}`;
        }
      }
      // Stopped while a start was under way: that instance goes too.
      if (stopped && current) await current.stop();
    }
  };
  const watching = watch();

  return {
    async stop() {
      stopped = true;
      stopping.abort();
      await current?.stop();
      await watching;
    },
  };
}
