// A relay clock a test moves forward (startTestRelay({ clock })): tokens and secrets expire without touching the database.
import type { Clock } from '../../relay-core/domain/clock';

export class TestClock implements Clock {
  private offsetMs = 0;

  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }

  /** Moves the relay's "now" forward by `ms`; it keeps running with the wall clock from there. */
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}
