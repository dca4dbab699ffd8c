// The web inbox's stylesheet and script, served by the relay itself (/inbox/app.css, /inbox/app.js): the pages' CSP
// allows only these ('self'), no inline script and nothing from another host.

export const INBOX_CSS = `:root{--fg:#1d1d1f;--muted:#5f6368;--line:#d2d2d7;--bg:#fff;--soft:#f5f5f7;--accent:#0b57d0;--warn:#9a6700;--bad:#b42318;--ok:#1a7f37}
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:var(--fg);background:var(--soft);line-height:1.5;overflow-wrap:anywhere}
a{color:var(--accent)}
.skip{position:absolute;left:-999px;top:0;background:#fff;padding:.5em 1em;z-index:1}.skip:focus{left:.5em}
header.top{background:#fff;border-bottom:1px solid var(--line);padding:.6em 1em;display:flex;flex-wrap:wrap;gap:.4em 1em;align-items:center}
header.top .brand{font-weight:700;text-decoration:none;color:var(--fg);margin-right:auto}
header.top nav{display:flex;flex-wrap:wrap;gap:.2em .9em;align-items:center}
header.top nav a{text-decoration:none;padding:.2em .1em;border-bottom:2px solid transparent}
header.top nav a[aria-current=page]{border-bottom-color:var(--accent);font-weight:600}
header.top form{display:inline;margin:0}
main{max-width:56em;margin:0 auto;padding:1em}
h1{font-size:1.45em;line-height:1.25;margin:.4em 0}
h2{font-size:1.15em;margin:1.2em 0 .4em}
.meta{color:var(--muted);font-size:.9em}
.card{background:#fff;border:1px solid var(--line);border-radius:10px;padding:1em;margin:1em 0}
.card>:first-child{margin-top:0}.card>:last-child{margin-bottom:0}
.teammate{border-left:4px solid #ffb020}
.said{font-size:.8em;color:var(--warn);font-weight:600;text-transform:uppercase;letter-spacing:.03em;margin:0 0 .3em}
.text{white-space:pre-wrap;overflow-wrap:anywhere;margin:.3em 0}
.badge{display:inline-block;padding:.05em .6em;border-radius:1em;background:#e8f0fe;color:#174ea6;font-weight:600;font-size:.85em;white-space:nowrap}
.badge.pending,.badge.unclaimed,.badge.awaiting_approval{background:#fff4e5;color:#8a4b00}
.badge.accepted{background:#e6f4ea;color:#137333}
.badge.completed{background:#e8eaed;color:#3c4043}
.badge.declined,.badge.cancelled,.badge.rejected,.badge.expired{background:#fce8e6;color:#a50e0e}
.count{display:inline-block;min-width:1.5em;padding:0 .4em;border-radius:1em;background:var(--accent);color:#fff;font-size:.8em;text-align:center}
ul.threads{list-style:none;padding:0;margin:0}
ul.threads li{background:#fff;border:1px solid var(--line);border-radius:10px;margin:.5em 0;padding:.7em .9em}
ul.threads li a.title{font-weight:600;text-decoration:none;color:var(--fg)}
ul.threads li a.title:hover,ul.threads li a.title:focus{text-decoration:underline}
.filters{display:flex;flex-wrap:wrap;gap:.4em;margin:.6em 0}
.filters a{border:1px solid var(--line);border-radius:1em;padding:.1em .7em;text-decoration:none;background:#fff;font-size:.9em}
.filters a[aria-current=true]{background:var(--accent);color:#fff;border-color:var(--accent)}
form.filter{display:flex;flex-wrap:wrap;gap:.4em .6em;align-items:center;margin:.6em 0}
form.filter label{margin:0}
form.filter input[type=text],form.filter input[type=search]{width:auto;flex:1 1 10em}
form.filter select{font:inherit;padding:.4em}
form.filter .meta{flex-basis:100%;margin:0}
.diff{overflow-x:auto;background:#0d1117;color:#e6edf3;border-radius:8px;font:12.5px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;max-height:32em;overflow-y:auto}
.diff table{border-collapse:collapse;min-width:100%}
.diff td{padding:0 .8em;white-space:pre;vertical-align:top}
.diff td.n{color:#7d8590;text-align:right;user-select:none;border-right:1px solid #30363d;padding:0 .6em}
.diff tr.add td.l{background:#12261e;color:#aff5b4}.diff tr.del td.l{background:#2d1214;color:#ffdcd7}.diff tr.hunk td.l{color:#79c0ff}
code{background:var(--soft);padding:0 .25em;border-radius:4px;overflow-wrap:anywhere}
pre.code{white-space:pre-wrap;background:var(--soft);padding:.6em;border-radius:6px;font-size:.9em}
.actions{display:grid;gap:.8em}
.actions form{background:#fff;border:1px solid var(--line);border-radius:10px;padding:.8em;margin:0}
.actions form.inline{display:flex;flex-wrap:wrap;gap:.6em;align-items:center}
.actions .row{display:flex;flex-wrap:wrap;gap:.6em;background:#fff;border:1px solid var(--line);border-radius:10px;padding:.8em}
.actions form.bare{border:none;padding:0;background:none}
.actions fieldset.row{margin:0;border:none;padding:0}
.actions legend{font-weight:600;margin-bottom:.4em;width:100%}
label{display:block;font-weight:600;margin:.2em 0}
textarea,input[type=text],input[type=search]{width:100%;font:inherit;padding:.5em;border:1px solid #9aa0a6;border-radius:6px}
textarea{min-height:5em;resize:vertical}
button{white-space:nowrap;overflow-wrap:normal;font:inherit;font-weight:600;padding:.45em 1em;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:#fff;cursor:pointer;margin-top:.4em}
button.secondary{background:#fff;color:var(--accent)}
button.danger{background:#fff;color:var(--bad);border-color:var(--bad)}
button.link{background:none;border:none;color:var(--accent);padding:0;margin:0;font-weight:400;text-decoration:underline}
a.button{display:inline-block;font-weight:600;padding:.45em 1em;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:#fff;text-decoration:none}
:focus-visible{outline:3px solid #fbbc04;outline-offset:2px}
.notice{padding:.7em 1em;border-radius:8px;margin:1em 0;background:#e6f4ea;border:1px solid #a8dab5}
.notice.refused{background:#fce8e6;border-color:#f4b8b2}
ol.history{padding-left:1.2em}
table.sessions{width:100%;border-collapse:collapse;background:#fff}
table.sessions td,table.sessions th{border-bottom:1px solid var(--line);padding:.4em;text-align:left;vertical-align:top}
.pager{display:flex;gap:1em;margin:1em 0}
.scroll{overflow-x:auto}
@media (max-width:600px){main{padding:.6em}h1{font-size:1.2em}.card{padding:.75em}header.top{padding:.5em .6em}}
`;

/**
 * Times in the reader's zone (the exact instant on hover), and live updates: the session's event stream
 * (/inbox/events) says a thread changed; the page fetches itself again and swaps in the regions marked
 * data-live, except a form region someone is typing in.
 */
export const INBOX_JS = `(function(){
'use strict';
var fmt=new Intl.DateTimeFormat(undefined,{dateStyle:'medium',timeStyle:'short'});
var exact=new Intl.DateTimeFormat(undefined,{dateStyle:'full',timeStyle:'long'});
function localTimes(root){
  root.querySelectorAll('time[datetime]').forEach(function(t){
    var d=new Date(t.getAttribute('datetime'));
    if(isNaN(d.getTime()))return;
    t.textContent=fmt.format(d);
    t.title=exact.format(d)+' ('+t.getAttribute('datetime')+')';
  });
}
localTimes(document);
var body=document.body;
var watch=body.getAttribute('data-watch');
if(!watch||!window.EventSource)return;
var busy=false,again=false;
function typing(region){
  var fields=region.querySelectorAll('textarea,input[type=text]');
  for(var i=0;i<fields.length;i++){if(fields[i].value||fields[i]===document.activeElement)return true;}
  return false;
}
function refresh(){
  if(busy){again=true;return;}
  busy=true;
  fetch(location.href,{credentials:'same-origin',headers:{'accept':'text/html'}}).then(function(r){
    if(!r.ok)return null;return r.text();
  }).then(function(html){
    if(html===null)return;
    var doc=new DOMParser().parseFromString(html,'text/html');
    document.querySelectorAll('[data-live]').forEach(function(region){
      var id=region.id;var next=id&&doc.getElementById(id);
      if(!next)return;
      if(region.getAttribute('data-live')==='forms'&&typing(region))return;
      region.innerHTML=next.innerHTML;
      localTimes(region);
    });
    var status=document.getElementById('live-status');
    if(status)status.textContent='Updated '+fmt.format(new Date());
  }).catch(function(){}).then(function(){busy=false;if(again){again=false;refresh();}});
}
var source=new EventSource('/inbox/events');
source.onmessage=function(e){
  var data;try{data=JSON.parse(e.data);}catch(_){return;}
  if(!data||!data.thread_id)return;
  if(watch==='all'||watch===data.thread_id)refresh();
};
})();
`;
