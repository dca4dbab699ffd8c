// The local Slack page (dev only): per person, their DMs, the channels' cards, their App Home, modals and ephemeral
// answers, drawn in the browser from the Block Kit the relay posted to the fake Slack; it polls /api/state.

const STYLE = `body{font-family:system-ui,sans-serif;margin:0;color:#1d1c1d;display:flex;min-height:100vh}
nav{width:15em;background:#3f0e40;color:#fff;padding:1em}nav a{color:#fff;display:block;padding:.3em;text-decoration:none;border-radius:4px}
nav a.on{background:#1164a3}main{flex:1;padding:1em 2em;max-width:52em}.banner{background:#fff4ce;border:1px solid #e0b700;padding:.5em 1em;border-radius:6px}
.msg{border:1px solid #ddd;border-radius:8px;padding:.75em 1em;margin:.75em 0}.msg.reply{margin-left:2em;border-style:dashed}
.meta{color:#616061;font-size:.85em}.context{color:#616061;font-size:.85em;margin:.3em 0}pre{background:#f8f8f8;border:1px solid #ddd;padding:.5em;overflow-x:auto}
code{background:#f8f8f8;padding:0 .2em}.quote{display:inline-block;border-left:4px solid #ddd;padding-left:.6em;color:#454245}button{margin:.25em .4em .25em 0;padding:.35em .9em;border:1px solid #bbb;border-radius:4px;background:#fff;cursor:pointer}
button.primary{background:#007a5a;color:#fff;border-color:#007a5a}button.danger{background:#e01e5a;color:#fff;border-color:#e01e5a}
.modal{position:fixed;inset:0;background:rgba(0,0,0,.4);display:flex;align-items:flex-start;justify-content:center;padding-top:4em}
.modal>div{background:#fff;border-radius:8px;padding:1em 1.5em;width:34em;max-height:80vh;overflow:auto}label{display:block;font-weight:600;margin-top:.75em}
textarea,input,select{width:100%;box-sizing:border-box;margin-top:.25em}.error{color:#e01e5a}h2{margin-top:1.5em}.fields{display:grid;grid-template-columns:1fr 1fr;gap:.3em}`;

/** Runs in the browser: renders the state and sends what the person does. Everything shown is escaped. */
const SCRIPT = String.raw`
const params = new URLSearchParams(location.search);
let user = params.get('user') || '';
let last = '';
let errors = {};
const $ = (s) => document.querySelector(s);
const esc = (s) => String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
// Slack's mrkdwn already escapes &, < and >; only a lone & is escaped again.
const ent = (s) => String(s ?? '').replace(/&(?!(amp|lt|gt|quot|#\d+);)/g, '&amp;').replace(/"/g, '&quot;');
// The emoji the relay's messages use; any other :name: stays as written.
const EMOJI = { white_check_mark: '✅', information_source: 'ℹ️', outbox_tray: '📤', inbox_tray: '📥', x: '❌', question: '❓', bulb: '💡', hourglass_flowing_sand: '⏳',
  no_entry_sign: '🚫', heavy_check_mark: '✔️', warning: '⚠️', robot_face: '🤖', bell: '🔔', speech_balloon: '💬', arrow_right: '➡️', lock: '🔒', stopwatch: '⏱️', wastebasket: '🗑️',
  tada: '🎉', alarm_clock: '⏰', arrows_counterclockwise: '🔄', bookmark_tabs: '📑', envelope_with_arrow: '📩', grey_question: '❔', hammer_and_wrench: '🛠️',
  hourglass: '⌛', link: '🔗', no_bell: '🔕', no_entry: '⛔', octagonal_sign: '🛑', package: '📦', page_facing_up: '📄', raised_hand: '✋',
  rotating_light: '🚨', scroll: '📜', test_tube: '🧪', wave: '👋' };
// A line that begins with > is a quote, as in Slack (the relay escapes a > of anyone's text to &gt;).
function inline(t) {
  return t.split('\n').map((line) => {
    const quoted = line.startsWith('>');
    const html = (quoted ? line.slice(1) : line).replace(/:([a-z0-9_+-]+):/g, (all, name) => EMOJI[name] || all).replace(/\x60([^\x60]+)\x60/g, '<code>$1</code>')
      .replace(/(^|[\s(])\*([^*]+)\*/g, '$1<b>$2</b>').replace(/(^|[\s(])_([^_]+)_/g, '$1<i>$2</i>').replace(/(^|[\s(])~([^~]+)~/g, '$1<s>$2</s>');
    return quoted ? '<span class="quote">' + html + '</span>' : html;
  }).join('<br>');
}
function mrkdwn(text) {
  return String(text ?? '').split(/\x60\x60\x60([\s\S]*?)\x60\x60\x60/).map((part, i) => {
    if (i % 2 === 1) return '<pre>' + ent(part.replace(/\u200b/g, '')) + '</pre>';
    return part.split(/<([^<>]+)>/).map((seg, j) => {
      if (j % 2 === 0) return inline(ent(seg));
      const [target, label] = seg.split('|');
      if (/^https?:/.test(target)) return '<a href="' + ent(target) + '" target="_blank" rel="noopener noreferrer">' + ent(label || target) + '</a>';
      if (/^@/.test(target)) { const p = people.find((x) => x.id === target.slice(1)); return '<b>@' + ent(label || (p ? p.label : target.slice(1))) + '</b>'; }
      if (/^#/.test(target)) return '<b>#' + ent(label || target.slice(1)) + '</b>';
      return ent(label || target);
    }).join('');
  }).join('');
}
const txt = (o) => !o ? '' : o.type === 'mrkdwn' ? mrkdwn(o.text) : esc(o.text).replace(/\n/g, '<br>');
function element(e, where) {
  if (e.type === 'button') {
    const data = JSON.stringify({ ...where, action_id: e.action_id, value: e.value || '' });
    if (e.url) return '<a href="' + esc(e.url) + '" target="_blank" rel="noopener noreferrer"><button>' + esc(e.text.text) + '</button></a>';
    return '<button class="' + esc(e.style || '') + '" data-action="' + esc(data) + '"' + (e.confirm ? ' data-confirm="' + esc((e.confirm.text && e.confirm.text.text) || 'Sure?') + '"' : '') + '>' + esc(e.text.text) + '</button>';
  }
  if (e.type === 'image') return '';
  return '<span class="meta">[' + esc(e.type) + ']</span>';
}
function blocks(list, where) {
  return (list || []).map((b) => {
    const at = { ...where, block_id: b.block_id || '' };
    if (b.type === 'header') return '<h3>' + txt(b.text) + '</h3>';
    if (b.type === 'divider') return '<hr>';
    if (b.type === 'context') return '<div class="context">' + (b.elements || []).map((e) => e.type === 'image' ? '' : txt(e)).join(' ') + '</div>';
    if (b.type === 'actions') return '<div>' + (b.elements || []).map((e) => element(e, at)).join('') + '</div>';
    if (b.type === 'section') {
      return '<div>' + txt(b.text) + (b.fields ? '<div class="fields">' + b.fields.map(txt).map((f) => '<div>' + f + '</div>').join('') + '</div>' : '') +
        (b.accessory ? ' ' + element(b.accessory, at) : '') + '</div>';
    }
    if (b.type === 'input') return input(b);
    if (b.type === 'rich_text') return '<div>' + esc(JSON.stringify(b.elements)) + '</div>';
    return '<div class="meta">[' + esc(b.type) + ' block]</div>';
  }).join('');
}
function input(b) {
  const e = b.element || {};
  const name = esc(b.block_id) + '.' + esc(e.action_id);
  const initial = e.initial_value || '';
  let field;
  if (e.type === 'plain_text_input') field = e.multiline ? '<textarea rows="4" data-input="' + name + '" data-type="plain_text_input">' + esc(initial) + '</textarea>' : '<input data-input="' + name + '" data-type="plain_text_input" value="' + esc(initial) + '">';
  else if (e.type === 'static_select') field = '<select data-input="' + name + '" data-type="static_select"><option value=""></option>' + (e.options || []).map((o) => '<option value="' + esc(o.value) + '" data-text="' + esc(o.text.text) + '"' + (e.initial_option && e.initial_option.value === o.value ? ' selected' : '') + '>' + esc(o.text.text) + '</option>').join('') + '</select>';
  else if (e.type === 'users_select') field = '<select data-input="' + name + '" data-type="users_select"><option value=""></option>' + people.map((p) => '<option value="' + esc(p.id) + '"' + (e.initial_user === p.id ? ' selected' : '') + '>' + esc(p.label) + '</option>').join('') + '</select>';
  else field = '<span class="meta">[' + esc(e.type) + ']</span>';
  const error = errors[b.block_id] ? '<div class="error">' + esc(errors[b.block_id]) + '</div>' : '';
  return '<label>' + esc(b.label && b.label.text) + (b.optional ? ' <span class="meta">(optional)</span>' : '') + field + '</label>' + error;
}
let people = [];
function message(m, channel) {
  const where = { surface: 'message', channel, ts: m.ts };
  return '<div class="msg' + (m.thread_ts ? ' reply' : '') + '" data-ts="' + esc(m.ts) + '">' + (m.blocks.length ? blocks(m.blocks, where) : mrkdwn(m.text)) +
    '<div class="meta">' + (m.user ? esc(m.user) : 'handoff-relay (app)') + (m.updated ? ' · edited ' + m.updated + '×' : '') + '</div></div>';
}
function render(s) {
  people = s.people;
  if (!user && s.people.length) user = s.people[0].id;
  $('#people').innerHTML = s.people.map((p) => '<a href="?user=' + encodeURIComponent(p.id) + '" class="' + (p.id === user ? 'on' : '') + '">' + esc(p.label) + '</a>').join('') || '<p>Nobody yet: register a teammate with --slack-user U0…</p>';
  $('#who').textContent = user ? 'Signed in as ' + user : '';
  $('#dm').innerHTML = s.dm.map((m) => message(m, s.dm_channel)).join('') || '<p class="meta">No messages yet.</p>';
  $('#ephemerals').innerHTML = s.ephemerals.map((e) => '<div class="msg"><div class="meta">Only visible to you</div>' + (e.blocks.length ? blocks(e.blocks, { surface: 'message' }) : mrkdwn(e.text)) + '</div>').join('');
  $('#channels').innerHTML = s.channels.map((c) => '<h3>#' + esc(c.id) + '</h3>' + c.messages.map((m) => message(m, c.id)).join('')).join('') || '<p class="meta">No channel cards yet.</p>';
  $('#home').innerHTML = s.home ? blocks(s.home.blocks, { surface: 'home' }) : '<p class="meta">No App Home published yet: open it.</p>';
  const modal = s.modals[s.modals.length - 1];
  $('#modal').innerHTML = modal ? '<div class="modal"><div data-view="' + esc(modal.id) + '"><h3>' + esc(modal.title && modal.title.text) + '</h3>' + blocks(modal.blocks, { surface: 'modal' }) +
    '<p><button data-close="' + esc(modal.id) + '">' + esc((modal.close && modal.close.text) || 'Cancel') + '</button>' + (modal.submit ? '<button class="primary" data-submit="' + esc(modal.id) + '">' + esc(modal.submit.text) + '</button>' : '') + '</p></div></div>' : '';
}
async function refresh() {
  if (!user && last) return;
  const res = await fetch('/api/state?user=' + encodeURIComponent(user));
  const body = await res.text();
  // Redraw only on a change: a half-typed modal is not wiped by the next poll.
  if (body !== last) { last = body; render(JSON.parse(body)); if (!params.get('user') && user) { last = ''; refresh(); } }
}
async function post(path, body) {
  const res = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const answer = await res.json();
  $('#status').textContent = 'relay answered HTTP ' + answer.relay_status;
  return answer;
}
document.addEventListener('click', async (event) => {
  const b = event.target.closest('button');
  if (!b) return;
  if (b.dataset.action) {
    if (b.dataset.confirm && !confirm(b.dataset.confirm)) return;
    const a = JSON.parse(b.dataset.action);
    if (a.surface === 'modal') return;
    await post('/api/click', { user, ...a });
  } else if (b.id === 'open-home') {
    await post('/api/home', { user });
  } else if (b.dataset.close) {
    await post('/api/close', { view_id: b.dataset.close });
  } else if (b.dataset.submit) {
    const values = {};
    for (const el of document.querySelectorAll('[data-view="' + CSS.escape(b.dataset.submit) + '"] [data-input]')) {
      const [block, action] = el.dataset.input.split('.');
      const v = el.dataset.type === 'plain_text_input' ? { type: 'plain_text_input', value: el.value || null }
        : el.dataset.type === 'static_select' ? { type: 'static_select', selected_option: el.value ? { text: { type: 'plain_text', text: el.selectedOptions[0].dataset.text }, value: el.value } : null }
        : { type: 'users_select', selected_user: el.value || null };
      (values[block] = values[block] || {})[action] = v;
    }
    const answer = await post('/api/submit', { user, view_id: b.dataset.submit, values });
    errors = {};
    try { const ack = JSON.parse(answer.relay_answer || '{}'); if (ack.response_action === 'errors') errors = ack.errors || {}; } catch {}
  }
  last = '';
  await refresh();
});
$('#command').addEventListener('submit', async (event) => {
  event.preventDefault();
  const [command, ...rest] = $('#command-text').value.trim().split(' ');
  await post('/api/command', { user, command: command.startsWith('/') ? command : '/handoff', text: command.startsWith('/') ? rest.join(' ') : $('#command-text').value });
  $('#command-text').value = '';
  last = '';
  await refresh();
});
refresh();
setInterval(refresh, 700);
`;

export function localSlackPage(): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Local Slack · handoff-relay (dev only)</title><style>${STYLE}</style></head><body>` +
    `<nav><h3>Local Slack</h3><div id="people"></div></nav><main>` +
    `<p class="banner"><b>Development only.</b> A fake Slack on this machine (<code>npm run slack:local</code>): nothing here reaches slack.com, and a relay in production never runs it. ` +
    `Clicks, modals and slash commands go to the relay signed as Slack signs them.</p>` +
    `<p id="who" class="meta"></p><p id="status" class="meta"></p>` +
    `<form id="command"><input id="command-text" placeholder="/handoff @someone … (a slash command, as in Slack)"></form>` +
    `<div id="ephemerals"></div><h2>Direct messages with the app</h2><div id="dm"></div>` +
    `<h2>App Home <button id="open-home">Open App Home</button></h2><div id="home"></div><h2>Channels</h2><div id="channels"></div><div id="modal"></div>` +
    `<script>${SCRIPT}</script></main></body></html>`
  );
}
