// The inbox page (GET /inbox/:thread_id): the whole thread, read-only, for the participant a signed link names.
import escapeHtml from 'escape-html';
import { extraFieldsText, inlineContractText, lineRangeText, otherArtifactText } from '../domain/artifact-text';
import { isKnownArtifact, type Artifact, type KnownArtifact } from '../domain/schemas';
import type { MessageView, ThreadView } from '../service/wire-views';
import { diffBox, time } from './web-inbox-pages';

// Everything a teammate wrote is escaped; the page runs no script and links out with no referrer. Text wraps; diffs
// scroll in their own box with line numbers (web-inbox-pages.ts draws them); times are <time> in UTC.

const STYLE = `body{font-family:system-ui,sans-serif;max-width:52em;margin:2em auto;padding:0 1em;line-height:1.45;color:#1d1d1f;overflow-wrap:anywhere}
pre{background:#f5f5f7;padding:.75em;white-space:pre-wrap;overflow-wrap:anywhere;font-size:.85em}
.diff{overflow-x:auto;background:#f5f5f7;font:12.5px/1.45 ui-monospace,Menlo,Consolas,monospace}.diff table{border-collapse:collapse;min-width:100%}
.diff td{padding:0 .8em;white-space:pre;vertical-align:top}.diff td.n{color:#6e6e73;text-align:right;border-right:1px solid #d2d2d7}
.diff tr.add td.l{background:#e6ffec}.diff tr.del td.l{background:#ffebe9}.diff tr.hunk td.l{color:#0550ae}
.meta{color:#6e6e73;font-size:.9em}.card{border:1px solid #d2d2d7;border-radius:8px;padding:1em;margin:1em 0}
.status{display:inline-block;padding:.1em .6em;border-radius:1em;background:#e8f0fe;font-weight:600}
.teammate{border-left:3px solid #ffb020;padding-left:.75em}`;

const INTENT: Record<ThreadView['intent'], string> = {
  inform: 'For your information',
  ask_question: 'Asks a question',
  propose_action: 'Proposes an action',
};

const h = (text: string | null | undefined): string => escapeHtml(text ?? '');

function page(title: string, body: string): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
    `<meta name="referrer" content="no-referrer"><title>${h(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>`
  );
}

function link(url: string, text?: string): string {
  // Only web links become anchors; anything else (javascript:, data:) stays visible text.
  if (!/^https?:\/\//i.test(url)) return `<code>${h(url)}</code>`;
  return `<a href="${h(url)}" rel="noopener noreferrer nofollow">${h(text ?? url)}</a>`;
}

function artifact(a: Artifact): string {
  if (!isKnownArtifact(a)) return `<h4>Artifact <code>${h(a.type)}</code></h4><pre>${h(otherArtifactText(a))}</pre>`;
  const extras = extraFieldsText(a);
  return knownArtifact(a) + (extras === null ? '' : `<p class="meta">Other fields:</p><pre>${h(extras)}</pre>`);
}

function knownArtifact(a: KnownArtifact): string {
  switch (a.type) {
    case 'file_diff':
      return `<h4>Diff <code>${h(a.path)}</code></h4>${diffBox(a.diff, `Diff of ${a.path}`)}`;
    case 'file_ref':
      return `<p>File <code>${h(a.path)}</code>${a.lines ? ` lines ${h(lineRangeText(a.lines))}` : ''}${a.git_sha ? ` at <code>${h(a.git_sha)}</code>` : ''}</p>`;
    case 'test_command':
      return `<p>Test command${a.cwd ? ` in <code>${h(a.cwd)}</code>` : ''} (shown, never run by the relay):</p><pre>${h(a.command)}</pre>`;
    case 'api_contract':
      return `<p>API contract${a.schema_url ? ` ${link(a.schema_url)}` : ''}</p>${a.inline === undefined || a.inline === null ? '' : `<pre>${h(inlineContractText(a.inline))}</pre>`}`;
    case 'link':
      return `<p>${link(a.url, a.title)}</p>`;
  }
}

function artifacts(list: Artifact[]): string {
  return list.length === 0 ? '' : list.map(artifact).join('');
}

function message(m: MessageView, thread: ThreadView): string {
  const author = m.from === thread.sender.handle ? thread.sender : thread.recipient;
  return (
    `<div class="card teammate"><p class="meta">#${m.sequence_no} · ${h(author.name)} (${h(m.from)}) via ${h(m.via)} · ${time(m.created_at)}</p>` +
    `<pre>${h(m.body)}</pre>${artifacts(m.artifacts)}</div>`
  );
}

/** The whole thread for one of its participants. */
export function inboxPage(thread: ThreadView, viewer: string): string {
  const { sender, recipient } = thread;
  const parts: string[] = [
    `<p class="meta">handoff-relay · thread <code>${h(thread.thread_id)}</code> · you are ${h(viewer)}</p>`,
    `<h1>${h(sender.name)} (${h(sender.handle)}) → ${h(recipient.name)} (${h(recipient.handle)})</h1>`,
    `<p><span class="status">${h(thread.status)}</span>${thread.answered_at ? ` · <span class="status">answered</span> by ${h(recipient.handle)} (message #${h(String(thread.answer_sequence_no ?? ''))}) · ${time(thread.answered_at)}` : ''} · ${h(INTENT[thread.intent])} · sent ${time(thread.created_at)}</p>`,
    `<p class="meta">Written by ${h(sender.handle)}: read it as their words, not as instructions.</p>`,
    `<div class="card teammate"><h2>Summary</h2><pre>${h(thread.summary)}</pre>`,
  ];
  if (thread.question) parts.push(`<h3>Question</h3><pre>${h(thread.question)}</pre>`);
  const action = thread.proposed_action;
  if (action) {
    parts.push(`<h3>Proposed action</h3><pre>${h(action.description)}</pre>`);
    if (action.target_files.length > 0)
      parts.push(`<p>Target files: ${action.target_files.map((f) => `<code>${h(f)}</code>`).join(', ')}</p>`);
    if (action.rationale) parts.push(`<p>Rationale:</p><pre>${h(action.rationale)}</pre>`);
    if (action.suggested_diff) parts.push(`<p>Suggested diff:</p>${diffBox(action.suggested_diff, 'Suggested diff')}`);
  }
  parts.push(artifacts(thread.artifacts), '</div>');
  if (thread.messages.length > 0) parts.push('<h2>Messages</h2>', ...thread.messages.map((m) => message(m, thread)));
  if (thread.completed_summary !== null || thread.completion_artifacts.length > 0) {
    parts.push(
      `<div class="card teammate"><h2>Result</h2><pre>${h(thread.completed_summary)}</pre>${artifacts(thread.completion_artifacts)}</div>`,
    );
  }
  if (thread.decline_reason)
    parts.push(`<div class="card teammate"><h2>Declined</h2><pre>${h(thread.decline_reason)}</pre></div>`);
  parts.push(
    '<h2>History</h2><ul>',
    ...thread.status_history.map((s) => `<li>${h(s.status)} by ${h(s.by)} via ${h(s.via)} · ${time(s.at)}</li>`),
    '</ul>',
    `<p class="meta">Act on it in the <a href="/inbox/${h(thread.thread_id)}">web inbox</a> (sign in with <code>handoff-relay open</code> or "Open web inbox" in Slack), from the Slack DM, or from your agent with the MCP tools (thread_id <code>${h(thread.thread_id)}</code>).</p>`,
  );
  return page(`Handoff from ${sender.name}: ${thread.summary.slice(0, 80)}`, parts.join(''));
}

/** What an unsigned or unknown link shows: where to read the thread instead. */
export function inboxHelpPage(threadId: string, reason: string): string {
  return page(
    'Handoff',
    `<h1>Handoff${threadId ? ` <code>${h(threadId)}</code>` : 's'}</h1><p>${h(reason)}</p>` +
      `<p>Open the link from your Slack DM or your agent's answer, or read the thread with the MCP tool <code>view_thread</code>.</p>` +
      `<p>Or sign in to the web inbox with a one-time link (<code>handoff-relay open</code>, or "Open web inbox" in Slack) and open this page again.</p>`,
  );
}
