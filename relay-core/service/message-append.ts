// Appending a message to a thread: claim the next sequence_no, then count it on the thread with its outbox event.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock';
import type { AgentDoc, MessageDoc, OutboxEvent, ThreadDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';
import { lastLine } from '../domain/run';
import { assertParticipant } from '../domain/thread-lifecycle';
import { TERMINAL_STATUSES, type Artifact, type Surface } from '../domain/schemas';
import type { MongoStore } from '../store/mongo-store';
import { backoffMs, isDuplicateKey } from '../store/thread-writes';
import type { LedgerTurn } from './idempotency';
import type { Outbox } from './outbox';
import type { Teammates } from './teammates';
import { KeyedQueue } from '../store/keyed-queue';

/** A claimed number still uncounted after this long is taken to be orphaned by a writer that died. */
const ORPHAN_AFTER_MS = 1_000;

export interface AppendRequest {
  thread_id: string;
  body: string;
  payload: Record<string, unknown>;
  artifacts: Artifact[];
}

export interface AppendResult {
  thread_id: string;
  message_id: string;
  sequence_no: number;
  created_at: string;
}

export interface MessageAppenderDeps {
  store: MongoStore;
  teammates: Teammates;
  outbox: Outbox;
  clock: Clock;
  log: Logger;
  /** The thread as the caller may see it (thread_not_found / not_a_participant otherwise). */
  readThread(caller: AgentDoc, threadId: string): Promise<ThreadDoc>;
}

/**
 * A message's sequence_no is claimed by inserting `${thread_id}:${n}` (unique), then the thread's counter
 * and outbox event follow in one versioned write. If the thread ended in between, the message is taken
 * back; if a writer died in between, the next append rolls its message forward.
 */
export class MessageAppender {
  /** This process's appends to one thread take their turns, so only other processes' appends contend for a number. */
  private readonly turns = new KeyedQueue();

  constructor(private readonly deps: MessageAppenderDeps) {}

  /**
   * `turn`: the idempotency ledger's turn of a keyed append. The message records its id; a turn retaken from an
   * owner that died answers that owner's message when it got as far as storing it (counting it if it was not yet).
   * `read`: the thread as the caller's request just read it (the policy's read). The first try numbers the message
   * from it when no append of this process to the thread goes first; one that did would have taken that number.
   */
  append(
    caller: AgentDoc,
    request: AppendRequest,
    via: Surface,
    turn: LedgerTurn | null = null,
    read?: ThreadDoc,
  ): Promise<AppendResult> {
    const known = read?._id === request.thread_id && this.turns.isIdle(request.thread_id) ? read : undefined;
    return this.turns.run(request.thread_id, () => this.appendInTurn(caller, request, via, turn, known));
  }

  private async appendInTurn(
    caller: AgentDoc,
    request: AppendRequest,
    via: Surface,
    turn: LedgerTurn | null,
    known: ThreadDoc | undefined,
  ): Promise<AppendResult> {
    if (turn?.retaken) {
      const earlier = await this.deps.store.messages.findOne({ thread_id: request.thread_id, idempotency_id: turn.id });
      if (earlier && (await this.recordMessage(request.thread_id, earlier))) {
        this.deps.log.info(
          { thread_id: earlier.thread_id, sequence_no: earlier.sequence_no, from: caller.handle, via },
          'message of a retaken idempotency key was appended already',
        );
        return {
          thread_id: earlier.thread_id,
          message_id: earlier.id,
          sequence_no: earlier.sequence_no,
          created_at: earlier.created_at.toISOString(),
        };
      }
    }
    const deadline = Date.now() + 5_000;
    for (let attempt = 0; Date.now() < deadline; attempt += 1) {
      const thread = attempt === 0 && known ? known : await this.deps.readThread(caller, request.thread_id);
      // readThread checks the caller may see the thread; the policy's read is checked here.
      if (thread === known) assertParticipant(caller, thread);
      await this.assertOpenBetween(caller, thread);
      const now = this.deps.clock.now();
      const message: MessageDoc = {
        _id: `${thread._id}:${thread.message_seq + 1}`,
        id: randomUUID(),
        thread_id: thread._id,
        sequence_no: thread.message_seq + 1,
        from: caller.handle,
        body: request.body,
        payload: request.payload,
        artifacts: request.artifacts,
        via,
        created_at: now,
        ...(turn ? { idempotency_id: turn.id } : {}),
      };
      try {
        await this.deps.store.insertMessage(message);
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        // Someone holds this number. Its writer is counting it right now unless it died: help only a holder that
        // has waited too long, or twenty appends at once would all write the same thread for every number.
        const holder = await this.deps.store.messages.findOne({ _id: message._id });
        if (holder && this.deps.clock.now().getTime() - holder.created_at.getTime() >= ORPHAN_AFTER_MS)
          await this.recordMessage(thread._id, holder);
        await sleep(backoffMs(attempt));
        continue;
      }
      const recorded = await this.recordMessage(thread._id, message, thread);
      if (!recorded) {
        // Only this writer ever inserted this `_id` (a duplicate insert fails), so it is ours to take back.
        await this.deps.store.messages.deleteOne({ _id: message._id });
        const latest = await this.deps.readThread(caller, request.thread_id);
        await this.assertOpenBetween(caller, latest);
        continue;
      }
      this.deps.log.info(
        { thread_id: thread._id, sequence_no: message.sequence_no, from: caller.handle, via },
        'message appended',
      );
      return {
        thread_id: thread._id,
        message_id: message.id,
        sequence_no: message.sequence_no,
        created_at: now.toISOString(),
      };
    }
    throw new RelayError('state_changed', 'The thread is changing too fast right now; retry');
  }

  /**
   * Counts a stored message on its thread with its outbox event; false when the thread is already terminal. `from`:
   * the thread as this append read it, for the write to start from (a write after it is found by the write).
   */
  private async recordMessage(threadId: string, message: MessageDoc, from?: ThreadDoc): Promise<boolean> {
    const event: OutboxEvent = {
      id: message.id,
      type: 'thread.message',
      at: message.created_at,
      by: message.from,
      via: message.via,
      message_id: message.id,
    };
    let alreadyRecorded = false;
    const count = (doc: ThreadDoc): ThreadDoc | undefined => {
      if (doc.message_seq >= message.sequence_no) {
        alreadyRecorded = true;
        return undefined;
      }
      if (TERMINAL_STATUSES.includes(doc.status) || doc.hidden_from_recipient) return undefined;
      const side = message.from === doc.from ? 'from' : 'to';
      // The recipient's first reply to a question answers it (a run's progress is not an answer).
      const answers =
        doc.intent === 'ask_question' &&
        side === 'to' &&
        message.from !== doc.from &&
        !doc.answered_at &&
        message.payload.kind !== 'run_progress';
      // A run's progress batch (handoff-runs.ts) also moves the run's one-line status the DMs show.
      const progressOf =
        message.payload.kind === 'run_progress' && doc.run?.id === message.payload.run_id ? doc.run : null;
      return {
        ...doc,
        ...(progressOf
          ? {
              run: {
                ...progressOf,
                last_update_at: message.created_at,
                last_line: lastLine(message.body) ?? progressOf.last_line,
              },
            }
          : {}),
        ...(answers ? { answered_at: message.created_at, answer_seq: message.sequence_no } : {}),
        message_seq: message.sequence_no,
        message_counts: { ...doc.message_counts, [side]: doc.message_counts[side] + 1 },
        updated_at: message.created_at,
        outbox: [...doc.outbox, event],
      };
    };
    const after = await this.deps.outbox.recording(event, async () => {
      return (await this.deps.store.writeThread(threadId, count, from)).after;
    });
    return after !== null || alreadyRecorded;
  }

  private async assertOpenBetween(caller: AgentDoc, thread: ThreadDoc): Promise<void> {
    if (TERMINAL_STATUSES.includes(thread.status)) {
      throw new RelayError('thread_terminal', `The handoff is ${thread.status}; no more messages can be added`, {
        status: thread.status,
      });
    }
    // Its recipient cannot see a held create yet, so nothing can be said to them in it.
    if (thread.hidden_from_recipient) {
      throw new RelayError(
        'invalid_transition',
        `The handoff is ${thread.status}: messages can be added once it is approved`,
        { status: thread.status },
      );
    }
    const other = await this.deps.teammates.get(thread.from === caller.handle ? thread.to : thread.from);
    if (other) this.deps.teammates.assertNotBlocked(caller, other);
  }
}
