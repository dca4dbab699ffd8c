// Decline / Complete / Reply modal submissions: validate the form, make the change, answer in the same request.
import type { AllMiddlewareArgs, SlackViewMiddlewareArgs, ViewSubmitAction } from '@slack/bolt';
import type { Logger } from 'pino';
import { z } from 'zod';
import { RelayError } from '../../../relay-core/domain/errors';
import type { AgentDoc } from '../../../relay-core/domain/documents';
import type { Relay } from '../../../relay-core/service/relay-service';
import { artifactSchema, isWellFormedText, LIMITS, type Artifact } from '../../../relay-core/domain/schemas';
import {
  INPUT_MAX,
  INPUTS,
  modalMetadataSchema,
  type ModalMetadata,
  type TransitionModal,
} from '../../views/transition-modals';
import { historyLine } from '../actions/button-click';
import { safeJson } from '../safe-json';

// Answering in the request brings a problem back on the field (`response_action: "errors"`) while the modal is
// still open. The `slack` queue redraws the DM afterwards, as after any change.

type SubmitArgs = SlackViewMiddlewareArgs<ViewSubmitAction> & AllMiddlewareArgs;
type Input = (typeof INPUTS)[keyof typeof INPUTS];
type FieldErrors = Record<string, string>;

/** Slack waits 3 s for the answer; past this the modal closes and a late problem goes to the user's DM. */
const ANSWER_WITHIN_MS = 2_300;

/** The field that carries errors not about one particular input. */
const MAIN_FIELD: Record<TransitionModal, Input> = {
  decline: INPUTS.reason,
  complete: INPUTS.summary,
  reply: INPUTS.body,
};

const requiredText = (what: string, max: number) =>
  z
    .string()
    .trim()
    .min(1, `Please write ${what}.`)
    .max(max, `Please keep it to ${max} characters.`)
    .refine(isWellFormedText, 'This text has characters that cannot be stored; please retype it.');

export interface TransitionViewsDeps {
  messages: Relay['messages'];
  reads: Relay['reads'];
  teammates: Relay['teammates'];
  transitions: Relay['transitions'];
  log: Logger;
}

export function transitionSubmission(deps: TransitionViewsDeps, kind: TransitionModal) {
  const { teammates, log } = deps;
  return async ({ ack, body, view, client }: SubmitArgs): Promise<void> => {
    const main = MAIN_FIELD[kind].block_id;
    const refuse = (errors: FieldErrors) => ack({ response_action: 'errors', errors });

    const metadata = modalMetadataSchema.safeParse(safeJson(view.private_metadata));
    if (!metadata.success) {
      return refuse({
        [main]:
          'This form is not one handoff-relay recognises; close it and use the buttons on the latest message. Nothing was changed.',
      });
    }
    const read = (input: Input): string => view.state.values[input.block_id]?.[input.action_id]?.value ?? '';
    const form = parseForm(kind, read);
    if ('errors' in form) return refuse(form.errors);

    const actor = await teammates.bySlackUser(body.user.id);
    if (!actor)
      return refuse({
        [main]:
          'Your Slack account is not linked to a handoff-relay teammate, so you cannot act on this handoff. Nothing was changed.',
      });

    const work = apply(deps, kind, metadata.data, form.values, actor);
    const outcome = await Promise.race([
      work.then(
        () => ({ done: true as const }),
        (error: unknown) => ({ done: true as const, error }),
      ),
      new Promise<{ done: false }>((resolve) => setTimeout(() => resolve({ done: false }), ANSWER_WITHIN_MS).unref()),
    ]);
    if (!outcome.done) {
      // Too slow to answer on the form: close it and report the outcome in the user's DM if it fails.
      await ack();
      work
        .catch(async (error: unknown) => {
          const text = await explainFailure(deps, metadata.data, error);
          await client.chat.postMessage({ channel: body.user.id, text: `Your ${kind} did not go through: ${text}` });
        })
        .catch((error: Error) => log.warn({ err: error.message }, 'could not report a late modal failure'));
      return;
    }
    if ('error' in outcome) {
      if (!(outcome.error instanceof RelayError)) {
        await refuse({
          [main]: 'Something went wrong on handoff-relay’s side; please try again. Nothing was changed.',
        });
        throw outcome.error;
      }
      return refuse({ [main]: await explainFailure(deps, metadata.data, outcome.error) });
    }
    await ack();
  };
}

interface FormValues {
  text: string;
  artifacts: Artifact[];
}

function parseForm(
  kind: TransitionModal,
  read: (input: Input) => string,
): { values: FormValues } | { errors: FieldErrors } {
  const field = MAIN_FIELD[kind];
  const what = { decline: 'a reason', complete: 'what was done', reply: 'a message' }[kind];
  const text = requiredText(what, INPUT_MAX[field.action_id]).safeParse(read(field));
  const errors: FieldErrors = {};
  if (!text.success) errors[field.block_id] = text.error.issues[0]!.message;
  const artifacts: Artifact[] = [];
  if (kind === 'complete') {
    const lines = read(INPUTS.links)
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean);
    const bad = lines.findIndex((url) => !artifactSchema.safeParse({ type: 'link', url }).success);
    if (lines.length > LIMITS.artifacts)
      errors[INPUTS.links.block_id] = `Please give at most ${LIMITS.artifacts} links.`;
    else if (bad >= 0) errors[INPUTS.links.block_id] = `Line ${bad + 1} is not an http(s) URL (one URL per line).`;
    else artifacts.push(...lines.map((url) => ({ type: 'link' as const, url })));
  }
  if (Object.keys(errors).length || !text.success) return { errors };
  return { values: { text: text.data, artifacts } };
}

async function apply(
  { messages, transitions }: Pick<Relay, 'messages' | 'transitions'>,
  kind: TransitionModal,
  meta: ModalMetadata,
  form: FormValues,
  actor: AgentDoc,
) {
  if (kind === 'reply') {
    return messages.append(actor, { thread_id: meta.t, body: form.text, payload: {}, artifacts: [] }, 'slack');
  }
  const details = kind === 'decline' ? { reason: form.text } : { result_summary: form.text, artifacts: form.artifacts };
  return transitions.transition(
    actor,
    { thread_id: meta.t, transition: kind, expected_status: meta.s, ...details },
    'slack',
  );
}

/** A refusal in the user's words; a thread that moved on since the form opened says how. */
async function explainFailure({ reads }: Pick<Relay, 'reads'>, meta: ModalMetadata, error: unknown): Promise<string> {
  if (!(error instanceof RelayError)) return 'something went wrong on handoff-relay’s side; please try again.';
  if (error.code === 'state_changed' || error.code === 'thread_terminal' || error.code === 'invalid_transition') {
    const thread = await reads.threadById(meta.t);
    if (thread && thread.status !== meta.s) {
      return `This handoff ${historyLine(thread)} since this form was opened. Nothing was changed; close this form.`;
    }
  }
  return `${error.message}. Nothing was changed.`;
}
