// An event publisher that enqueues nothing, for a second relay service a test drives only for its store commands.
import type { EventPublisher } from '../../relay-core/service/event-publisher';

export const noPublisher: EventPublisher = {
  queues: [],
  publish: async () => {},
  jobStates: async (_eventId, queues) => queues.map(() => 'finished'),
};
