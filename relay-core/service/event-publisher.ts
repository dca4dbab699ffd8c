// Port: hands a thread's outbox events to the delivery queues (the relay never delivers inline).
import type { OutboxEvent } from '../domain/documents';

export interface EventPublisher {
  publish(threadId: string, events: readonly OutboxEvent[]): Promise<void>;
}
