// link_shared: an inbox link pasted in Slack unfurls as "a handoff" for everyone, and each participant in the
// conversation gets the compact card (status, summary, participants) as an ephemeral message only they see.
import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from '@slack/bolt';
import type { Logger } from 'pino';
import { parseInboxUrl } from '../../../relay-core/service/inbox-links';
import type { Relay } from '../../../relay-core/service/relay-service';
import { participantCard, publicUnfurl } from '../../blocks/handoff-unfurl';
import { slackErrorCode } from '../../delivery/slack-errors';

// Slack shows an unfurl to the whole conversation and cannot tailor it per viewer, so it reveals nothing of the
// thread. A participant's card goes out with chat.postEphemeral, which Slack refuses for someone who is not in the
// conversation (user_not_in_channel) or where the bot is not (channel_not_found, not_in_channel): Slack itself checks
// membership, and a refusal only means that person gets no card. Nothing is said to anyone who is not a participant.

export interface LinkSharedDeps {
  links: Relay['links'];
  reads: Relay['reads'];
  teammates: Relay['teammates'];
  log: Logger;
}

/** What Slack no longer needs an answer for: the person or the bot is not in that conversation. */
const NOT_THERE = new Set(['user_not_in_channel', 'channel_not_found', 'not_in_channel', 'is_archived']);

export function linkShared({ links, reads, teammates, log }: LinkSharedDeps) {
  return async ({ event, client }: SlackEventMiddlewareArgs<'link_shared'> & AllMiddlewareArgs): Promise<void> => {
    const targets = event.links
      .map((link) => ({ url: link.url, target: parseInboxUrl(links.publicUrl, link.url) }))
      .filter((l): l is { url: string; target: NonNullable<typeof l.target> } => l.target !== null);
    if (targets.length === 0) return;
    const unfurls = Object.fromEntries(targets.map((t) => [t.url, publicUnfurl()]));
    const where =
      event.unfurl_id && event.source
        ? { unfurl_id: event.unfurl_id, source: event.source }
        : { channel: event.channel, ts: event.message_ts };
    await client.chat.unfurl({ ...where, unfurls } as Parameters<typeof client.chat.unfurl>[0]);

    // A link still in the composer is not in the conversation yet: no cards until it is sent.
    if (event.source === 'composer') return;
    const seen = new Set<string>();
    for (const { target } of targets) {
      if (seen.has(target.threadId)) continue;
      seen.add(target.threadId);
      const thread = await reads.threadById(target.threadId);
      if (!thread) continue;
      const [sender, recipient] = await Promise.all([teammates.get(thread.from), teammates.get(thread.to)]);
      // Only a signature this relay made counts as "signed for" someone (a forged one names nobody).
      const signedFor =
        target.viewer &&
        target.signature &&
        (await reads.threadForInboxLink(thread._id, target.viewer, target.signature))
          ? target.viewer
          : null;
      for (const participant of [sender, recipient]) {
        if (!participant?.slack_user_id || participant.status !== 'active') continue;
        const card = participantCard({
          thread,
          sender,
          recipient,
          inboxUrl: links.url(thread._id, participant.handle),
          signedFor,
        });
        try {
          await client.chat.postEphemeral({ channel: event.channel, user: participant.slack_user_id, ...card });
        } catch (error) {
          const code = slackErrorCode(error);
          if (code === undefined || !NOT_THERE.has(code)) throw error;
          log.debug(
            { thread_id: thread._id, slack_user: participant.slack_user_id, code },
            'no unfurl card: not in the conversation',
          );
        }
      }
    }
  };
}
