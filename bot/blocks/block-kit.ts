// Small Block Kit builders shared by every message and view: each one keeps its text within Slack's limits.
import { truncate } from './mrkdwn';

export { codeBlock, escapeMrkdwn, linkUrl, slackDate, truncate } from './mrkdwn';

/** Slack's Block Kit limits the builders respect (the fake Slack in scripts/fake-slack/block-limits.ts enforces them). */
export const SLACK_LIMITS = {
  messageBlocks: 50,
  viewBlocks: 100,
  /** Slack refuses a message whose blocks hold about 12k characters of text in total; builders keep a margin. */
  messageTextBudget: 11_500,
  sectionText: 3000,
  contextText: 3000,
  headerText: 150,
  buttonText: 75,
  buttonValue: 2000,
  url: 3000,
  actionsElements: 25,
  contextElements: 10,
  confirmTitle: 100,
  confirmText: 300,
  confirmButton: 30,
  viewTitle: 24,
  viewButton: 24,
  inputLabel: 2000,
  inputHint: 2000,
  placeholder: 150,
  optionText: 75,
  optionValue: 150,
  privateMetadata: 3000,
  /** A top-level `text` Slack keeps whole; notification text is kept much shorter than this. */
  messageText: 40_000,
} as const;

export interface SlackBlock {
  type: string;
  [key: string]: unknown;
}

export interface SlackMessage {
  /** Notification and accessibility fallback: plain, short, meaningful. */
  text: string;
  blocks: SlackBlock[];
}

export interface PlainText {
  type: 'plain_text';
  text: string;
  emoji?: boolean;
}

export interface MrkdwnText {
  type: 'mrkdwn';
  text: string;
  verbatim?: boolean;
}

/** Slack rejects empty text; a missing piece shows as a dash rather than failing the whole message. */
function nonEmpty(text: string): string {
  return text.length > 0 ? text : '–';
}

export function plainText(text: string, max: number): PlainText {
  return { type: 'plain_text', text: nonEmpty(truncate(text, max)), emoji: true };
}

/**
 * mrkdwn the builder composed (teammate parts already escaped). `verbatim: true` stops Slack from turning
 * bare words into mentions, channel links or URLs; explicit `<…>` sequences the builder wrote still work.
 */
export function mrkdwn(text: string, max: number = SLACK_LIMITS.sectionText): MrkdwnText {
  return { type: 'mrkdwn', text: nonEmpty(truncate(text, max)), verbatim: true };
}

export function header(text: string): SlackBlock {
  return { type: 'header', text: plainText(text, SLACK_LIMITS.headerText) };
}

export function section(text: string, blockId?: string): SlackBlock {
  return { type: 'section', ...(blockId ? { block_id: blockId } : {}), text: mrkdwn(text, SLACK_LIMITS.sectionText) };
}

/** A context block of up to 10 mrkdwn elements. */
export function context(...texts: string[]): SlackBlock {
  const elements = texts.slice(0, SLACK_LIMITS.contextElements).map((t) => mrkdwn(t, SLACK_LIMITS.contextText));
  return { type: 'context', elements };
}

export function divider(): SlackBlock {
  return { type: 'divider' };
}

export interface ConfirmDialog {
  title: string;
  text: string;
  confirm: string;
  deny: string;
  style?: 'primary' | 'danger';
}

export function confirmDialog(dialog: ConfirmDialog): Record<string, unknown> {
  return {
    title: plainText(dialog.title, SLACK_LIMITS.confirmTitle),
    text: plainText(dialog.text, SLACK_LIMITS.confirmText),
    confirm: plainText(dialog.confirm, SLACK_LIMITS.confirmButton),
    deny: plainText(dialog.deny, SLACK_LIMITS.confirmButton),
    ...(dialog.style ? { style: dialog.style } : {}),
  };
}

export interface ButtonSpec {
  actionId: string;
  text: string;
  value?: string;
  url?: string;
  style?: 'primary' | 'danger';
  confirm?: ConfirmDialog;
}

/** A button; a value or URL over Slack's limit is a programming error, so it throws rather than cutting. */
export function button(spec: ButtonSpec): SlackBlock {
  if (spec.value !== undefined && spec.value.length > SLACK_LIMITS.buttonValue) {
    throw new Error(
      `button ${spec.actionId}: value is ${spec.value.length} characters, more than ${SLACK_LIMITS.buttonValue}`,
    );
  }
  if (spec.url !== undefined && spec.url.length > SLACK_LIMITS.url) {
    throw new Error(`button ${spec.actionId}: url is ${spec.url.length} characters, more than ${SLACK_LIMITS.url}`);
  }
  return {
    type: 'button',
    action_id: spec.actionId,
    text: plainText(spec.text, SLACK_LIMITS.buttonText),
    ...(spec.style ? { style: spec.style } : {}),
    ...(spec.value !== undefined ? { value: spec.value } : {}),
    ...(spec.url !== undefined ? { url: spec.url } : {}),
    ...(spec.confirm ? { confirm: confirmDialog(spec.confirm) } : {}),
  };
}

export function actions(elements: SlackBlock[], blockId?: string): SlackBlock {
  return {
    type: 'actions',
    ...(blockId ? { block_id: blockId } : {}),
    elements: elements.slice(0, SLACK_LIMITS.actionsElements),
  };
}

/** Characters of text blocks hold, counted the way Slack's total-length limit counts them (every `text` string). */
export function textLength(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((sum: number, v) => sum + textLength(v), 0);
  if (!value || typeof value !== 'object') return 0;
  return Object.entries(value as Record<string, unknown>).reduce(
    (sum, [key, v]) => sum + (key === 'text' && typeof v === 'string' ? v.length : textLength(v)),
    0,
  );
}
