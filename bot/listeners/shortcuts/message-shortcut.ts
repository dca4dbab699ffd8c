// *Hand off this message*: ack, then open the new-handoff modal prefilled with the message's text and its permalink.
import type { AllMiddlewareArgs, MessageShortcut, SlackShortcutMiddlewareArgs } from '@slack/bolt';
import type { Logger } from 'pino';
import type { Relay } from '../../../relay-core/service/relay-service';
import { slackErrorCode } from '../../delivery/slack-errors';
import { newHandoffModal } from '../../views/new-handoff-modal';
import { NOT_LINKED } from '../commands/handoff-command';
import { slackTextToPlain } from '../commands/parse-command';

// The trigger expires 3 s after the click: the permalink is asked for first (one quick call) and the modal opens
// right after, without it if Slack would not give one. The submission is the `/handoff` modal's (views/new-handoff-view.ts).

export interface MessageShortcutDeps {
  teammates: Relay['teammates'];
  log: Logger;
}

type ShortcutArgs = SlackShortcutMiddlewareArgs<MessageShortcut> & AllMiddlewareArgs;

export function messageShortcut({ teammates, log }: MessageShortcutDeps) {
  return async ({ ack, shortcut, client, respond }: ShortcutArgs): Promise<void> => {
    await ack();
    const say = (text: string) => respond({ response_type: 'ephemeral', replace_original: false, text });
    if (!(await teammates.bySlackUser(shortcut.user.id))) return void (await say(NOT_LINKED));
    let permalink: string | undefined;
    try {
      permalink = (await client.chat.getPermalink({ channel: shortcut.channel.id, message_ts: shortcut.message.ts }))
        .permalink;
    } catch (error) {
      log.warn(
        { channel: shortcut.channel.id, err: slackErrorCode(error) ?? (error as Error).message },
        'no permalink for the shortcut message',
      );
    }
    const summary = slackTextToPlain(shortcut.message.text ?? '').trim();
    try {
      await client.views.open({
        trigger_id: shortcut.trigger_id,
        view: newHandoffModal({ prefill: { summary, links: permalink ? [permalink] : [] } }),
      });
    } catch (error) {
      const code = slackErrorCode(error);
      if (code === undefined) throw error;
      await say(`Slack did not open the handoff form (${code}); use *Hand off this message* again.`);
    }
  };
}
