"""The HTML page around the report's sections: escaping, inlined CSS and script, navigation.

Everything the page needs is in the one file: no link, script or font is
fetched, so it opens from disk with no network.  The script (a few dozen
lines, no library) sorts tables (``table.sortable``: click a header), filters
the rows of the tables inside an element (``input.filter``, ``data-table`` names it; a
``<details>`` with no match is hidden, one with matches opened), pans and zooms the
pictures (``svg.zoomable``: drag, wheel; a picture too big to read whole starts at its
top at one unit a pixel, a double click switches to the whole and back), switches a
graph between its grouped and full picture (``button.toggle``, the full one
is kept in a ``<template>`` until asked for) and shows a break's reason on a
source line when clicked.  When the first frame after the load event is drawn it sets
``data-ready`` (milliseconds since navigation start) on ``<html>``: the browser tests and
`tools/bench_html.py` wait for it.
"""

from __future__ import annotations

from html import escape

CSS = """
:root{--bg:#fff;--fg:#1d2330;--muted:#6b7280;--line:#e5e7eb;--break:#fde2e1;--breakb:#d9342b;
--guard:#fff4cc;--r0:#eef6ff;--r1:#f1fbef;--in:#dbeafe;--op:#f3f4f6;--view:#e0f2fe;--inpl:#fee2e2;
--out:#16a34a;--kern:#ede9fe}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:var(--fg);
background:var(--bg)}
header{position:sticky;top:0;background:#1d2330;color:#fff;padding:8px 16px;display:flex;gap:18px;
align-items:center;z-index:5}
header a{color:#cbd5e1;text-decoration:none}
header a:hover{color:#fff}
header h1{font-size:16px;margin:0 12px 0 0}
main{padding:8px 18px 40px;max-width:1500px}
section{margin:18px 0 28px}
[id]{scroll-margin-top:64px}
.src tr:target td{box-shadow:inset 0 2px 0 #f59e0b,inset 0 -2px 0 #f59e0b}
h2{border-bottom:2px solid var(--line);padding-bottom:4px}
h3{margin:18px 0 6px}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
.muted{color:var(--muted)}
table{border-collapse:collapse;margin:6px 0;width:100%}
th,td{border-bottom:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f8fafc;position:sticky;top:40px}
table.sortable th{cursor:pointer;user-select:none;white-space:nowrap}
td[data-v]{white-space:nowrap}
table.sortable th:after{content:" \\2195";color:#aaa}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.bar{display:inline-block;width:110px;height:12px;background:#fecaca;border-radius:3px;
overflow:hidden;vertical-align:middle}
.bar>span{display:block;height:100%;background:#22c55e}
.tag{display:inline-block;padding:0 6px;border-radius:9px;font-size:12px;background:#eef2f7;
margin-right:4px}
.tag.bad{background:var(--break);color:#991b1b}
.tag.warn{background:var(--guard);color:#854d0e}
.warnbox{background:#fff7ed;border-left:4px solid #f97316;padding:6px 10px;margin:6px 0}
.stormbox{background:#fee2e2;border-left:4px solid #dc2626;padding:6px 10px;margin:6px 0;font-weight:600}
.src{border:1px solid var(--line);border-radius:4px;overflow:auto;max-height:640px;
content-visibility:auto;contain-intrinsic-size:auto 320px}
.src table{margin:0}
.src td{border:0;padding:0 8px;white-space:pre}
.src td.ln{color:var(--muted);text-align:right;user-select:none;width:1%}
.src tr.r0{background:var(--r0)}
.src tr.r1{background:var(--r1)}
.src tr.guard td.ln{background:var(--guard)}
.src tr.brk{background:var(--break);cursor:pointer}
.src tr.brk td.ln{background:var(--breakb);color:#fff}
.src tr.gap td{color:var(--muted);font-style:italic}
.src tr.why{display:none}
.src tr.why.open{display:table-row}
.src tr.why td{white-space:normal;background:#fff}
.src tr.why td+td{border-left:4px solid var(--breakb);
font-family:system-ui,sans-serif}
.marks{font-size:11px;color:var(--muted);font-family:system-ui,sans-serif}
details{margin:6px 0}
summary{cursor:pointer}
details.lib>summary{color:var(--muted)}
.legend span{display:inline-block;padding:0 6px;margin-right:6px;border:1px solid #bbb;
border-radius:3px;font-size:12px}
svg.zoomable{width:100%;border:1px solid var(--line);border-radius:4px;background:#fcfcfd;
cursor:grab;display:block;content-visibility:auto}
svg text{font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;fill:#111}
svg text.b{font-weight:700}
svg .box rect{fill:var(--op);stroke:#94a3b8}
svg .input rect,.legend .input{background:var(--in);fill:var(--in);stroke:#3b82f6}
svg .view rect,.legend .view{background:var(--view);fill:var(--view);stroke:#0ea5e9;stroke-dasharray:4 2}
svg .inplace rect,.legend .inplace{background:var(--inpl);fill:var(--inpl);stroke:#dc2626}
svg .output rect,.legend .output{stroke:var(--out);stroke-width:3}
svg .group rect{fill:#f8fafc;stroke:#64748b}
svg .kernel rect,.legend .kernel{background:var(--kern);fill:var(--kern);stroke:#7c3aed}
svg .header rect{stroke:#15803d;stroke-width:2.5}
svg .unreach rect{fill:#e5e7eb}
svg .loop1 rect{fill:#ecfdf5}
svg .loop2 rect{fill:#d1fae5}
svg .loop3 rect{fill:#a7f3d0}
svg .phi rect{fill:#fef9c3;stroke:#ca8a04}
svg .edge{fill:none;stroke:#64748b;stroke-width:1.2}
svg .edge.back{stroke:#dc2626;stroke-width:2}
svg .edge.exception{stroke:#dc2626;stroke-dasharray:2 3}
svg .edge.branch{stroke:#2563eb}
svg .edge.frontier{stroke:#9ca3af;stroke-dasharray:3 3}
svg marker path{fill:#64748b}
.timeline{display:flex;gap:1px;align-items:flex-end;height:34px;margin:4px 0;flex-wrap:nowrap;
overflow-x:auto}
.timeline i{display:inline-block;width:6px;min-width:3px;height:10px;background:#cbd5e1}
.timeline i.cap{height:30px;background:#2563eb}
.timeline i.rec{height:30px;background:#dc2626}
button{font:inherit;font-size:12px;padding:2px 8px;margin:2px 4px 2px 0;cursor:pointer}
details.guards td:nth-child(1){font-size:12px;color:#475569}
details.guards td:nth-child(n+2){font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;
font-size:12px}
input.filter{font:inherit;padding:4px 8px;width:360px;margin:4px 0}
pre.code{background:#f8fafc;border:1px solid var(--line);padding:8px;overflow:auto;max-height:420px}
"""

SCRIPT = """
(function(){
var doc=document.documentElement;
function cellValue(td){var v=td.getAttribute('data-v');if(v!==null)return parseFloat(v);
 var t=td.textContent.trim();var n=parseFloat(t);return (!isNaN(n)&&/^[-\\d.]/.test(t))?n:t.toLowerCase();}
function sortable(tb){
 tb.querySelectorAll('th').forEach(function(th,col){th.addEventListener('click',function(){
  var body=tb.tBodies[0],rows=Array.prototype.slice.call(body.rows),asc=th.getAttribute('data-asc')!=='1';
  th.setAttribute('data-asc',asc?'1':'0');
  rows.sort(function(a,b){var x=cellValue(a.cells[col]),y=cellValue(b.cells[col]);
   if(x===y)return 0;return (x<y?-1:1)*(asc?1:-1);});
  rows.forEach(function(r){body.appendChild(r);});});});}
document.querySelectorAll('table.sortable').forEach(sortable);
document.querySelectorAll('input.filter').forEach(function(inp){inp.addEventListener('input',function(){
 var q=inp.value.toLowerCase(),box=document.getElementById(inp.getAttribute('data-table')),n=0;
 box.querySelectorAll('tbody tr').forEach(function(r){var hit=r.textContent.toLowerCase().indexOf(q)>=0;
  r.style.display=hit?'':'none';if(hit)n++;});
 box.querySelectorAll('details').forEach(function(d){
  if(!d.hasAttribute('data-open'))d.setAttribute('data-open',d.open?'1':'0');
  var any=d.querySelector('tbody tr:not([style*="none"])')!==null;
  d.hidden=q!==''&&!any;d.open=q===''?d.getAttribute('data-open')==='1':any;});
 var out=document.getElementById(inp.id+'-count');if(out)out.textContent=q?n+' match(es)':'';});});
function setVb(svg,v){svg.setAttribute('viewBox',v.join(' '));}
function initial(svg,r){
 /* a picture too big to read when fitted starts at its top, one unit a pixel; double click: whole */
 var v=svg.getAttribute('data-vb').split(' ').map(Number);
 if(!r.width||Math.min(r.width/v[2],r.height/v[3])>=0.6)return null;
 var x=v[2]<=r.width?v[0]+v[2]/2-r.width/2:v[0];return [x,v[1],r.width,r.height];}
function zoomable(svg){var vb=function(){return svg.getAttribute('viewBox').split(' ').map(Number);};
 var drag=null;
 svg.addEventListener('wheel',function(e){e.preventDefault();var v=vb(),r=svg.getBoundingClientRect();
  var k=e.deltaY<0?0.85:1/0.85,mx=v[0]+(e.clientX-r.left)/r.width*v[2],
   my=v[1]+(e.clientY-r.top)/r.height*v[3];
  setVb(svg,[mx-(mx-v[0])*k,my-(my-v[1])*k,v[2]*k,v[3]*k]);},{passive:false});
 svg.addEventListener('mousedown',function(e){e.preventDefault();drag=[e.clientX,e.clientY,vb()];
  svg.style.cursor='grabbing';});
 window.addEventListener('mouseup',function(){drag=null;svg.style.cursor='';});
 svg.addEventListener('mousemove',function(e){if(!drag)return;var r=svg.getBoundingClientRect(),v=drag[2];
  var dx=(e.clientX-drag[0])/r.width*v[2],dy=(e.clientY-drag[1])/r.height*v[3];
  setVb(svg,[v[0]-dx,v[1]-dy,v[2],v[3]]);});
 svg.addEventListener('dblclick',function(){var whole=svg.getAttribute('data-vb');
  var start=svg.getAttribute('data-start');
  svg.setAttribute('viewBox',start&&svg.getAttribute('viewBox')===whole?start:whole);});}
function place(svgs){var rs=svgs.map(function(s){return s.getBoundingClientRect();});
 svgs.forEach(function(s,i){var v=initial(s,rs[i]);
  if(v){setVb(s,v);s.setAttribute('data-start',v.join(' '));}});}
var all=Array.prototype.slice.call(document.querySelectorAll('svg.zoomable'));
all.forEach(zoomable);
document.querySelectorAll('button.toggle').forEach(function(b){b.addEventListener('click',function(){
 var box=document.getElementById(b.getAttribute('data-target'));
 var tpl=box.querySelector('template'),fresh=[];
 if(tpl){box.appendChild(tpl.content.cloneNode(true));tpl.remove();
  fresh=Array.prototype.slice.call(box.querySelectorAll('svg.zoomable'));fresh.forEach(zoomable);}
 box.hidden=!box.hidden;var other=document.getElementById(b.getAttribute('data-other'));
 if(other)other.hidden=!box.hidden;
 place(Array.prototype.slice.call(box.querySelectorAll('svg.zoomable:not([data-start])')));});});
document.querySelectorAll('svg.zoomable g.box[data-first]').forEach(function(g){
 var down=null;g.addEventListener('mousedown',function(e){down=[e.clientX,e.clientY];});
 g.addEventListener('click',function(e){
  if(!down||Math.abs(e.clientX-down[0])+Math.abs(e.clientY-down[1])>4)return;
  /* a group of a grouped picture: open the full one, centred on the group's first node */
  var uid=g.closest('svg').id.replace(/-grouped$/,'');
  var b=document.querySelector('button[data-target="'+uid+'-fullbox"]');
  if(b&&document.getElementById(uid+'-fullbox').hidden)b.click();
  var full=document.getElementById(uid+'-full');
  var n=document.getElementById(uid+'-full-'+g.getAttribute('data-first'));if(!full||!n)return;
  var bb=n.getBBox(),r=full.getBoundingClientRect(),w=Math.max(r.width,400),h=Math.max(r.height,300);
  setVb(full,[bb.x+bb.width/2-w/2,bb.y-40,w,h]);full.scrollIntoView({block:'center'});});});
document.querySelectorAll('.src tr.brk').forEach(function(tr){tr.addEventListener('click',function(){
 var w=tr.nextElementSibling;if(w&&w.classList.contains('why'))w.classList.toggle('open');});});
window.addEventListener('load',function(){place(all);
 /* the page is ready once the first frame after load is drawn: tests and tools/bench_html.py read it */
 requestAnimationFrame(function(){setTimeout(function(){
  doc.setAttribute('data-ready',performance.now().toFixed(1));},0);});});
})();
"""


def esc(value: object) -> str:
    """Text for an HTML element or a double-quoted attribute."""
    return escape("" if value is None else str(value), quote=True)


def where(filename: str | None, lineno: int | None) -> str:
    if not filename:
        return "-"
    return f"{filename}:{lineno}" if lineno else filename


def short(filename: str | None) -> str:
    return (filename or "").rsplit("/", 1)[-1]


def _cell(c, num: bool) -> str:
    cls = ' class="num"' if num else ""
    if isinstance(c, tuple):  # (html, sort value)
        return f'<td{cls} data-v="{c[1]}">{c[0]}</td>'
    return f"<td{cls}>{c}</td>"


def table(cols: list[str], rows: list[list], tid: str = "", sortable: bool = True) -> str:
    """A table; `cols` are header texts (``#`` prefix: a number column); a cell is escaped HTML,
    or ``(html, number)`` to sort by the number."""
    num = [c.startswith("#") for c in cols]
    head = "".join(
        f'<th class="num">{esc(c[1:])}</th>' if n else f"<th>{esc(c)}</th>" for c, n in zip(cols, num)
    )
    body = ["<tr>" + "".join(_cell(c, n) for c, n in zip(r, num)) + "</tr>" for r in rows]
    attrs = (f' id="{tid}"' if tid else "") + (' class="sortable"' if sortable else "")
    return f"<table{attrs}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def page(title: str, nav: list[tuple[str, str]], sections: list[str], subtitle: str = "") -> str:
    """The whole document: `nav` is (anchor, label) pairs, `sections` HTML strings."""
    links = "".join(f'<a href="#{a}">{esc(label)}</a>' for a, label in nav)
    sub = f'<span class="muted">{esc(subtitle)}</span>' if subtitle else ""
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<style>{CSS}</style></head>\n"
        f"<body><header><h1>{esc(title)}</h1>{links}{sub}</header><main>\n"
        + "\n".join(sections)
        + f"\n</main><script>{SCRIPT}</script></body></html>\n"
    )
