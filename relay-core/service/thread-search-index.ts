// Writes the words of each thread event into the text search (store/thread-text.ts), in the request that wrote the
// event, beside its event-log entries (service/event-feed.ts RecordingEventPublisher); the outbox sweep writes them
// again for a process that died first. Writing again adds nothing.
import type { EventType } from '../domain/schemas';
import type { MongoStore } from '../store/mongo-store';
import type { ThreadText } from '../store/thread-text';

export interface IndexedEvent {
  type: EventType;
  thread_id: string;
  message_id?: string;
  /** The thread's version once the event was written: the process that wrote it moments ago reads nothing. */
  version?: number;
}

export interface ThreadSearchIndexer {
  /** The words an event adds: a new thread, a message, a completion; a new recipient is the thread's recipient now. */
  index(event: IndexedEvent): Promise<void>;
}

/** What the indexer reads (threads as written, message bodies) and writes (the text search). */
export type SearchIndexStore = Pick<MongoStore, 'readThreadFrom' | 'messageBody' | 'messageBodies'> & {
  text: Pick<ThreadText, 'addThread' | 'addText' | 'readdress'>;
};

export function threadSearchIndexer(store: SearchIndexStore): ThreadSearchIndexer {
  // The thread as this process wrote it moments ago when it did (MongoStore.readThreadFrom), else one read.
  const thread = (event: IndexedEvent) => store.readThreadFrom(event.thread_id, event.version);
  return {
    async index(event) {
      switch (event.type) {
        case 'thread.created': {
          const doc = await thread(event);
          if (doc) await store.text.addThread(doc);
          return;
        }
        case 'thread.claimed':
        case 'thread.reassigned': {
          const doc = await thread(event);
          if (!doc || (await store.text.readdress(doc))) return;
          // Words never written (a process that died before its create's): the whole thread, messages too.
          const bodies = await store.messageBodies([doc._id]);
          await store.text.addThread(doc, bodies.get(doc._id));
          return;
        }
        case 'thread.completed': {
          const doc = await thread(event);
          if (doc?.completed_summary) await store.text.addText(doc._id, doc.completed_summary);
          return;
        }
        case 'thread.message': {
          if (!event.message_id) return;
          const body = await store.messageBody(event.thread_id, event.message_id);
          if (body) await store.text.addText(event.thread_id, body);
          return;
        }
        default:
          return;
      }
    },
  };
}
