// The clock port: every service, processor and ledger reads "now" through it, so tests can move time.
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
