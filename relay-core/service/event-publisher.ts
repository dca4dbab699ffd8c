// Port: hands a thread's outbox events to the delivery queues (the relay never delivers inline).
import type { OutboxEvent, ThreadDoc } from '../domain/documents';

/** The thread the events are of: its participants travel with each job, so a processor that only routes need not read it. */
export interface EventThread {
  _id: string;
  from: string;
  to: string;
  /** A handoff to a role, skill or owner: who may claim it (several while it is unclaimed). */
  candidates?: string[];
  /** The thread's write version as published (the event's or a later one). */
  version?: number;
  /** The write of this version armed the thread's next timer step itself (ThreadDoc.timer_version): no arm job. */
  timer_version?: number;
  /** The task has had an A2A push notification config (ThreadDoc.push_configs). */
  push_configs?: true;
  /** A create held for approval: its recipient hears of nothing yet (the sender stands in). */
  hidden_from_recipient?: boolean;
  /** The thread's approvals: the approvers still to vote hear of an approval's request and votes. */
  approvals?: ThreadDoc['approvals'];
}

/** Where an event's job on a queue is: finished (done, or failed for good), still queued, or gone (Redis lost it). */
export type EventJobState = 'finished' | 'queued' | 'missing';

export interface EventPublisher {
  /** The queues every event gets a job on (its outbox entry waits for each). */
  readonly queues: readonly string[];
  /** Each event's jobs, except `skip`'s (`jobKey(queue, event id)`). */
  publish(thread: EventThread, events: readonly OutboxEvent[], skip?: ReadonlySet<string>): Promise<void>;
  /** Where the jobs of `eventId` on `queues` are. */
  jobStates(eventId: string, queues: readonly string[]): Promise<EventJobState[]>;
}
