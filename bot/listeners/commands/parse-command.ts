// What `/handoff <text>` asks for, read from the command text alone (pure; the handlers do the work).
import { HANDLE_PATTERN } from '../../../relay-core/domain/schemas';

/** A Slack user, or a handle or role:/skill:/owner: target as typed (`handle` holds either). */
export type Recipient = { slackUser: string } | { handle: string };

export type HandoffCommand =
  | { kind: 'modal' }
  | { kind: 'help' }
  | { kind: 'inbox' }
  | { kind: 'link'; handle?: string }
  /** `invite [team:acme] [role:x] … [note:…]`: the options' text, read by the invite command. */
  | { kind: 'invite'; options: string }
  /** `join CODE [handle]`; `extra` is the first word past those two (refused, never used). */
  | { kind: 'join'; code?: string; handle?: string; extra?: string }
  /** `channel <target>` binds, `channel unbind <target>` unbinds, `channel list` lists; bare `channel` explains. */
  | { kind: 'channel'; action: 'bind' | 'unbind' | 'list' | 'usage'; target?: string }
  | { kind: 'send'; to: Recipient; text: string }
  /** `@name` as plain text: Slack did not escape the mention, so there is no user id to resolve. */
  | { kind: 'unresolved_mention'; name: string }
  | { kind: 'unknown'; word: string };

/** `<@U123>` or `<@U123|name>`: a mention as Slack sends it when the command escapes channels, users and links. */
const ESCAPED_MENTION = /^<@([UW][A-Z0-9]{2,})(?:\|[^>]*)?>$/;
const TARGET_PREFIX = /^(role|skill|owner):/i;

export function parseHandoffCommand(raw: string): HandoffCommand {
  const text = raw.trim();
  if (text === '') return { kind: 'modal' };
  const [first = '', ...rest] = text.split(/\s+/);
  const tail = text.slice(first.length).trim();
  switch (first.toLowerCase()) {
    case 'help':
      return { kind: 'help' };
    case 'inbox':
      return { kind: 'inbox' };
    case 'link':
      return rest.length ? { kind: 'link', handle: rest[0] } : { kind: 'link' };
    case 'invite':
      return { kind: 'invite', options: slackTextToPlain(tail) };
    case 'join': {
      const [code, handle, extra] = rest;
      return { kind: 'join', ...(code ? { code } : {}), ...(handle ? { handle } : {}), ...(extra ? { extra } : {}) };
    }
    case 'channel': {
      const [verb = '', target] = rest;
      if (verb === '') return { kind: 'channel', action: 'usage' };
      if (verb.toLowerCase() === 'list') return { kind: 'channel', action: 'list' };
      if (verb.toLowerCase() === 'unbind')
        return target ? { kind: 'channel', action: 'unbind', target } : { kind: 'channel', action: 'usage' };
      return { kind: 'channel', action: 'bind', target: verb };
    }
  }
  // role:, skill: and owner: targets (checked by the handoff schema, which says what a malformed one lacks).
  if (TARGET_PREFIX.test(first)) return { kind: 'send', to: { handle: first }, text: slackTextToPlain(tail) };
  const mention = ESCAPED_MENTION.exec(first);
  if (mention) return { kind: 'send', to: { slackUser: mention[1]! }, text: slackTextToPlain(tail) };
  const handle = first.replace(/^@/, '');
  if (HANDLE_PATTERN.test(handle)) return { kind: 'send', to: { handle }, text: slackTextToPlain(tail) };
  if (first.startsWith('@') && first.length > 1) return { kind: 'unresolved_mention', name: first };
  return { kind: 'unknown', word: first };
}

/**
 * Command text as a person typed it: Slack's escaped mentions, channels and links shown as `@name`, `#name` and
 * the URL, and its &amp; &lt; &gt; entities decoded (the DM escapes the summary again when it renders it).
 */
export function slackTextToPlain(text: string): string {
  return text
    .replace(/<@([UW][A-Z0-9]+)(?:\|([^>]*))?>/g, (_m, id: string, name?: string) => `@${name || id}`)
    .replace(/<#(C[A-Z0-9]+)(?:\|([^>]*))?>/g, (_m, id: string, name?: string) => `#${name || id}`)
    .replace(/<!(here|channel|everyone)(?:\|[^>]*)?>/g, '@$1')
    .replace(/<((?:https?|mailto):[^|>]+)(?:\|[^>]*)?>/g, '$1')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}
