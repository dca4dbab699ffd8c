// Slack text helpers for the block builders: escaping teammate text, and cuts that keep it whole.

// Teammate text is escaped so it cannot inject mentions, links or close a code fence; every cut keeps entities,
// surrogate pairs and diff lines whole.

const ELLIPSIS = '…';
/** U+2060 WORD JOINER: invisible, and enough to stop Slack reading `@here` as a broadcast. */
const JOINER = '\u2060';
/** U+200B ZERO WIDTH SPACE: breaks a run of backticks so it cannot open or close a fence. */
const ZWSP = '\u200b';
const BROADCAST = /@(channel|here|everyone)\b/gi;

function escapeChar(c: string): string {
  return c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c;
}

/**
 * Escapes &, < and > as Slack requires, so `<!channel>` or `<https://x|y>` shows as text, and breaks bare
 * `@channel` / `@here` / `@everyone` with an invisible joiner so no setting can turn them into a broadcast, and
 * runs of three backticks with a zero-width space so teammate text cannot open or close a code block.
 */
export function escapeMrkdwn(text: string): string {
  return text
    .replace(/[&<>]/g, escapeChar)
    .replace(BROADCAST, `@${JOINER}$1`)
    .replace(/``(?=`)/g, '``' + ZWSP);
}

/**
 * Teammate text for a plain_text object (headers, button labels, modal titles): Slack shows it as typed, but
 * angle brackets become look-alikes and broadcast words are broken anyway, so no client or later change of
 * text type can turn it into a mention or link. Same length as the input.
 */
export function plainSafe(text: string): string {
  return text.replace(/</g, '‹').replace(/>/g, '›').replace(BROADCAST, `@${JOINER}$1`);
}

/** Where a cut at `index` is safe: never between the halves of a surrogate pair. */
function safeCut(text: string, index: number): number {
  if (index <= 0) return 0;
  if (index >= text.length) return text.length;
  const code = text.charCodeAt(index - 1);
  return code >= 0xd800 && code <= 0xdbff ? index - 1 : index;
}

/** Cuts text to at most `max` characters, marking the cut (and never splitting a surrogate pair). */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 0) return '';
  return `${text.slice(0, safeCut(text, max - 1))}${ELLIPSIS}`;
}

/** Escaped teammate text no longer than `max` characters: cut before escaping, so no entity is split. */
export function escapeWithin(text: string, max: number): { text: string; cut: boolean } {
  const full = escapeMrkdwn(text);
  if (full.length <= max) return { text: full, cut: false };
  let used = 0;
  let end = 0;
  while (end < text.length) {
    const cost = escapeChar(text[end]).length;
    if (used + cost > max - 1) break;
    used += cost;
    end += 1;
  }
  end = safeCut(text, end);
  let escaped = escapeMrkdwn(text.slice(0, end));
  while (escaped.length > max - 1 && end > 0) {
    // Joiners in broadcast words and breaks in backtick runs made it longer: drop as many raw characters.
    end = safeCut(text, end - (escaped.length - (max - 1)));
    escaped = escapeMrkdwn(text.slice(0, end));
  }
  return { text: `${escaped}${ELLIPSIS}`, cut: true };
}

/** Teammate text on one line (names, titles, paths): newlines become spaces, then escaped within `max`. */
export function escapeLine(text: string, max: number): string {
  return escapeWithin(text.replace(/\s*[\r\n]+\s*/g, ' '), max).text;
}

/** Teammate text as inline code: one line, escaped, backticks swapped for a look-alike so the span holds. */
export function inlineCode(text: string, max: number): string {
  return '`' + escapeLine(text.replace(/`/g, 'ˋ'), max - 2) + '`';
}

/** One line of code, escaped, with every run of three backticks broken so it cannot close the fence. */
function codeLine(line: string): string {
  return escapeMrkdwn(line);
}

function fence(body: string): string {
  // A backtick right next to the fence would merge with it; a zero-width space keeps them apart.
  if (body.length === 0) return '```' + ZWSP + '```';
  const start = body.startsWith('`') ? ZWSP : '';
  const end = body.endsWith('`') ? ZWSP : '';
  return '```' + start + body + end + '```';
}

/** Code inside a fenced block: escaped, and triple backticks broken so the fence cannot be closed early. */
export function codeBlock(text: string): string {
  return fence(text.split('\n').map(codeLine).join('\n'));
}

/**
 * A fenced code block of at most `max` characters, cut on whole lines (a single over-long first line is cut
 * with an ellipsis). `cut` says whether anything was left out, so the caller can link to the whole text.
 */
export function fencedLines(
  text: string,
  max: number,
): { text: string; cut: boolean; lines: number; totalLines: number } {
  const lines = text.replace(/\r\n/g, '\n').replace(/\n+$/, '').split('\n');
  const room = max - 8; // the two fences and two possible zero-width spaces
  const kept: string[] = [];
  let used = 0;
  for (const line of lines) {
    const escaped = codeLine(line);
    const cost = escaped.length + (kept.length ? 1 : 0);
    if (used + cost > room) break;
    kept.push(escaped);
    used += cost;
  }
  if (kept.length === 0 && lines.length > 0) {
    kept.push(escapeWithin(lines[0], room).text);
  }
  const cut = kept.length < lines.length || kept[0] !== codeLine(lines[0]);
  return { text: fence(kept.join('\n')), cut, lines: kept.length, totalLines: lines.length };
}

/** Slack's date formatting, with a plain UTC fallback for clients that cannot format it. */
export function slackDate(date: Date): string {
  const unix = Math.floor(date.getTime() / 1000);
  const fallback = `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  return `<!date^${unix}^{date_short_pretty} at {time}|${fallback}>`;
}

/**
 * A URL inside `<url|label>`: characters that would end the link or start the label (`<`, `>`, `|`),
 * whitespace and control characters are percent-encoded, and `&` is escaped as Slack asks.
 */
export function linkUrl(url: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what this percent-encodes
  return url.replace(/[<>|\s\u0000-\u001f\u007f]/g, (c) => encodeURIComponent(c)).replace(/&/g, '&amp;');
}

/** Whether a URL may become a link: only http(s). Anything else is shown as text. */
export function isWebUrl(url: string): boolean {
  return /^https?:\/\/[^\s/]/i.test(url);
}

/** A link with an escaped one-line label; a URL that is not http(s) is shown as escaped text instead. */
export function link(url: string, label: string, labelMax = 300): string {
  // A `|` in the label is harmless to Slack's parser (it splits on the first), but is swapped for a look-alike
  // so no reader of the markup can mistake where the URL ends.
  const text = escapeLine(label.replace(/\|/g, '∣'), labelMax);
  return isWebUrl(url) ? `<${linkUrl(url)}|${text}>` : text;
}

/** The host part of a URL, so a link's label cannot hide where it goes; '' when it does not parse. */
export function urlHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}
