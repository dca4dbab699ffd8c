// The page at GET /: what this relay is, its version and health, and where to go next. No script, no outside assets.
import escapeHtml from 'escape-html';

const STYLE = `body{font-family:system-ui,sans-serif;max-width:46em;margin:2em auto;padding:0 1em;line-height:1.45;color:#1d1d1f}
.ok{color:#1a7f37}.bad{color:#b42318}.meta{color:#6e6e73;font-size:.9em}code{background:#f5f5f7;padding:0 .25em}
li{margin:.3em 0}`;

export interface HomeLink {
  href: string;
  text: string;
  /** What is there, and what it takes (a key, say). */
  note: string;
}

export interface HomePageView {
  version: string;
  /** Each dependency's readiness, as GET /readyz reports it ('ok', or why not). */
  checks: Record<string, string>;
  links: HomeLink[];
}

const h = (text: string): string => escapeHtml(text);

export function homePage(view: HomePageView): string {
  const ready = Object.values(view.checks).every((state) => state === 'ok');
  const checks = Object.entries(view.checks)
    .map(([name, state]) => `<li>${h(name)}: <span class="${state === 'ok' ? 'ok' : 'bad'}">${h(state)}</span></li>`)
    .join('');
  const links = view.links
    .map((l) => `<li><a href="${h(l.href)}">${h(l.text)}</a> <span class="meta">${h(l.note)}</span></li>`)
    .join('');
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
    `<meta name="referrer" content="no-referrer"><title>handoff-relay ${h(view.version)}</title><style>${STYLE}</style></head><body>` +
    `<h1>handoff-relay <span class="meta">${h(view.version)}</span></h1>` +
    `<p>Structured handoffs between developers' AI agents, delivered to the people behind them in Slack.</p>` +
    `<h2>Health: <span id="health" class="${ready ? 'ok' : 'bad'}">${ready ? 'ready' : 'not ready'}</span></h2><ul>${checks}</ul>` +
    `<h2>Links</h2><ul>${links}</ul>` +
    `<h2>Docs</h2><p><code>README.md</code> in the relay's repository: the quick start (register teammates, connect an MCP client, ` +
    `send a handoff); <code>docs/</code> beside it: Slack, policies, the JSON-RPC, REST and webhook references, configuration and ` +
    `operations, one page each.</p>` +
    `</body></html>`
  );
}
