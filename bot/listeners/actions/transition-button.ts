// Accept / Complete buttons: ack at once, then one compare-and-set on the thread; the `slack` queue redraws the DM.
// A stale, doubled or unauthorised click changes nothing and gets an ephemeral explanation.
import type { AllMiddlewareArgs, BlockAction, ButtonAction, SlackActionMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import { RelayError } from '../../../relay-core/errors';
import type { RelayService } from '../../../relay-core/relay-service';
import { threadStatusSchema, type TransitionName } from '../../../relay-core/schemas';

const buttonValueSchema = z.object({ t: z.uuid(), s: threadStatusSchema });

type ButtonArgs = SlackActionMiddlewareArgs<BlockAction<ButtonAction>> & AllMiddlewareArgs;

export function transitionButton(relay: RelayService, transition: TransitionName) {
  return async ({ ack, body, action, respond }: ButtonArgs): Promise<void> => {
    await ack();
    const channel = body.channel?.id ?? body.container?.channel_id;
    const user = body.user.id;
    // Through response_url: it reaches whoever clicked, even someone who is not a member of the DM.
    const explain = async (text: string) => {
      await respond({ response_type: 'ephemeral', replace_original: false, text });
    };

    const value = buttonValueSchema.safeParse(safeJson(action.value));
    if (!value.success) return explain('This button is not one handoff-relay recognises; nothing was changed.');
    const { t: threadId, s: shownStatus } = value.data;

    const thread = await relay.threadById(threadId);
    if (!thread) return explain('This handoff no longer exists; nothing was changed.');
    const messageTs = body.message?.ts ?? body.container?.message_ts;
    // (A click can beat the worker's record of the DM it just posted; only a different recorded message is stale.)
    if (thread.slack && (thread.slack.ts !== messageTs || thread.slack.channel !== channel)) {
      return explain('This message is out of date; use the latest message for this handoff. Nothing was changed.');
    }

    const actor = await relay.teammates.bySlackUser(user);
    if (!actor) {
      return explain('Your Slack account is not linked to a handoff-relay teammate, so you cannot act on this handoff.');
    }
    try {
      const answer = await relay.transition(actor, { thread_id: threadId, transition, expected_status: shownStatus }, 'slack');
      // Accept runs the acceptance verdict (no inputs from a button: only the token-less checks with defaults).
      if (answer.accepted === false) {
        const reasons = Array.isArray(answer.reasons) ? (answer.reasons as string[]).join('; ') : '';
        return explain(`Not accepted (${String(answer.result)}): ${reasons}. Nothing was changed.`);
      }
    } catch (error) {
      if (error instanceof RelayError) return explain(`${error.message}. Nothing was changed.`);
      throw error;
    }
  };
}

function safeJson(text: string | undefined): unknown {
  try {
    return text === undefined ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}
