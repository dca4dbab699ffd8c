// The `slack` processor's work for a thread's approvals: each approver's DM (posted exactly once), a reminder
// under it for each reminder the approval recorded, and each approver's DM redrawn when the approval as it stands
// now draws differently from what the DM shows (its record's `shown` digest).
import type { WebClient } from '@slack/web-api';
import type { AgentDoc, ThreadDoc } from '../../relay-core/domain/documents';
import type { ThreadWriter } from '../../relay-core/domain/thread-writer';
import type { Relay } from '../../relay-core/service/relay-service';
import { approvalDm, approvalReminder } from '../blocks/approval-dm';
import type { EnsurePosted } from './exactly-once-post';
import { approvalDmKey, approvalReminderKey, messageDigest, withShown, type Redrawn } from './slack-posts';

export interface ApprovalSyncDeps {
  links: Relay['links'];
  threads: ThreadWriter;
  client: WebClient;
  ensurePosted: EnsurePosted;
  openIm: (slackUser: string) => Promise<string>;
}

/** Returns whether it posted or redrew anything. `redrawAll`: redraw DMs the records say are current too (a retried job). */
export function approvalSync({ links, threads, client, ensurePosted, openIm }: ApprovalSyncDeps) {
  return async function syncApprovals(
    threadId: string,
    owner: string,
    people: { sender: AgentDoc | null; recipient: AgentDoc | null },
    redrawAll = false,
  ): Promise<boolean> {
    let thread = await threads.readThread(threadId);
    if (!thread?.approvals?.length) return false;
    const inboxUrl = links.url(threadId);
    const render = (record: NonNullable<ThreadDoc['approvals']>[number]) => async (t: ThreadDoc) =>
      approvalDm({ thread: t, record: t.approvals?.find((a) => a.id === record.id) ?? record, ...people, inboxUrl });
    const justPosted = new Set<string>();
    let changed = false;
    for (const record of thread.approvals) {
      for (const approver of record.approvers) {
        if (!approver.slack_user_id) continue;
        const user = approver.slack_user_id;
        const key = approvalDmKey(record.id, user);
        // A DM is asked for only while the approval is open; a decided one still gets its DMs redrawn below.
        if (record.status === 'pending' && !thread.slack_approvals?.[key]) {
          const posted = await ensurePosted(
            threadId,
            key,
            owner,
            { channel: () => openIm(user), thread_ts: null },
            render(record),
          );
          if (posted.posted) {
            justPosted.add(key);
            changed = true;
          }
          thread = posted.thread;
        }
        const reminders = record.history.filter((h) => h.what === 'reminded').length;
        const dm = (await threads.readThread(threadId))?.slack_approvals?.[key];
        if (record.status === 'pending' && dm) {
          for (let n = 1; n <= reminders; n += 1) {
            const reminder = approvalReminderKey(record.id, user, n);
            const result = await ensurePosted(
              threadId,
              reminder,
              owner,
              { channel: async () => dm.channel, thread_ts: dm.ts },
              async (t) => approvalReminder(record, t),
            );
            if (result.posted) changed = true;
          }
        }
      }
    }
    // Redraw each approver's DM that shows something else than the approval now (decided, a vote in, the handoff
    // cancelled …); one posted by this job shows what it was posted with. Recorded unless someone drew it since.
    const latest = await threads.readThread(threadId);
    if (!latest) return changed;
    const redrawn: Redrawn[] = [];
    for (const record of latest.approvals ?? []) {
      for (const approver of record.approvers) {
        if (!approver.slack_user_id) continue;
        const key = approvalDmKey(record.id, approver.slack_user_id);
        const dm = latest.slack_approvals?.[key];
        if (!dm) continue;
        const message = approvalDm({ thread: latest, record, ...people, inboxUrl });
        const shown = messageDigest(message);
        if ((redrawAll && !justPosted.has(key) ? undefined : dm.shown) === shown) continue;
        await client.chat.update({ channel: dm.channel, ts: dm.ts, ...message });
        redrawn.push({ key, ts: dm.ts, shown, was: { shown: dm.shown } });
      }
    }
    if (redrawn.length > 0) {
      await threads.writeThread(threadId, (doc) => withShown(doc, redrawn));
      changed = true;
    }
    return changed;
  };
}
