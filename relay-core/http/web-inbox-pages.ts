// The web inbox's pages (routes in web-inbox-routes.ts): server-rendered HTML, every teammate's word escaped and
// marked as theirs, times as <time> the script shows in the reader's zone, every form carrying the session's token.
import escapeHtml from 'escape-html';
import { extraFieldsText, inlineContractText, lineRangeText, otherArtifactText } from '../domain/artifact-text';
import {
  isKnownArtifact,
  THREAD_STATUSES,
  type Artifact,
  type KnownArtifact,
  type ThreadStatus,
} from '../domain/schemas';
import type { ApprovalView, ListItem, MessageView, ThreadView } from '../service/wire-views';
import type { SessionListing } from '../service/web-sessions';

const h = (text: string | null | undefined): string => escapeHtml(text ?? '');

const INTENT: Record<ThreadView['intent'], string> = {
  inform: 'For your information',
  ask_question: 'Asks a question',
  propose_action: 'Proposes an action',
};

/** What each status means, after its badge (`pending` is said for its reader instead: statusWords). */
const STATUS_WORDS: Record<ThreadStatus, string> = {
  pending: 'waiting for the recipient to accept or decline',
  accepted: 'accepted',
  completed: 'completed',
  declined: 'declined',
  cancelled: 'cancelled',
  unclaimed: 'waiting for someone to claim it',
  awaiting_approval: 'waiting for approval',
  rejected: 'rejected',
  expired: 'expired',
};

/** Who is signed in, for the header and every form. */
export interface PageViewer {
  handle: string;
  name: string;
  csrf: string;
}

export type ListName = 'waiting' | 'received' | 'sent' | 'claimable' | 'approvals';

const LIST_TITLES: Record<ListName, string> = {
  waiting: 'Waiting for me',
  received: 'Received',
  sent: 'Sent by me',
  claimable: 'Routed to me',
  approvals: 'Approvals for me',
};

/** Lists count their threads no further than this (one cheap query however full the inbox): past it, "99+". */
export const COUNT_UP_TO = 100;

/** A list's count as shown: "99+" once it reached COUNT_UP_TO. */
export function countText(count: number): string {
  return count >= COUNT_UP_TO ? `${COUNT_UP_TO - 1}+` : String(count);
}

export function time(iso: string | null | undefined): string {
  if (!iso) return '';
  return `<time datetime="${h(iso)}" title="${h(iso)}">${h(iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC'))}</time>`;
}

export function csrfField(viewer: PageViewer): string {
  return `<input type="hidden" name="csrf" value="${h(viewer.csrf)}">`;
}

function badge(status: string): string {
  return `<span class="badge ${h(status)}">${h(status.replace('_', ' '))}</span>`;
}

interface Layout {
  title: string;
  viewer?: PageViewer;
  /** The nav entry this page is. */
  current?: ListName | 'sessions';
  counts?: Partial<Record<ListName, number>>;
  /** Live updates: a thread id (that thread's page) or 'all' (a list). */
  watch?: string;
}

export function layout(view: Layout, body: string): string {
  const nav = view.viewer
    ? `<nav id="nav" data-live="nav" aria-label="Inbox">${(
        ['waiting', 'sent', 'received', 'claimable', 'approvals'] as const
      )
        .map((name) => {
          const count = view.counts?.[name];
          return `<a href="/inbox?list=${name}"${view.current === name ? ' aria-current="page"' : ''}>${h(LIST_TITLES[name])}${count ? ` <span class="count" aria-label="${countText(count)} ${count === 1 ? 'handoff' : 'handoffs'}">${countText(count)}</span>` : ''}</a>`;
        })
        .join('')}<a href="/inbox/sessions"${view.current === 'sessions' ? ' aria-current="page"' : ''}>Sessions</a>` +
      `<form method="post" action="/inbox/sign-out">${csrfField(view.viewer)}<button class="link" type="submit">Sign out ${h(view.viewer.handle)}</button></form></nav>`
    : '';
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<meta name="referrer" content="same-origin"><title>${h(view.title)} · handoff-relay</title>` +
    `<link rel="stylesheet" href="/inbox/app.css"><script src="/inbox/app.js" defer></script></head>` +
    `<body${view.watch ? ` data-watch="${h(view.watch)}"` : ''}><a class="skip" href="#main">Skip to content</a><header class="top"><a class="brand" href="/inbox">handoff-relay inbox</a>${nav}</header>` +
    `<main id="main">${body}</main></body></html>`
  );
}

/** A page that only explains (not signed in, a used link, a missing thread). */
/** `after`: the relay's own markup (never a teammate's words), such as SLACK_SIGN_IN_BUTTON. */
export function messagePage(title: string, paragraphs: string[], viewer?: PageViewer, after = ''): string {
  return layout({ title, viewer }, `<h1>${h(title)}</h1>${paragraphs.map((p) => `<p>${h(p)}</p>`).join('')}${after}`);
}

/** Offered when the relay has the Slack app's client id and secret (docs/web-inbox.md#sign-in-with-slack). */
export const SLACK_SIGN_IN_BUTTON =
  '<p><a class="button" href="/inbox/slack/sign-in">Sign in with Slack</a> as the teammate linked to your Slack account.</p>';

export const HOW_TO_SIGN_IN = [
  'Sign in with a one-time link: run `handoff-relay open` (with your RELAY_API_KEY), or press "Open web inbox" in your handoff-relay DM or App Home in Slack.',
];

export function signInPage(handle: string, token: string): string {
  return layout(
    { title: 'Sign in' },
    `<h1>Sign in to your handoff inbox</h1><div class="card"><p>This one-time link signs this browser in as <strong>${h(handle)}</strong>.</p>` +
      `<form method="post" action="/inbox/sign-in"><input type="hidden" name="token" value="${h(token)}">` +
      `<button type="submit">Sign in as ${h(handle)}</button></form>` +
      `<p class="meta">The link works once and for ten minutes. Not you, or did not ask for it? Close this page.</p></div>`,
  );
}

export function notFoundPage(viewer?: PageViewer): string {
  return messagePage(
    'No such handoff',
    ['There is no handoff here that you can see. It may be someone else’s, or the link may be mistyped.'],
    viewer,
  );
}

// ---- lists

export interface ListPageView {
  viewer: PageViewer;
  list: ListName;
  status?: ThreadStatus;
  /** Per status, how many of this list's party there are (the filter chips). */
  statusCounts: Partial<Record<ThreadStatus, number>>;
  counts: Partial<Record<ListName, number>>;
  items: ListItem[];
  approvals: ApprovalView[];
  nextCursor: string | null;
  /** The statuses this list may be narrowed to. */
  statuses: readonly ThreadStatus[];
  /** The list's filters (each, or both together): an intent, the teammate on the other side. */
  intent?: ThreadView['intent'];
  other?: string;
  /** The words searched for: the page lists the matches, newest first, without per-status counts. */
  search?: string;
}

/** The intent / teammate filter of a thread list (a GET form: the filtered list is a link like any other). */
function filterForm(view: ListPageView): string {
  const options = (Object.keys(INTENT) as Array<ThreadView['intent']>)
    .map((i) => `<option value="${i}"${view.intent === i ? ' selected' : ''}>${h(INTENT[i])}</option>`)
    .join('');
  const who = view.list === 'sent' ? 'Sent to (handle)' : 'From (handle)';
  return (
    `<form class="filter" method="get" action="/inbox" aria-label="Filter by intent and teammate"><input type="hidden" name="list" value="${view.list}">` +
    `<label for="filter-intent">Intent</label><select id="filter-intent" name="intent"><option value="">Any</option>${options}</select>` +
    `<label for="filter-with">${h(who)}</label><input type="text" id="filter-with" name="with" value="${h(view.other ?? '')}" placeholder="alice@acme" maxlength="200">` +
    (view.search ? `<input type="hidden" name="q" value="${h(view.search)}">` : '') +
    `<button type="submit" class="secondary">Filter</button>` +
    (view.intent || view.other ? ` <a href="/inbox?list=${view.list}">Clear</a>` : '') +
    `<p class="meta">An intent, a teammate, or both.</p></form>`
  );
}

/** The text search of a thread list (a GET form, keeping the list's filters): its words in every summary and message. */
function searchForm(view: ListPageView): string {
  return (
    `<form class="filter" role="search" method="get" action="/inbox"><input type="hidden" name="list" value="${view.list}">` +
    (view.intent ? `<input type="hidden" name="intent" value="${h(view.intent)}">` : '') +
    (view.other ? `<input type="hidden" name="with" value="${h(view.other)}">` : '') +
    `<label for="search-q">Search</label><input type="search" id="search-q" name="q" value="${h(view.search ?? '')}" placeholder="words in a summary or message" maxlength="500">` +
    `<button type="submit" class="secondary">Search</button>` +
    (view.search
      ? ` <a href="/inbox?list=${view.list}${view.intent ? `&amp;intent=${view.intent}` : ''}${view.other ? `&amp;with=${encodeURIComponent(view.other)}` : ''}">Clear search</a>`
      : '') +
    `</form>`
  );
}

function listEntry(item: ListItem, viewer: PageViewer): string {
  const mine = item.sender.handle === viewer.handle;
  const other = mine ? item.recipient : item.sender;
  return (
    `<li><div>${badge(item.status)} <a class="title" href="/inbox/${h(item.thread_id)}">${h(item.summary_preview)}</a></div>` +
    `<div class="meta">${mine ? 'to' : 'from'} ${h(other.name)} (${h(other.handle)}) · ${h(INTENT[item.intent])} · sent ${time(item.created_at)}` +
    `${item.unread_messages ? ` · <strong>${item.unread_messages} new ${item.unread_messages === 1 ? 'message' : 'messages'}</strong>` : ''}</div></li>`
  );
}

function approvalEntry(a: ApprovalView, viewer: PageViewer): string {
  return (
    `<li><div>${badge(a.status)} <a class="title" href="/inbox/${h(a.thread_id)}">${h(a.actor)} asks to ${h(a.action)}</a></div>` +
    `<div class="meta">rule ${h(a.rule_id)} · asked ${time(a.created_at)} · decide by ${time(a.deadline)} · ${a.approved_by.length} of ${a.quorum} approved</div>` +
    approvalForms(a, viewer) +
    `</li>`
  );
}

export function approvalForms(a: ApprovalView, viewer: PageViewer): string {
  const id = h(a.approval_id);
  return (
    `<div class="actions"><form class="inline" method="post" action="/inbox/approvals/${id}/approve">${csrfField(viewer)}` +
    `<input type="hidden" name="thread" value="${h(a.thread_id)}"><button type="submit">Approve</button></form>` +
    `<form method="post" action="/inbox/approvals/${id}/reject">${csrfField(viewer)}<input type="hidden" name="thread" value="${h(a.thread_id)}">` +
    `<label for="reject-${id}">Reason to reject</label><input type="text" id="reject-${id}" name="reason" maxlength="2000">` +
    `<button class="danger" type="submit">Reject</button></form></div>`
  );
}

export function listPage(view: ListPageView): string {
  const title = LIST_TITLES[view.list];
  const base =
    `/inbox?list=${view.list}` +
    (view.intent ? `&amp;intent=${view.intent}` : '') +
    (view.other ? `&amp;with=${encodeURIComponent(view.other)}` : '') +
    (view.search ? `&amp;q=${encodeURIComponent(view.search)}` : '');
  // A search shows every status of the list uncounted (counting would read every match).
  const chips = view.search
    ? view.statuses
        .filter((s) => s !== 'unclaimed')
        .map(
          (s) =>
            `<a href="${base}&amp;status=${s}"${view.status === s ? ' aria-current="true"' : ''}>${h(s.replace('_', ' '))}</a>`,
        )
    : view.statuses
        .filter((s) => view.statusCounts[s])
        .map(
          (s) =>
            `<a href="${base}&amp;status=${s}"${view.status === s ? ' aria-current="true"' : ''}>${h(s.replace('_', ' '))} (${countText(view.statusCounts[s]!)})</a>`,
        );
  const filters =
    view.list === 'approvals' || view.list === 'claimable'
      ? ''
      : `${searchForm(view)}${filterForm(view)}<nav class="filters" aria-label="Filter by status"><a href="${base}"${view.status ? '' : ' aria-current="true"'}>All</a>${chips.join('')}</nav>`;
  const entries =
    view.list === 'approvals'
      ? view.approvals.map((a) => approvalEntry(a, view.viewer))
      : view.items.map((item) => listEntry(item, view.viewer));
  const empty = {
    waiting: 'Nothing is waiting for you. Handoffs sent to you appear here until you complete or decline them.',
    received: 'No handoffs were sent to you yet.',
    sent: 'You have not sent any handoffs.',
    claimable: 'No routed handoff is waiting for someone like you to claim it.',
    approvals: 'No approval is waiting for your decision.',
  }[view.list];
  const nothing = view.search
    ? `Nothing in this list holds every word of “${view.search}”. Search matches whole words (“page” does not find “pages”), in any case and with or without accents.`
    : empty;
  const pager = view.nextCursor
    ? `<div class="pager"><a href="${base}${view.status ? `&amp;status=${view.status}` : ''}&amp;cursor=${encodeURIComponent(view.nextCursor)}">Next page →</a></div>`
    : '';
  return layout(
    { title, viewer: view.viewer, current: view.list, counts: view.counts, watch: 'all' },
    `<div id="list" data-live="list"><h1>${h(title)}${view.list === 'waiting' && !view.search ? ' <span class="meta">(oldest first)</span>' : ''}</h1>${filters}` +
      (view.search ? `<p class="meta">Search results for “${h(view.search)}”, newest first.</p>` : '') +
      (entries.length ? `<ul class="threads">${entries.join('')}</ul>` : `<p class="card">${h(nothing)}</p>`) +
      `${pager}</div><p class="meta" role="status" id="live-status" aria-live="polite"></p>`,
  );
}

// ---- the thread

function link(url: string, text?: string): string {
  if (!/^https?:\/\//i.test(url)) return `<code>${h(url)}</code>`;
  return `<a href="${h(url)}" rel="noopener noreferrer nofollow" target="_blank">${h(text ?? url)}</a>`;
}

/** A diff in its own scrolling box, one row per line with its number. */
export function diffBox(diff: string, label: string): string {
  const rows = diff
    .split('\n')
    .map((line, i) => {
      const kind = line.startsWith('@@')
        ? 'hunk'
        : line.startsWith('+') && !line.startsWith('+++')
          ? 'add'
          : line.startsWith('-') && !line.startsWith('---')
            ? 'del'
            : '';
      return `<tr${kind ? ` class="${kind}"` : ''}><td class="n">${i + 1}</td><td class="l">${h(line)}</td></tr>`;
    })
    .join('');
  return `<div class="diff" role="region" aria-label="${h(label)}" tabindex="0"><table>${rows}</table></div>`;
}

function artifact(a: Artifact): string {
  if (!isKnownArtifact(a))
    return `<p>Artifact <code>${h(a.type)}</code></p><pre class="code">${h(otherArtifactText(a))}</pre>`;
  const extras = extraFieldsText(a);
  return (
    knownArtifact(a) + (extras === null ? '' : `<p class="meta">Other fields:</p><pre class="code">${h(extras)}</pre>`)
  );
}

function knownArtifact(a: KnownArtifact): string {
  switch (a.type) {
    case 'file_diff':
      return `<p>Diff of <code>${h(a.path)}</code></p>${diffBox(a.diff, `Diff of ${a.path}`)}`;
    case 'file_ref':
      return `<p>File <code>${h(a.path)}</code>${a.lines ? ` lines ${h(lineRangeText(a.lines))}` : ''}${a.git_sha ? ` at <code>${h(a.git_sha)}</code>` : ''}</p>`;
    case 'test_command':
      return `<p>Test command${a.cwd ? ` in <code>${h(a.cwd)}</code>` : ''} (shown, never run by the relay):</p><pre class="code">${h(a.command)}</pre>`;
    case 'api_contract':
      return `<p>API contract${a.schema_url ? ` ${link(a.schema_url)}` : ''}</p>${a.inline === undefined || a.inline === null ? '' : `<pre class="code">${h(inlineContractText(a.inline))}</pre>`}`;
    case 'link':
      return `<p>${link(a.url, a.title)}</p>`;
  }
}

function words(author: string, text: string | null): string {
  return `<p class="said">${h(author)} wrote</p><div class="text">${h(text)}</div>`;
}

function message(m: MessageView, thread: ThreadView): string {
  const author = m.from === thread.sender.handle ? thread.sender : thread.recipient;
  return (
    `<article class="card teammate" aria-label="Message ${m.sequence_no} from ${h(author.handle)}"><p class="meta">#${m.sequence_no} · ${h(author.name)} (${h(m.from)}) via ${h(m.via)} · ${time(m.created_at)}</p>` +
    `${words(author.handle, m.body)}${m.artifacts.map(artifact).join('')}</article>`
  );
}

/** What the viewer may do here, as forms (the use cases decide; these only offer what can apply). */
export interface ThreadActions {
  accept: boolean;
  decline: boolean;
  complete: boolean;
  reply: boolean;
  cancel: boolean;
  claim: boolean;
  /** Snooze the reminders (recipient, pending): 1 hour, tomorrow morning, next week, as Slack's Snooze buttons. */
  snooze: boolean;
  /** Hand to my agent (accepting first when pending): the recipient's runner takes it (docs/agent-runner.md). */
  agent: boolean;
  /** Pending approvals this viewer may decide. */
  approvals: ApprovalView[];
}

export interface ThreadPageView {
  viewer: PageViewer;
  thread: ThreadView;
  actions: ThreadActions;
  /** The thread's approvals the viewer may see. */
  approvals: ApprovalView[];
  counts: Partial<Record<ListName, number>>;
  /** When the recipient snoozed the reminders until (still ahead), or null. */
  snoozedUntil?: Date | null;
  /** What the last action did, or why it was refused (in words). */
  notice?: { text: string; refused: boolean };
  /** What the refused form held, so nothing typed is lost. */
  kept?: Record<string, string>;
  /** A fresh idempotency key for each form of this render. */
  formKey: string;
}

function form(
  view: ThreadPageView,
  action: string,
  body: string,
  button: string,
  opts: { inline?: boolean; kind?: string; bare?: boolean } = {},
): string {
  return (
    `<form${opts.inline ? ` class="inline${opts.bare ? ' bare' : ''}"` : ''} method="post" action="/inbox/${h(view.thread.thread_id)}/${action}">${csrfField(view.viewer)}` +
    `<input type="hidden" name="key" value="${h(view.formKey)}-${action}"><input type="hidden" name="shown" value="${h(view.thread.status)}">` +
    `${body}${button ? `<button type="submit"${opts.kind ? ` class="${opts.kind}"` : ''}>${h(button)}</button>` : ''}</form>`
  );
}

function field(view: ThreadPageView, action: string, name: string, label: string, multiline = true, hint = ''): string {
  const id = `${action}-${name}`;
  const kept = view.kept?.[id] ?? '';
  return (
    `<label for="${id}">${h(label)}</label>${hint ? `<p class="meta" id="${id}-hint">${h(hint)}</p>` : ''}` +
    (multiline
      ? `<textarea id="${id}" name="${name}"${hint ? ` aria-describedby="${id}-hint"` : ''}>${h(kept)}</textarea>`
      : `<input type="text" id="${id}" name="${name}" value="${h(kept)}"${hint ? ` aria-describedby="${id}-hint"` : ''}>`)
  );
}

function actionForms(view: ThreadPageView): string {
  const a = view.actions;
  const parts: string[] = [];
  if (a.claim)
    parts.push(
      form(view, 'claim', '<p>This handoff was routed to a group you are in.</p>', 'Claim it', { inline: true }),
    );
  if (a.accept || a.agent) {
    // Accept and Hand to my agent side by side: two forms in one row.
    const accept = a.accept ? form(view, 'accept', '', 'Accept', { inline: true, bare: true }) : '';
    const agent = a.agent
      ? form(view, 'agent', '', a.accept ? 'Accept and hand to my agent' : 'Hand to my agent', {
          inline: true,
          bare: true,
          kind: 'secondary',
        })
      : '';
    parts.push(`<div class="row">${accept}${agent}</div>`);
  }
  if (a.snooze)
    parts.push(
      form(
        view,
        'snooze',
        `<fieldset class="row"><legend>Snooze the reminders until</legend>` +
          `<button type="submit" name="choice" value="1h" class="secondary">1 hour from now</button>` +
          `<button type="submit" name="choice" value="tomorrow" class="secondary">Tomorrow morning</button>` +
          `<button type="submit" name="choice" value="week" class="secondary">Next week</button></fieldset>`,
        '',
      ),
    );
  if (a.reply)
    parts.push(form(view, 'reply', field(view, 'reply', 'body', 'Reply'), 'Send reply', { kind: 'secondary' }));
  if (a.complete)
    parts.push(
      form(
        view,
        'complete',
        field(view, 'complete', 'summary', 'What was done') +
          field(
            view,
            'complete',
            'links',
            'Links (optional)',
            true,
            'One web link per line: the PR, the commit, the docs.',
          ),
        'Complete',
      ),
    );
  if (a.decline)
    parts.push(form(view, 'decline', field(view, 'decline', 'reason', 'Why decline'), 'Decline', { kind: 'danger' }));
  if (a.cancel)
    parts.push(
      form(view, 'cancel', field(view, 'cancel', 'reason', 'Reason (optional)', false), 'Cancel this handoff', {
        kind: 'danger',
      }),
    );
  for (const approval of a.approvals)
    parts.push(
      `<div class="card"><p><strong>${h(approval.actor)}</strong> asks to <strong>${h(approval.action)}</strong> (rule ${h(approval.rule_id)}); you are an approver.</p>${approvalForms(approval, view.viewer)}</div>`,
    );
  if (parts.length === 0) return '<p class="meta">Nothing for you to do here now.</p>';
  return `<div class="actions">${parts.join('')}</div>`;
}

/**
 * The words after a thread's badge, with their separator: whom a pending handoff waits for (you, or the recipient by
 * name; a question's answer does not end the wait, its accept or decline does), nothing where the badge says it all.
 */
function statusWords(thread: ThreadPageView['thread'], viewer: PageViewer): string {
  if (thread.status === 'pending') {
    const who = thread.recipient.handle === viewer.handle ? 'you' : thread.recipient.name;
    return `waiting for ${h(who)} to accept or decline · `;
  }
  const words = STATUS_WORDS[thread.status];
  return words === thread.status ? '' : `${h(words)} · `;
}

export function threadPage(view: ThreadPageView): string {
  const { thread, viewer } = view;
  const { sender, recipient } = thread;
  const parts: string[] = [
    `<p class="meta">Handoff from ${h(sender.name)} (${h(sender.handle)}) to ${h(recipient.name)} (${h(recipient.handle)})</p>`,
    `<h1>${h(thread.summary.length > 140 ? `${thread.summary.slice(0, 139)}…` : thread.summary)}</h1>`,
    `<p>${badge(thread.status)} <span class="meta">${statusWords(thread, viewer)}${h(INTENT[thread.intent])} · sent ${time(thread.created_at)}${thread.answered_at ? ` · answered by ${h(recipient.handle)} ${time(thread.answered_at)}` : ''}</span></p>`,
    view.snoozedUntil
      ? `<p class="snoozed">Reminders snoozed: the next one comes ${time(view.snoozedUntil.toISOString())}.</p>`
      : '',
    `<section class="card teammate" aria-label="The handoff">${words(sender.handle, thread.summary)}`,
  ];
  if (thread.question) parts.push(`<h2>Question</h2>${words(sender.handle, thread.question)}`);
  const action = thread.proposed_action;
  if (action) {
    parts.push(`<h2>Proposed action</h2>${words(sender.handle, action.description)}`);
    if (action.target_files.length > 0)
      parts.push(`<p>Target files: ${action.target_files.map((f) => `<code>${h(f)}</code>`).join(', ')}</p>`);
    if (action.rationale) parts.push(`<p>Rationale:</p><div class="text">${h(action.rationale)}</div>`);
    if (action.suggested_diff) parts.push(`<p>Suggested diff:</p>${diffBox(action.suggested_diff, 'Suggested diff')}`);
  }
  parts.push(thread.artifacts.map(artifact).join(''), '</section>');
  for (const approval of view.approvals) {
    parts.push(
      `<div class="card"><p>${badge(approval.status)} ${h(approval.actor)} asked to ${h(approval.action)}; ` +
        `${approval.status === 'pending' ? `waiting for approval by ${h(approval.approvers.join(', '))} (${approval.approved_by.length} of ${approval.quorum}), until ${time(approval.deadline)}` : h(approval.outcome?.message ?? approval.status)}</p></div>`,
    );
  }
  if (thread.messages.length > 0)
    parts.push(`<h2>Messages (${thread.messages.length})</h2>`, ...thread.messages.map((m) => message(m, thread)));
  if (thread.completed_summary !== null || thread.completion_artifacts.length > 0)
    parts.push(
      `<section class="card teammate" aria-label="Result"><h2>Result</h2>${words(recipient.handle, thread.completed_summary)}${thread.completion_artifacts.map(artifact).join('')}</section>`,
    );
  if (thread.decline_reason)
    parts.push(
      `<section class="card teammate" aria-label="Declined"><h2>Declined</h2>${words(recipient.handle, thread.decline_reason)}</section>`,
    );
  parts.push(
    '<h2>History</h2><ol class="history">',
    ...thread.status_history.map((s) => `<li>${badge(s.status)} by ${h(s.by)} via ${h(s.via)} · ${time(s.at)}</li>`),
    '</ol>',
  );
  const notice = view.notice
    ? `<div class="notice${view.notice.refused ? ' refused' : ''}" role="${view.notice.refused ? 'alert' : 'status'}">${h(view.notice.text)}</div>`
    : '';
  return layout(
    { title: thread.summary.slice(0, 80), viewer, counts: view.counts, watch: thread.thread_id },
    `${notice}<div id="thread" data-live="thread">${parts.join('')}</div>` +
      `<h2 id="act">Your move</h2><div id="forms" data-live="forms">${actionForms(view)}</div>` +
      `<p class="meta" role="status" id="live-status" aria-live="polite"></p>` +
      `<p class="meta">You are ${h(viewer.handle)}. Teammates’ words are marked “wrote”: read them as theirs, not as instructions. Thread <code>${h(thread.thread_id)}</code>.</p>`,
  );
}

// ---- sessions

export function sessionsPage(
  viewer: PageViewer,
  current: string,
  sessions: SessionListing[],
  now: Date,
  counts: Partial<Record<ListName, number>>,
  notice?: string,
): string {
  const rows = sessions
    .map((s) => {
      const state = s.revoked_at
        ? `signed out ${time(s.revoked_at.toISOString())}`
        : s.expires_at <= now
          ? `expired ${time(s.expires_at.toISOString())}`
          : `active until ${time(s.expires_at.toISOString())}`;
      const open = !s.revoked_at && s.expires_at > now;
      return (
        `<tr><td>${time(s.created_at.toISOString())}${s.public_id === current ? ' <strong>(this browser)</strong>' : ''}</td><td>${h(s.user_agent || 'unknown browser')}</td><td>${state}</td><td>` +
        (open
          ? `<form method="post" action="/inbox/sessions/${h(s.public_id)}/revoke">${csrfField(viewer)}<button class="danger" type="submit" aria-label="Revoke the session signed in ${h(s.created_at.toISOString())}">Revoke</button></form>`
          : '') +
        `</td></tr>`
      );
    })
    .join('');
  return layout(
    { title: 'Sessions', viewer, current: 'sessions', counts },
    `${notice ? `<div class="notice" role="status">${h(notice)}</div>` : ''}<h1>Your sessions</h1>` +
      `<p class="meta">Each browser you signed in with a link. Revoke one you no longer use; it is signed out at its next request.</p>` +
      `<div class="card scroll"><table class="sessions"><thead><tr><th scope="col">Signed in</th><th scope="col">Browser</th><th scope="col">State</th><th scope="col"><span class="meta">Action</span></th></tr></thead><tbody>${rows}</tbody></table></div>`,
  );
}

export { THREAD_STATUSES, LIST_TITLES };
