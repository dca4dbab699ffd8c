// An approval's reminder and timeout: delayed jobs on the `verify` queue that only say when to look; the relay's
// clock decides what is due (a reminder, an escalation, a timeout that denies).
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import {
  describeApprovers,
  dueTimer,
  threadOfApproval,
  timerJobId,
  type ApprovalRecord,
  type ApproverRef,
  type TimerStep,
} from '../domain/approval';
import type { Clock } from '../domain/clock';
import type { OutboxEvent, ThreadDoc } from '../domain/documents';
import type { EventType } from '../domain/schemas';
import type { JobQueue } from '../queues/bullmq-queues';
import type { MongoStore } from '../store/mongo-store';
import { conclude, withRecord } from './approval-outcome';
import type { ApprovalRecords } from './approval-records';
import type { Approvers } from './approval-approvers';
import { APPROVAL_TIMER_JOB } from './approvals';
import type { Outbox } from './outbox';
import type { Teammates } from './teammates';

export interface ApprovalTimersDeps {
  store: Pick<MongoStore, 'writeThread'>;
  outbox: Pick<Outbox, 'recording'>;
  teammates: Pick<Teammates, 'get'>;
  records: Pick<ApprovalRecords, 'get' | 'index'>;
  approvers: Pick<Approvers, 'resolve'>;
  /** The `verify` queue, where reminders and timeouts wait as delayed jobs; without one only the sweep fires them. */
  queue?: JobQueue;
  clock: Clock;
  log: Logger;
}

export class ApprovalTimers {
  constructor(private readonly deps: ApprovalTimersDeps) {}

  /** Puts the approval's next reminder and its timeout on the queue (deterministic job ids: arming twice is once). */
  async arm(record: ApprovalRecord): Promise<void> {
    const timers = this.deps.queue;
    if (!timers || record.status !== 'pending') return;
    const now = this.deps.clock.now().getTime();
    const jobs: Array<[TimerStep, Date]> = [['timeout', record.deadline]];
    if (record.remind_at) jobs.push(['remind', record.remind_at]);
    for (const [kind, at] of jobs) {
      await timers
        .add(APPROVAL_TIMER_JOB, { approval_id: record.id }, timerJobId(record, kind), Math.max(0, at.getTime() - now))
        .catch((error: Error) => {
          this.deps.log.warn(
            { approval_id: record.id, err: error.message },
            'approval timer not armed yet; the sweep arms it',
          );
        });
    }
  }

  /**
   * Fires what is due on the approval now (by the relay's clock, whatever the job's delay said): a reminder to
   * the approvers, or the timeout — deny (the call is refused, the actor told), or escalate once to escalate_to
   * with a fresh deadline. Safe to run any number of times: each step is one conditional thread write.
   */
  async fire(id: string): Promise<'reminded' | 'escalated' | 'timed_out' | 'not_due'> {
    const threadId = threadOfApproval(id);
    if (!threadId) return 'not_due';
    for (let round = 0; round < 5; round += 1) {
      const { thread, record } = await this.deps.records.get(id).catch(() => ({ thread: null, record: null }));
      if (!thread || !record) return 'not_due';
      const due = dueTimer(record, this.deps.clock.now());
      if (!due) return 'not_due';
      const wantsEscalation =
        due === 'timeout' && record.on_timeout === 'escalate' && record.step === 0 && record.escalate_to.length > 0;
      const added = wantsEscalation ? await this.escalationApprovers(thread, record) : [];
      // Escalating to nobody would only move the deadline: an escalation whose approvers do not resolve times out.
      const escalate = added.length > 0;
      const type: EventType =
        due === 'remind' || escalate
          ? 'approval.requested'
          : record.action === 'handoff.create' && thread.status === 'awaiting_approval'
            ? 'thread.rejected'
            : 'approval.decided';
      const event: OutboxEvent = { id: randomUUID(), type, at: this.deps.clock.now(), by: 'policy', via: record.via };
      let outcome: 'reminded' | 'escalated' | 'timed_out' | null = null;
      let drifted = false;
      const written = await this.deps.outbox.recording(event, async () => {
        const result = await this.deps.store.writeThread(threadId, (current) => {
          const now = this.deps.clock.now();
          const rec = current.approvals?.find((a) => a.id === id);
          outcome = null;
          drifted = false;
          if (!rec || dueTimer(rec, now) !== due || rec.step !== record.step) return undefined;
          if (due === 'remind') {
            outcome = 'reminded';
            const next = {
              ...rec,
              remind_at: null,
              history: [...rec.history, { at: now, what: 'reminded' as const, note: `step ${rec.step}` }],
            };
            return { ...withRecord(current, next), outbox: [...current.outbox, event] };
          }
          if (escalate) {
            outcome = 'escalated';
            const seen = new Set(rec.approvers.map((a) => a.label));
            const next: ApprovalRecord = {
              ...rec,
              step: 1,
              approvers: [...rec.approvers, ...added.filter((a) => !seen.has(a.label))],
              deadline: new Date(now.getTime() + rec.timeout_ms),
              remind_at: rec.remind_after_ms ? new Date(now.getTime() + rec.remind_after_ms) : null,
              history: [
                ...rec.history,
                {
                  at: now,
                  what: 'escalated',
                  note: `no decision within ${describeMs(rec.timeout_ms)}; asked ${describeApprovers(added)}`,
                },
              ],
            };
            return { ...withRecord(current, next), outbox: [...current.outbox, event] };
          }
          outcome = 'timed_out';
          const timedOut: ApprovalRecord = {
            ...rec,
            status: 'timed_out',
            reason: `no approval within ${describeMs(rec.timeout_ms)}${rec.step ? ' after escalation' : wantsEscalation ? ' and nobody to escalate to' : ''} (rule ${rec.rule_id}, on_timeout: deny)`,
            decided_by: 'policy',
            decided_at: now,
            remind_at: null,
            history: [...rec.history, { at: now, what: 'timed_out', note: 'denied' }],
          };
          const planned = conclude(current, timedOut, now, null, () => event);
          drifted = planned.event !== type;
          return drifted ? undefined : planned.next;
        });
        return result.after;
      });
      if (drifted) continue;
      if (!written || !outcome) return 'not_due';
      const updated = written.approvals!.find((a) => a.id === id)!;
      await this.deps.records.index(threadId, updated);
      if (outcome === 'escalated' || outcome === 'reminded') await this.arm(updated);
      this.deps.log.info({ thread_id: threadId, approval_id: id, outcome }, 'approval timer fired');
      return outcome;
    }
    return 'not_due';
  }

  private async escalationApprovers(thread: ThreadDoc, record: ApprovalRecord): Promise<ApproverRef[]> {
    const [sender, recipient, actor] = await Promise.all([
      this.deps.teammates.get(thread.from),
      this.deps.teammates.get(thread.to),
      this.deps.teammates.get(record.actor),
    ]);
    if (!sender || !recipient || !actor) return [];
    return this.deps.approvers
      .resolve(record.escalate_to, { sender, recipient, actor }, record.rule_id, 1)
      .catch((error: Error) => {
        this.deps.log.warn(
          { approval_id: record.id, err: error.message },
          'escalation approvers do not resolve; the approval times out instead',
        );
        return [];
      });
  }
}

function describeMs(ms: number): string {
  if (ms % 86_400_000 === 0) return `${ms / 86_400_000}d`;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  return `${Math.round(ms / 1000)}s`;
}
