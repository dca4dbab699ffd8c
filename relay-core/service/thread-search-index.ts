// Writes the words of each thread event into the text search (store/thread-terms.ts), in the request that wrote the
// event, beside its event-log entries (service/event-feed.ts RecordingEventPublisher); the outbox sweep writes them
// again for a process that died first. Writing again adds nothing (entries keyed by thread, handle and word).
import { messageTerms, searchTerms } from '../domain/search-terms';
import type { EventType } from '../domain/schemas';
import type { MongoStore } from '../store/mongo-store';
import { ThreadTerms } from '../store/thread-terms';

export interface IndexedEvent {
  type: EventType;
  thread_id: string;
  message_id?: string;
  /** The thread's version once the event was written: the process that wrote it moments ago reads nothing. */
  version?: number;
}

export interface ThreadSearchIndexer {
  /** The words an event adds: a new thread (or a new recipient: the whole thread), a message, a completion. */
  index(event: IndexedEvent): Promise<void>;
}

export function threadSearchIndexer(store: MongoStore): ThreadSearchIndexer {
  // The thread as this process wrote it moments ago when it did (MongoStore.readThreadFrom), else one read.
  const thread = (event: IndexedEvent) => store.readThreadFrom(event.thread_id, event.version);
  return {
    async index(event) {
      switch (event.type) {
        case 'thread.created':
        case 'thread.claimed':
        case 'thread.reassigned': {
          const doc = await thread(event);
          if (doc) await store.terms.addThread(doc);
          return;
        }
        case 'thread.completed': {
          const doc = await thread(event);
          if (doc?.completed_summary)
            await store.terms.add(doc, ThreadTerms.participants(doc), searchTerms(doc.completed_summary));
          return;
        }
        case 'thread.message': {
          if (!event.message_id) return;
          const [doc, message] = await Promise.all([
            thread(event),
            store.messages.findOne({ thread_id: event.thread_id, id: event.message_id }, { projection: { body: 1 } }),
          ]);
          if (doc && message) await store.terms.add(doc, ThreadTerms.participants(doc), messageTerms(message));
          return;
        }
        default:
          return;
      }
    },
  };
}
