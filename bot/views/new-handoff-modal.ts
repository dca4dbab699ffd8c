// The `/handoff` modal: a pure view builder, and the pure reading of its submission into the relay's NewHandoff.
import type { types } from '@slack/bolt';
import { z } from 'zod';
import {
  LIMITS,
  artifactSchema,
  intentSchema,
  newHandoffSchema,
  type Artifact,
  type Intent,
  type NewHandoff,
} from '../../relay-core/domain/schemas';
import { intentProblems } from '../../relay-core/domain/thread-lifecycle';

// Validation runs the relay's zod schemas and intent rules, so the modal refuses what the relay would (and also
// asks a question of "Ask a question"), each problem shown on the field it belongs to.

type ModalView = types.ModalView;

export const NEW_HANDOFF_CALLBACK_ID = 'handoff_new_modal';
/** The message shortcut *Hand off this message* (manifest `features.shortcuts`, type `message`) opens this modal prefilled. */
export const MESSAGE_SHORTCUT_CALLBACK_ID = 'handoff_from_message';
/** What Slack lets an input start with (plain_text_input initial_value). */
const INITIAL_VALUE_MAX = 3000;

/** block_id = the field; each input's action_id is the same string (unique per block is all Slack needs). */
export const NEW_HANDOFF_FIELDS = {
  recipient: 'recipient',
  /** Instead of a person: role:<role>, skill:<skill> or owner:<path> (several matches can claim it). */
  target: 'recipient_target',
  intent: 'intent',
  summary: 'summary',
  question: 'question',
  description: 'action_description',
  files: 'action_files',
  rationale: 'action_rationale',
  links: 'links',
} as const;
type Field = (typeof NEW_HANDOFF_FIELDS)[keyof typeof NEW_HANDOFF_FIELDS];

export const INTENT_OPTIONS: Record<Intent, string> = {
  inform: 'Inform (for their information)',
  ask_question: 'Ask a question',
  propose_action: 'Propose an action',
};

const F = NEW_HANDOFF_FIELDS;
const plain = (text: string) => ({ type: 'plain_text' as const, text });

function input(
  field: Field,
  label: string,
  element: Record<string, unknown>,
  opts: { optional?: boolean; hint?: string } = {},
) {
  return {
    type: 'input',
    block_id: field,
    label: plain(label),
    element: { ...element, action_id: field },
    ...(opts.optional ? { optional: true } : {}),
    ...(opts.hint ? { hint: plain(opts.hint) } : {}),
  };
}

function textInput(multiline: boolean, placeholder?: string, initial?: string) {
  return {
    type: 'plain_text_input',
    multiline,
    ...(placeholder ? { placeholder: plain(placeholder) } : {}),
    ...(initial ? { initial_value: cutInitial(initial) } : {}),
  };
}

/** Longer text is cut on a whole line where it can be, with an ellipsis (the permalink artifact keeps the whole message). */
function cutInitial(text: string): string {
  if (text.length <= INITIAL_VALUE_MAX) return text;
  const room = text.slice(0, INITIAL_VALUE_MAX - 1);
  const lineEnd = room.lastIndexOf('\n');
  return `${lineEnd > INITIAL_VALUE_MAX / 2 ? room.slice(0, lineEnd) : room}…`;
}

/** What the modal starts with (the message shortcut: the message's text and its permalink). */
export interface NewHandoffPrefill {
  summary?: string;
  links?: string[];
}

/** The modal `/handoff` opens. `privateMetadata` travels back with the submission untouched. */
export function newHandoffModal(opts: { privateMetadata?: string; prefill?: NewHandoffPrefill } = {}): ModalView {
  const prefill = opts.prefill ?? {};
  const intentOptions = (Object.keys(INTENT_OPTIONS) as Intent[]).map((value) => ({
    text: plain(INTENT_OPTIONS[value]),
    value,
  }));
  return {
    type: 'modal',
    callback_id: NEW_HANDOFF_CALLBACK_ID,
    title: plain('New handoff'),
    submit: plain('Send'),
    close: plain('Cancel'),
    private_metadata: opts.privateMetadata ?? '',
    blocks: [
      input(
        F.recipient,
        'To',
        { type: 'users_select', placeholder: plain('Who takes it over?') },
        {
          optional: true,
          hint: 'They need a handoff-relay teammate linked to their Slack account. Or leave this empty and name a role, skill or owner below.',
        },
      ),
      input(F.target, 'Or to whoever fits', textInput(false, 'role:frontend · skill:react · owner:apps/web/'), {
        optional: true,
        hint: 'One match gets it directly; several get a Claim button (in the channel bound with /handoff channel, or in their DMs) and the first to claim it owns it.',
      }),
      input(F.intent, 'Intent', { type: 'static_select', options: intentOptions, initial_option: intentOptions[0] }),
      input(F.summary, 'Summary', textInput(true, 'What they need to know or do', prefill.summary), {
        hint: `At most ${LIMITS.summary} characters.`,
      }),
      input(F.question, 'Question', textInput(true), {
        optional: true,
        hint: 'Required for "Ask a question"; leave empty otherwise.',
      }),
      input(F.description, 'Proposed action', textInput(true, 'What should be done'), {
        optional: true,
        hint: 'Required for "Propose an action", with its rationale; leave empty otherwise.',
      }),
      input(F.files, 'Target files', textInput(true, 'src/api/users.ts'), {
        optional: true,
        hint: 'One path per line.',
      }),
      input(F.rationale, 'Rationale', textInput(true), { optional: true, hint: 'Why the action is needed.' }),
      input(F.links, 'Links', textInput(true, 'https://…', prefill.links?.join('\n')), {
        optional: true,
        hint: 'One http(s) URL per line; each becomes a link artifact.',
      }),
    ],
  } as unknown as ModalView;
}

// --- reading a submission ----------------------------------------------------------------------

const textValue = z.object({ type: z.literal('plain_text_input'), value: z.string().nullish() });
const stateSchema = z.object({
  [F.recipient]: z.object({
    [F.recipient]: z.object({ type: z.literal('users_select'), selected_user: z.string().nullish() }),
  }),
  [F.intent]: z.object({
    [F.intent]: z.object({
      type: z.literal('static_select'),
      selected_option: z.object({ value: z.string() }).nullish(),
    }),
  }),
  [F.target]: z.object({ [F.target]: textValue }).optional(),
  [F.summary]: z.object({ [F.summary]: textValue }),
  [F.question]: z.object({ [F.question]: textValue }).optional(),
  [F.description]: z.object({ [F.description]: textValue }).optional(),
  [F.files]: z.object({ [F.files]: textValue }).optional(),
  [F.rationale]: z.object({ [F.rationale]: textValue }).optional(),
  [F.links]: z.object({ [F.links]: textValue }).optional(),
});

/** The form as typed: trimmed, empty fields absent. */
export interface NewHandoffForm {
  recipientSlackUser: string | null;
  /** role:…, skill:… or owner:… as typed (instead of a person). */
  target?: string;
  intent: string | null;
  summary: string;
  question?: string;
  description?: string;
  files: string[];
  rationale?: string;
  links: string[];
}

export type FieldErrors = Partial<Record<Field, string>>;

/** Reads `view.state.values`; null when the state is not this modal's (another app version, a forged payload). */
export function readNewHandoffState(values: unknown): NewHandoffForm | null {
  const parsed = stateSchema.safeParse(values);
  if (!parsed.success) return null;
  const s = parsed.data;
  const text = (field: { value?: string | null } | undefined) => {
    const value = field?.value?.trim();
    return value ? value : undefined;
  };
  const lines = (field: { value?: string | null } | undefined) =>
    (field?.value ?? '')
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
  return {
    recipientSlackUser: s[F.recipient][F.recipient].selected_user ?? null,
    target: text(s[F.target]?.[F.target]),
    intent: s[F.intent][F.intent].selected_option?.value ?? null,
    summary: text(s[F.summary][F.summary]) ?? '',
    question: text(s[F.question]?.[F.question]),
    description: text(s[F.description]?.[F.description]),
    files: lines(s[F.files]?.[F.files]),
    rationale: text(s[F.rationale]?.[F.rationale]),
    links: lines(s[F.links]?.[F.links]),
  };
}

/**
 * The handoff the form describes, checked with the relay's schemas and intent rules, or the errors per field.
 * `to` is the recipient's handle (the listener maps the selected Slack user to it first).
 */
export function newHandoffFromForm(
  form: NewHandoffForm,
  to: string,
  idempotencyKey: string,
): { handoff: NewHandoff } | { errors: FieldErrors } {
  const errors: FieldErrors = {};
  const intent = intentSchema.safeParse(form.intent);
  if (!intent.success) return { errors: { [F.intent]: 'Choose an intent.' } };

  // Fields the chosen intent does not take: the relay's intent rules refuse them, in its words, on each such field.
  const proposing = intent.data === 'propose_action';
  const actionFields: Field[] = [];
  if (form.description) actionFields.push(F.description);
  if (form.files.length) actionFields.push(F.files);
  if (form.rationale) actionFields.push(F.rationale);
  const action =
    proposing || actionFields.length
      ? { description: form.description ?? '', target_files: form.files, rationale: form.rationale ?? '' }
      : undefined;
  for (const problem of intentProblems({ intent: intent.data, question: form.question, proposed_action: action })) {
    for (const field of problem.field === 'question' ? [F.question] : actionFields)
      errors[field] = `${problem.message}.`;
  }
  // The form also asks a question of "Ask a question" (the relay does not), and names an empty action field itself.
  if (intent.data === 'ask_question' && !form.question)
    errors[F.question] = 'A question is required when the intent is "Ask a question".';
  if (proposing) {
    if (!form.description) errors[F.description] = 'Describe the proposed action.';
    if (!form.rationale) errors[F.rationale] = 'Say why the action is needed.';
  }

  const artifacts: Artifact[] = [];
  form.links.forEach((url, i) => {
    const link = artifactSchema.safeParse({ type: 'link', url });
    if (link.success) artifacts.push(link.data);
    else
      errors[F.links] ??=
        `Line ${i + 1}: ${link.error.issues[0]?.message ?? 'not a link'} (got "${url.slice(0, 80)}").`;
  });
  if (artifacts.length > LIMITS.artifacts) errors[F.links] ??= `At most ${LIMITS.artifacts} links.`;

  const candidate = {
    to,
    intent: intent.data,
    summary: form.summary,
    ...(form.question && intent.data === 'ask_question' ? { question: form.question } : {}),
    ...(proposing ? { proposed_action: action } : {}),
    artifacts,
    idempotency_key: idempotencyKey,
  };
  const parsed = newHandoffSchema.safeParse(candidate);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const field = fieldOf(issue.path);
      const where = field === F.files && typeof issue.path[2] === 'number' ? `Line ${issue.path[2] + 1}: ` : '';
      errors[field] ??= `${where}${sentence(issue.message)}`;
    }
  }
  if (Object.keys(errors).length || !parsed.success) return { errors };
  return { handoff: parsed.data };
}

function fieldOf(path: readonly PropertyKey[]): Field {
  const [head, sub] = path;
  if (head === 'proposed_action') {
    if (sub === 'target_files') return F.files;
    if (sub === 'rationale') return F.rationale;
    return F.description;
  }
  if (head === 'artifacts') return F.links;
  if (head === 'question') return F.question;
  if (head === 'to') return F.recipient;
  return F.summary;
}

function sentence(message: string): string {
  const text = /^Too big: expected string to have <=(\d+) characters$/.exec(message);
  const body = text ? `must be at most ${text[1]} characters` : message;
  return `${body.charAt(0).toUpperCase()}${body.slice(1)}${body.endsWith('.') ? '' : '.'}`;
}
