// The `slack` queue's processor: keeps the recipient's DM for a thread in step with the thread.
// Only the thread.created job posts; every other job edits the recorded message, so a re-run never posts twice.
import { UnrecoverableError, type Job } from 'bullmq';
import type { WebClient } from '@slack/web-api';
import type { Logger } from 'pino';
import { eventJobSchema } from '../relay-core/bullmq-queues';
import type { RelayService } from '../relay-core/relay-service';
import { handoffDm } from './blocks/handoff-dm';

export interface SlackDeliveryDeps {
  relay: RelayService;
  client: WebClient;
  log: Logger;
}

export type SlackDeliveryOutcome = 'posted' | 'updated' | 'skipped';

export function createSlackDeliveryProcessor(deps: SlackDeliveryDeps) {
  const { relay, client, log } = deps;

  async function render(threadId: string) {
    const thread = await relay.threadById(threadId);
    if (!thread) return null;
    const [sender, recipient] = await Promise.all([relay.teammates.get(thread.from), relay.teammates.get(thread.to)]);
    return { thread, recipient, message: handoffDm({ thread, sender, recipient, inboxUrl: relay.inboxUrl(thread._id, thread.to) }) };
  }

  return async function deliverToSlack(job: Job): Promise<SlackDeliveryOutcome> {
    const parsed = eventJobSchema.safeParse(job.data);
    if (!parsed.success) throw new UnrecoverableError(`slack job ${job.id}: malformed data (${parsed.error.issues[0]?.message})`);
    const { thread_id: threadId, type } = parsed.data;

    let current = await render(threadId);
    if (!current) return 'skipped';
    const slackUser = current.recipient?.slack_user_id;
    if (!slackUser) return 'skipped';

    if (!current.thread.slack) {
      if (type !== 'thread.created') {
        // The DM is not posted yet; the created job posts it. Retry so this change is not lost.
        throw new Error(`thread ${threadId}: DM not posted yet`);
      }
      const opened = await client.conversations.open({ users: slackUser });
      const channel = opened.channel?.id;
      if (!channel) throw new Error('conversations.open returned no channel');
      const posted = await client.chat.postMessage({ channel, ...current.message });
      if (!posted.ts) throw new Error('chat.postMessage returned no ts');
      await relay.recordSlackDelivery(threadId, { channel, ts: posted.ts });
      log.info({ thread_id: threadId, channel, ts: posted.ts }, 'slack DM posted');
      current = await render(threadId);
      if (!current || current.thread.outbox.length === 1) return 'posted';
      // The thread changed while we posted: fall through and bring the message up to date.
    }

    // Re-render until the thread stops changing under us, so the last writer always shows the latest state.
    for (let attempt = 0; attempt < 5 && current; attempt += 1) {
      const { channel, ts } = current.thread.slack!;
      const seen = current.thread.outbox.length;
      await client.chat.update({ channel, ts, ...current.message });
      current = await render(threadId);
      if (!current || current.thread.outbox.length === seen) break;
    }
    log.info({ thread_id: threadId, event: type }, 'slack DM updated');
    return 'updated';
  };
}
