// A `slack` job that must run again later without spending an attempt: a busy claim, a DM not posted yet.

export class WaitAndRetry extends Error {
  constructor(
    readonly ms: number,
    reason: string,
  ) {
    super(reason);
    this.name = 'WaitAndRetry';
  }
}
