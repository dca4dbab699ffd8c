// Submission of the new-handoff modal: field problems go back on the form; a good one becomes the caller's handoff.
import type { AllMiddlewareArgs, SlackViewMiddlewareArgs, ViewSubmitAction } from '@slack/bolt';
import type { Logger } from 'pino';
import { RelayError } from '../../../relay-core/domain/errors';
import type { Relay } from '../../../relay-core/service/relay-service';
import {
  NEW_HANDOFF_FIELDS as F,
  newHandoffFromForm,
  readNewHandoffState,
  type FieldErrors,
} from '../../views/new-handoff-modal';
import { NOT_LINKED } from '../commands/handoff-command';

// Every field is checked the way the relay would, and problems are answered on the fields (response_action
// "errors") within Slack's 3 seconds. The handoff is idempotent under the view id, so Slack's retry makes no
// second thread; on success the modal closes and the caller gets a DM confirming it.

type SubmitArgs = SlackViewMiddlewareArgs<ViewSubmitAction> & AllMiddlewareArgs;

export interface NewHandoffViewDeps {
  creates: Relay['creates'];
  teammates: Relay['teammates'];
  log: Logger;
}

export function newHandoffSubmitted(deps: NewHandoffViewDeps) {
  const { creates, teammates } = deps;
  return async ({ ack, body, view, client }: SubmitArgs): Promise<void> => {
    const fail = (errors: FieldErrors) => ack({ response_action: 'errors', errors: errors as Record<string, string> });
    const caller = await teammates.bySlackUser(body.user.id);
    if (!caller) return fail({ [F.recipient]: NOT_LINKED });
    const form = readNewHandoffState(view.state.values);
    if (!form)
      return fail({
        [F.summary]: 'This form is from an older version of handoff-relay; close it and run /handoff again.',
      });

    if (form.recipientSlackUser && form.target)
      return fail({ [F.target]: 'Choose a person or name a role, skill or owner, not both.' });
    if (!form.recipientSlackUser && !form.target)
      return fail({ [F.recipient]: 'Choose who takes the handoff over (or name a role, skill or owner below).' });
    const recipient = form.recipientSlackUser ? await teammates.bySlackUser(form.recipientSlackUser) : null;
    const checked = newHandoffFromForm(
      form,
      form.target ?? recipient?.handle ?? 'unlinked@slack',
      `slack-view:${view.id}`,
    );
    const errors: FieldErrors = 'errors' in checked ? { ...checked.errors } : {};
    // A malformed target is the target field's problem.
    if (form.target && errors[F.recipient]) {
      errors[F.target] = `Must be role:<role>, skill:<skill> or owner:<path>: ${errors[F.recipient]}`;
      delete errors[F.recipient];
    }
    if (form.recipientSlackUser && !recipient)
      errors[F.recipient] =
        'This person has no handoff-relay teammate linked to their Slack account; they can run /handoff link.';
    if (Object.keys(errors).length || !('handoff' in checked)) return fail(errors);
    const to = checked.handoff.to;

    let created;
    try {
      created = await creates.create(caller, checked.handoff, 'slack');
    } catch (error) {
      if (!(error instanceof RelayError)) throw error;
      const field =
        error.code === 'recipient_not_found' || error.code === 'teammate_blocked'
          ? form.target
            ? F.target
            : F.recipient
          : F.summary;
      return fail({ [field]: `${error.message}.` });
    }
    await ack();
    deps.log.info({ thread_id: created.task_id, from: caller.handle, to }, 'handoff sent from the Slack modal');
    await client.chat.postMessage({
      channel: body.user.id,
      text: created.approval
        ? `:raised_hand: Your handoff to \`${created.recipient}\` is waiting for approval by ${created.approval.approvers.map((a) => `\`${a}\``).join(', ')} (policy rule \`${created.approval.rule_id}\`); it is delivered once approved. <${created.inbox_url}|View it in the inbox>`
        : created.status.state === 'unclaimed'
          ? `:outbox_tray: Your handoff to \`${created.recipient}\` was sent (${checked.handoff.intent}); ${created.candidates?.length} teammates can claim it. <${created.inbox_url}|View it in the inbox>`
          : `:outbox_tray: Your handoff to \`${created.recipient}\` was sent (${checked.handoff.intent}). <${created.inbox_url}|View it in the inbox>`,
    });
  };
}
