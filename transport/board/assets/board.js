// The board page: it fetches the read-only JSON endpoints and draws them,
// again whenever /board/events says something changed. Its key is given
// for the one-time token of the link it was opened at; the tab keeps it
// in sessionStorage, which is this origin's alone (port and all), and
// sends it in Authorization, never as a cookie: a browser sends cookies
// to every server of the host. Everything a client
// supplied is inserted as text (textContent), never as markup, and as the
// server's prose quotes it (surface/quote.go): one line, every control,
// format and separator character escaped, bounded; a sentence of the
// page's own quotes it too, so that no peer's words pass for the page's.
"use strict";

const api = {
  peers: "/board/api/peers",
  overlaps: "/board/api/overlaps",
  executions: "/board/api/executions?limit=200",
  server: "/board/api/server",
  graph: "/board/api/graph",
};
const SVG = "http://www.w3.org/2000/svg";

const keyItem = "majordomus-board-key";
let key = null;

let executions = [];
let uptime = null; // {seconds, at}: the server's uptime when last fetched

function $(id) { return document.getElementById(id); }

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

function svg(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  return e;
}

// plain is a peer's text s, at most limit characters, one line of
// printable, visible characters (a right-to-left override cannot turn the
// page's words around, nor a filler pass for a name); quote escapes its
// quotes and backslashes too, and every character that shows as a double
// quote (“ ” ＂ ″…, surface/quote.go's looksLikeAQuote), which would seem
// to close the quoting.
function plain(s, limit, quote) {
  const chars = Array.from(String(s ?? ""));
  const hidden = quote ? /[\p{C}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\p{Quotation_Mark}\u02ba\u02dd\u02ee\u02f6\u05f4\u1cd3\u2032-\u2037\u2057\u275b-\u2760\u3003\u{1f676}-\u{1f678}\\]/gu : /[\p{C}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/gu;
  const text = chars.slice(0, limit).join("").replace(hidden, (c) => {
    if (c === "'") return c; // ASCII's other quotation mark closes no double quotes
    if (c === '"' || c === "\\") return "\\" + c;
    const hex = c.codePointAt(0).toString(16);
    return hex.length > 4 ? "\\u{" + hex + "}" : "\\u" + hex.padStart(4, "0");
  });
  return text + (chars.length > limit ? "…" : "");
}

// quoted is a peer's text as a sentence of the page names it.
function quoted(s) { return '"' + plain(s, 64, true) + '"'; }

function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

// kept and keep are the tab's sessionStorage, which only lets a reload
// keep the key: a browser that refuses the page storage has the key for
// as long as the page is open.
function kept() { try { return sessionStorage.getItem(keyItem); } catch { return null; } }
function keep(k) { try { sessionStorage.setItem(keyItem, k); } catch { /* the page holds it */ } }

// takeKey takes the one-time token off the address (so that the address
// never names the key) and spends it for the page's key; the key the tab
// kept serves otherwise. It returns the key, or why there is none.
async function takeKey() {
  const token = new URLSearchParams(location.search).get("token");
  if (token === null) return { key: kept(), why: "The board is its user's only: run " };
  history.replaceState(null, "", location.pathname);
  try {
    const r = await fetch("/board/key?token=" + encodeURIComponent(token), { method: "POST", credentials: "omit", cache: "no-store" });
    if (!r.ok) return { key: kept(), why: "This board link was used already or has expired: run " };
    const given = (await r.json()).key;
    keep(given);
    return { key: given };
  } catch (err) {
    return { key: kept(), why: "This board link could not be spent (" + err.message + "): run " };
  }
}

// Refused is a refusal for want of a key that the server still knows.
class Refused extends Error {}

// gone is what a page whose server no longer knows its key, or is no
// longer there, is told to do.
const gone = "run `majordomus-mcp board` for a new link if the checkout's server restarted or another took it over";

// read fetches url with the key; what answers nothing within bound (a
// frozen server) fails.
async function read(url, signal = AbortSignal.timeout(10000)) {
  const r = await fetch(url, { headers: { Authorization: "Bearer " + key }, credentials: "omit", cache: "no-store", signal });
  if (r.status === 401) throw new Refused("this server no longer knows this page's key: " + gone);
  if (!r.ok) throw new Error(url + ": HTTP " + r.status);
  return r;
}

async function get(url) { return (await read(url)).json(); }

function ago(iso) {
  const t = Date.parse(iso);
  if (isNaN(t)) return "";
  const s = Math.max(0, Math.round((Date.now() - t) / 1000));
  if (s < 60) return s + " s ago";
  if (s < 3600) return Math.floor(s / 60) + " min ago";
  return Math.floor(s / 3600) + " h " + Math.floor((s % 3600) / 60) + " min ago";
}

function duration(seconds) {
  const s = Math.floor(seconds);
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
  return (h ? h + " h " : "") + (h || m ? m + " min " : "") + (s % 60) + " s";
}

function timeCell(iso) {
  const td = el("td");
  const t = el("time", ago(iso));
  t.dateTime = iso;
  t.title = iso;
  td.appendChild(t);
  return td;
}

function drawPeers(board, overlaps) {
  const names = new Map(board.peers.map((p) => [p.id, p.client.name]));
  const who = (id) => id + " (" + (names.has(id) ? quoted(names.get(id)) : "?") + ")";
  const overlapping = new Map(); // a peer's id → whom it overlaps
  const meet = (id, other) => overlapping.set(id, (overlapping.get(id) || []).concat(who(other)));
  for (const o of overlaps.overlaps) { meet(o.a, o.b); meet(o.b, o.a); }
  $("peers-count").textContent = board.count + " attached, " + board.departed + " departed";
  const body = $("peers-table").tBodies[0];
  clear(body);
  for (const p of board.peers) {
    const tr = el("tr");
    tr.dataset.peer = p.id;
    if (!p.attached) tr.classList.add("departed");
    if (overlapping.has(p.id)) tr.classList.add("overlap");
    const a = p.announcement;
    tr.appendChild(el("td", p.id));
    tr.appendChild(el("td", plain(p.client.name, 256) + (p.client.version ? " " + plain(p.client.version, 256) : "")));
    tr.appendChild(el("td", p.transport));
    tr.appendChild(el("td", p.attached ? "attached" : "departed"));
    tr.appendChild(el("td", a ? plain(a.intent, 256) : "—"));
    tr.appendChild(el("td", a && a.scope.length ? a.scope.map((s) => plain(s, 256)).join(", ") : "—"));
    tr.appendChild(el("td", overlapping.has(p.id) ? overlapping.get(p.id).join(", ") : "—"));
    tr.appendChild(timeCell(p.last_seen));
    body.appendChild(tr);
  }
  if (board.peers.length === 0) {
    const tr = el("tr");
    const td = el("td", "No peer yet.");
    td.colSpan = 8;
    tr.appendChild(td);
    body.appendChild(tr);
  }
  const list = $("overlaps");
  clear(list);
  for (const o of overlaps.overlaps) {
    const on = (paths, more) => paths.map(quoted).join(", ") + (more ? " and " + more + " more" : "");
    list.appendChild(el("li", who(o.a) + " on " + on(o.paths, o.more) + " and " + who(o.b) + " on " + on(o.b_paths, o.b_more) + " overlap"));
  }
  if (overlaps.count > overlaps.overlaps.length) {
    list.appendChild(el("li", "… and " + (overlaps.count - overlaps.overlaps.length) + " more pairs."));
  }
  if (overlaps.count === 0) list.appendChild(el("li", "None."));
}

function fillSelect(select, values) {
  const keep = select.value;
  while (select.options.length > 1) select.remove(1);
  for (const v of values) {
    const o = el("option", v);
    o.value = v;
    select.appendChild(o);
  }
  select.value = values.includes(keep) ? keep : "";
}

function drawExecutions() {
  const peer = $("filter-peer").value, tool = $("filter-tool").value;
  const shown = executions.filter((x) => (!peer || x.peer === peer) && (!tool || x.tool === tool));
  $("executions-count").textContent = shown.length + " of " + executions.length;
  const body = $("executions-table").tBodies[0];
  clear(body);
  for (const x of shown) {
    const tr = el("tr");
    tr.appendChild(timeCell(x.at));
    tr.appendChild(el("td", plain(x.tool, 64)));
    tr.appendChild(el("td", x.peer || "—"));
    tr.appendChild(el("td", x.duration_ms.toFixed(1) + " ms"));
    tr.appendChild(el("td", x.ok ? "ok" : "error", x.ok ? "ok" : "bad"));
    body.appendChild(tr);
  }
}

function setExecutions(history) {
  executions = history.executions; // as the history has them: the most recently recorded first
  fillSelect($("filter-peer"), [...new Set(executions.map((x) => x.peer).filter(Boolean))].sort());
  fillSelect($("filter-tool"), [...new Set(executions.map((x) => x.tool))].sort());
  drawExecutions();
}

function drawServer(s) {
  $("checkout").textContent = "· " + plain(s.checkout, 64); // the manifest's: a clone's words
  document.title = "majordomus board · " + plain(s.checkout, 64);
  uptime = { seconds: s.uptime_seconds, at: Date.now() };
  const facts = [
    ["PID", s.pid], ["Role", s.role], ["URL", s.url || "—"], ["Uptime", duration(s.uptime_seconds)],
    ["Sessions", s.sessions + " (" + s.http_sessions + " over HTTP)"],
    ["Protocol revisions", (s.protocol_revisions || []).join(", ")],
    ["Layer", s.layer_state + ", generation " + s.generation],
    ["Profile", s.profile], ["Version", s.version], ["Repository", s.repository_id],
    ["Findings", s.findings.length ? s.findings.join(" · ") : "none"],
  ];
  const dl = $("server-facts");
  clear(dl);
  for (const [k, v] of facts) {
    dl.appendChild(el("dt", k));
    const dd = el("dd", v);
    if (k === "Uptime") dd.id = "uptime";
    dl.appendChild(dd);
  }
}

function edgeText(e) {
  return e.trigger + (e.guard ? " [" + e.guard + "]" : "") + (e.action ? " / " + e.action : "") +
    " → " + e.to + (e.rule ? " (" + e.rule + ")" : "");
}

// layout places each state in a column by its distance from the initial
// state; a final state (no edge out) goes last.
function layout(g) {
  const out = new Map(g.states.map((s) => [s.name, []]));
  for (const e of g.edges) if (e.from !== e.to) out.get(e.from).push(e.to);
  const finals = g.states.filter((s) => out.get(s.name).length === 0).map((s) => s.name);
  const depth = new Map([[g.initial, 0]]);
  const queue = [g.initial];
  while (queue.length) {
    const s = queue.shift();
    for (const t of out.get(s)) {
      if (!depth.has(t) && !finals.includes(t)) { depth.set(t, depth.get(s) + 1); queue.push(t); }
    }
  }
  const last = Math.max(0, ...depth.values()) + 1;
  for (const s of g.states) if (!depth.has(s.name)) depth.set(s.name, last);
  const cols = new Map();
  for (const s of g.states) {
    const d = depth.get(s.name);
    if (!cols.has(d)) cols.set(d, []);
    cols.get(d).push(s.name);
  }
  const rows = Math.max(...[...cols.values()].map((c) => c.length));
  const pos = new Map();
  for (const [d, names] of cols) {
    names.forEach((n, i) => pos.set(n, { x: 90 + d * 210, y: 50 + (i + (rows - names.length) / 2) * 100 }));
  }
  return { pos, width: 180 + last * 210, height: 100 + (rows - 1) * 100 };
}

function drawMachine(m) {
  const g = m.graph, current = m.state;
  $("machine-state").textContent = current;
  const { pos, width, height } = layout(g);
  const root = $("machine-graph");
  clear(root);
  root.setAttribute("viewBox", "0 -10 " + width + " " + (height + 10));
  const defs = svg("defs");
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
  marker.appendChild(svg("path", { d: "M0,0 L10,5 L0,10 z" }));
  defs.appendChild(marker);
  root.appendChild(defs);
  const pairs = new Map();
  for (const e of g.edges) {
    const k = e.from + "\u0000" + e.to;
    if (!pairs.has(k)) pairs.set(k, []);
    pairs.get(k).push(e);
  }
  const W = 140, H = 40;
  for (const edges of pairs.values()) {
    const a = pos.get(edges[0].from), b = pos.get(edges[0].to);
    const cls = "edge" + (edges[0].from === current ? " from-current" : "");
    let path, lx, ly;
    if (a === b) {
      const x = a.x, y = a.y - H / 2;
      path = "M" + (x - 20) + "," + y + " C" + (x - 30) + "," + (y - 40) + " " + (x + 30) + "," + (y - 40) + " " + (x + 20) + "," + y;
      lx = x; ly = y - 34;
    } else {
      const dx = b.x - a.x, dy = b.y - a.y, len = Math.hypot(dx, dy);
      const nx = -dy / len, ny = dx / len, bend = 18;
      const k = 1 / Math.max(Math.abs(dx) / (W / 2), Math.abs(dy) / (H / 2)); // to the box's edge
      const sx = a.x + dx * k, sy = a.y + dy * k, ex = b.x - dx * k, ey = b.y - dy * k;
      const cx = (sx + ex) / 2 + nx * bend, cy = (sy + ey) / 2 + ny * bend;
      path = "M" + sx + "," + sy + " Q" + cx + "," + cy + " " + ex + "," + ey;
      lx = cx; ly = cy;
    }
    const group = svg("g");
    const title = svg("title");
    title.textContent = edges.map(edgeText).join("\n");
    group.appendChild(title);
    group.appendChild(svg("path", { d: path, class: cls, "marker-end": "url(#arrow)" }));
    if (edges.length > 1) {
      const t = svg("text", { x: lx, y: ly, class: "count", "text-anchor": "middle" });
      t.textContent = "×" + edges.length;
      group.appendChild(t);
    }
    root.appendChild(group);
  }
  for (const s of g.states) {
    const p = pos.get(s.name);
    const group = svg("g", { class: "state" + (s.name === current ? " current" : ""), "data-state": s.name });
    const title = svg("title");
    title.textContent = s.name + (s.parent ? " (within " + s.parent + ")" : "") + (s.name === current ? ": the server's state now" : "");
    group.appendChild(title);
    group.appendChild(svg("rect", { x: p.x - W / 2, y: p.y - H / 2, width: W, height: H, rx: 8 }));
    const t = svg("text", { x: p.x, y: p.y });
    t.textContent = s.name + (s.name === current ? " ◀ now" : "");
    group.appendChild(t);
    root.appendChild(group);
  }
  const list = $("machine-edges");
  clear(list);
  for (const e of g.edges.filter((e) => e.from === current)) list.appendChild(el("li", edgeText(e)));
}

let pending = null, again = false, listening = false;

// refresh fetches everything the page shows; a change announced while a
// fetch runs makes one more.
async function refresh() {
  if (pending) { again = true; return pending; }
  pending = (async () => {
    do {
      again = false;
      try {
        const [peers, overlaps, history, server, graph] = await Promise.all(
          [api.peers, api.overlaps, api.executions, api.server, api.graph].map(get));
        drawPeers(peers, overlaps);
        setExecutions(history);
        drawServer(server);
        drawMachine(graph);
        document.body.dataset.revision = String(Number(document.body.dataset.revision || 0) + 1);
        if (listening) live(true, "live"); // what a failed fetch said is over
      } catch (err) {
        live(false, "could not read the board: " + err.message);
      }
    } while (again);
    pending = null;
  })();
  return pending;
}

function live(on, text) {
  const p = $("live");
  p.className = "live " + (on ? "on" : "off");
  p.textContent = text;
}

function tick() {
  if (uptime && $("uptime")) $("uptime").textContent = duration(uptime.seconds + (Date.now() - uptime.at) / 1000);
  for (const t of document.querySelectorAll("td time")) t.textContent = ago(t.dateTime);
}

// silence is how long /board/events may say nothing, the server's
// keep-alive (15 s) twice and some: a stream that long silent is a
// frozen server's, and is given up. Opening one may take as long as any
// read (10 s); a server heard from by neither for that long is gone or
// frozen, and the page says so.
const silence = 35000, opening = 10000;

// listen reads /board/events (an EventSource cannot send the key): each
// "change" fetches the board again; a stream cut or silent is opened
// again a second later, and a refusal ends it (the fetch says why).
async function listen() {
  // heard is when the server was last heard from, on the monotonic clock
  // (a clock set meanwhile moves nothing)
  for (let heard = performance.now(); ; ) {
    const quiet = new AbortController();
    let timer = null, bound = opening, open = false;
    const wait = () => { clearTimeout(timer); timer = setTimeout(() => quiet.abort(), bound); };
    wait();
    // A page the browser froze (a background tab) heard nothing meanwhile:
    // its stream has its due once it runs again, and its server too.
    document.addEventListener("resume", () => { heard = performance.now(); wait(); }, { signal: quiet.signal });
    try {
      const stream = (await read("/board/events", quiet.signal)).body.pipeThrough(new TextDecoderStream()).getReader();
      listening = open = true;
      heard = performance.now();
      bound = silence;
      wait();
      live(true, "live");
      let text = "";
      for (;;) {
        const { value, done } = await stream.read();
        heard = performance.now(); // its end too: a server that closed it was there
        if (done) break;
        wait();
        const events = (text + value).split("\n\n");
        text = events.pop(); // an event not yet whole
        if (events.some((e) => e.split("\n").includes("event: change"))) refresh();
      }
    } catch (err) {
      if (err instanceof Refused) { refresh(); return; }
      // a stream cut short (the server killed, say) ends now; one given up
      // as silent ended when it was last heard
      if (open && !quiet.signal.aborted) heard = performance.now();
    } finally {
      clearTimeout(timer);
      quiet.abort();
      listening = false;
    }
    live(false, performance.now() - heard < opening ? "disconnected: the server may have stopped; retrying" : "disconnected, retrying: the server is gone, or frozen; " + gone);
    await new Promise((done) => setTimeout(done, 1000));
  }
}

// refused shows, instead of the board, why there is none: this tab was
// given no key.
function refused(why) {
  clear(document.body);
  const p = el("p", why);
  p.append(el("code", "majordomus-mcp board"), " in the checkout for a link that opens it.");
  document.body.append(el("h1", "No board here"), p);
}

async function start() {
  const taken = await takeKey();
  key = taken.key;
  if (!key) { refused(taken.why); return; }
  $("filter-peer").addEventListener("change", drawExecutions);
  $("filter-tool").addEventListener("change", drawExecutions);
  $("filters").addEventListener("submit", (e) => e.preventDefault());
  listen();
  setInterval(tick, 1000);
  refresh();
}

document.addEventListener("DOMContentLoaded", () => start().catch((err) => live(false, "the page failed: " + err.message)));
