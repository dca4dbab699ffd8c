// Group commit for a collection's inserts: the inserts issued while earlier ones are on their way to the server
// go out together in one unordered insertMany, so concurrent requests share a round trip and a write transaction.
import {
  MongoBulkWriteError,
  MongoServerError,
  type Collection,
  type Document,
  type OptionalUnlessRequiredId,
} from 'mongodb';

interface Waiting<T> {
  doc: OptionalUnlessRequiredId<T>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** No more documents than this go in one insertMany (a 16 MB command is far above; this bounds one batch's latency). */
const MAX_BATCH = 200;

/**
 * `insert` behaves as `insertOne` does for its caller (a duplicate `_id` rejects with the server's 11000 write
 * error, and nothing else in the batch is affected), but at most `maxInFlight` insert commands are in flight per
 * collection; the documents that arrive meanwhile form the next batch. Inserts made in the same tick share a
 * command even when nothing else is running.
 */
export class InsertBatcher<T extends Document> {
  private waiting: Waiting<T>[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly collection: Collection<T>,
    private readonly maxInFlight: number,
  ) {}

  insert(doc: OptionalUnlessRequiredId<T>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ doc, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.waiting.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      while (this.inFlight < this.maxInFlight && this.waiting.length > 0)
        void this.send(this.waiting.splice(0, MAX_BATCH));
    });
  }

  private async send(batch: Waiting<T>[]): Promise<void> {
    this.inFlight += 1;
    try {
      if (batch.length === 1) {
        await this.collection.insertOne(batch[0]!.doc);
        batch[0]!.resolve();
        return;
      }
      await this.collection.insertMany(
        batch.map((w) => w.doc),
        { ordered: false },
      );
      for (const w of batch) w.resolve();
    } catch (error) {
      settleFailedBatch(batch, error);
    } finally {
      this.inFlight -= 1;
      this.schedule();
    }
  }
}

/** Each document whose insert failed gets its own write error; the rest were inserted. Anything else fails them all. */
function settleFailedBatch<T>(batch: Waiting<T>[], error: unknown): void {
  if (!(error instanceof MongoBulkWriteError) || batch.length === 1) {
    for (const w of batch) w.reject(error);
    return;
  }
  const writeErrors = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors];
  const failed = new Map(writeErrors.map((e) => [e.index, e]));
  if (failed.size === 0) {
    for (const w of batch) w.reject(error);
    return;
  }
  batch.forEach((w, i) => {
    const writeError = failed.get(i);
    // As insertOne would have thrown it, so callers keep telling a duplicate `_id` by `code === 11000`.
    if (writeError)
      w.reject(
        new MongoServerError({
          errmsg: writeError.errmsg ?? 'write error',
          code: writeError.code,
          errInfo: writeError.errInfo,
        }),
      );
    else w.resolve();
  });
}
