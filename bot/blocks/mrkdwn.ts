// Slack text helpers: escaping teammate text so it cannot inject mentions, links or formatting.

/** Escapes &, < and > as Slack requires, so `<!channel>` or `<https://x|y>` shows as text. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Cuts text to at most `max` characters, marking the cut. */
export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

/** Cuts on whole lines so a diff never ends mid-line; returns the kept text and whether anything was cut. */
export function cutOnLines(text: string, max: number): { text: string; cut: boolean } {
  if (text.length <= max) return { text, cut: false };
  const head = text.slice(0, max);
  const lastNewline = head.lastIndexOf('\n');
  return { text: lastNewline > 0 ? head.slice(0, lastNewline) : head, cut: true };
}

/** Code inside a fenced block: escaped, and triple backticks broken so the fence cannot be closed early. */
export function codeBlock(text: string): string {
  return '```' + escapeMrkdwn(text).replace(/```/g, '`\u200b``') + '```';
}

/** Slack's date formatting with a plain fallback. */
export function slackDate(date: Date): string {
  const unix = Math.floor(date.getTime() / 1000);
  return `<!date^${unix}^{date_short_pretty} at {time}|${date.toISOString()}>`;
}

/** A URL inside `<url|label>`: characters that would end the link are percent-encoded. */
export function linkUrl(url: string): string {
  return url.replace(/[<>|\s]/g, (c) => encodeURIComponent(c));
}
