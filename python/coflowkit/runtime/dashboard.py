"""What the master shows: its live dashboard (one page at ``/`` of its HTTP API),
the JSON endpoints the page reads, and the Prometheus text of ``/metrics``.

The page itself holds no data, so it is served without a token. Everything it
shows comes from the API (``/api/health``, ``/api/agents``, ``/api/coflows``,
``/api/links``, ``/api/rounds``) with the same bearer token as any client: the page
asks ``/api/auth`` whether one is needed and asks for it once, then keeps it in the
tab's ``sessionStorage``. It polls every second (``/?every=MS`` changes that). All of its
script is in this file: nothing is fetched from elsewhere, and every value is
written with ``textContent`` (never parsed as HTML).
"""

from __future__ import annotations

import collections

PAGE = r"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>coflowkit master</title>
<link rel="icon" href="data:,">
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body { font-family: sans-serif; margin: 1.2em 2em; color: #222; }
h1 { font-size: 1.3em; margin: 0 0 0.4em; }
h2 { font-size: 1.05em; margin: 1.2em 0 0.4em; }
#summary span { margin-right: 1.6em; }
#summary b { font-variant-numeric: tabular-nums; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { border-bottom: 1px solid #ddd; padding: 0.15em 0.6em; text-align: right; }
th { background: #f3f3f3; }
.bar { display: inline-block; width: 12em; height: 0.8em; background: #eee;
  vertical-align: middle; }
.bar > div { height: 100%; background: #3b7dd8; }
.link { display: flex; align-items: center; font-size: 0.85em; margin: 1px 0; }
.link .name { width: 9em; }
.link .pct { width: 4em; text-align: right; margin-left: 0.5em; }
#login { display: none; background: #fff6e0; border: 1px solid #e0c080; padding: 0.8em;
  margin-bottom: 1em; }
#error { color: #a00; }
.cols { display: flex; gap: 3em; flex-wrap: wrap; align-items: flex-start; }
svg text { font-size: 10px; fill: #555; }
</style></head><body>
<h1>coflowkit master</h1>
<form id="login">
  <label>API token (<code>coflowkit ca token</code>):
  <input id="token" type="password" size="48" autocomplete="off"></label>
  <button type="submit">Connect</button> <span id="login-msg"></span>
</form>
<div id="summary">
  <span>policy <b id="policy">-</b></span>
  <span>agents <b id="agents">-</b></span>
  <span>active coflows <b id="active">-</b></span>
  <span>rounds <b id="rounds">-</b></span>
  <span>round mean / max <b id="round-ms">-</b></span>
  <span>updated <b id="updated">never</b></span>
  <span id="error"></span>
</div>
<div class="cols">
<div>
<h2>Active coflows <small id="coflows-note"></small></h2>
<table id="coflows"><thead><tr>
<th>coflow</th><th>registered</th><th>class</th><th>flows</th><th>sent (MB)</th>
<th>progress</th><th>arrived (s)</th></tr></thead><tbody></tbody></table>
</div>
<div>
<h2>Link utilization <small id="links-note"></small></h2>
<div id="links"></div>
<h2>Round time (ms)</h2>
<svg id="rounds-plot" width="460" height="170" role="img" aria-label="round times"></svg>
</div>
</div>
<script>
"use strict";
const KEY = "coflowkit-token";
const EVERY = Number(new URLSearchParams(location.search).get("every")) || 1000;
const MAX_ROWS = 200, MAX_LINKS = 64;
let token = sessionStorage.getItem(KEY);
let timer = null;

class AuthError extends Error {}

async function api(path) {
  const headers = token ? { Authorization: "Bearer " + token } : {};
  const r = await fetch(path, { headers, cache: "no-store" });
  if (r.status === 401 || r.status === 403) throw new AuthError((await r.json()).error);
  if (!r.ok) throw new Error(path + ": HTTP " + r.status);
  return r.json();
}

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

function bar(fraction) {
  const b = el("span", undefined, "bar"), f = el("div");
  f.style.width = (100 * Math.max(0, Math.min(1, fraction))).toFixed(1) + "%";
  b.appendChild(f);
  return b;
}

function set(id, text) { document.getElementById(id).textContent = text; }

function showCoflows(coflows) {
  const active = coflows.filter(c => c.finish_s === null);
  active.sort((a, b) => (a.class ?? 99) - (b.class ?? 99) || a.arrival_s - b.arrival_s);
  set("active", String(active.length));
  set("coflows-note", active.length > MAX_ROWS ? `(first ${MAX_ROWS} of ${active.length})` : "");
  const body = document.querySelector("#coflows tbody");
  body.replaceChildren();
  for (const c of active.slice(0, MAX_ROWS)) {
    const tr = el("tr");
    tr.dataset.coflow = String(c.id);
    tr.appendChild(el("td", c.registered ? String(c.id) : "single flow"));
    tr.appendChild(el("td", c.registered ? "yes" : "no"));
    tr.appendChild(el("td", c.class === null ? "-" : String(c.class)));
    tr.appendChild(el("td", String(c.width)));
    tr.appendChild(el("td", (c.bytes_sent / 1e6).toFixed(2)));
    const p = el("td");
    if (c.progress === null) p.textContent = "size unknown";
    else { p.appendChild(bar(c.progress)); p.appendChild(el("span", " " + (100 * c.progress).toFixed(0) + "%")); }
    tr.appendChild(p);
    tr.appendChild(el("td", c.arrival_s.toFixed(1)));
    body.appendChild(tr);
  }
}

function showLinks(l) {
  const links = l.links.slice().sort((a, b) => b.utilization - a.utilization);
  set("links-note", `(${l.links.length} busy of ${2 * l.hosts}; ` +
      `${(l.capacity_bytes_per_s * 8 / 1e6).toFixed(0)} Mbit/s each)`);
  const box = document.getElementById("links");
  box.replaceChildren();
  for (const k of links.slice(0, MAX_LINKS)) {
    const row = el("div", undefined, "link");
    row.dataset.link = `${k.host}-${k.direction}`;
    row.appendChild(el("span", `host ${k.host} ${k.direction}`, "name"));
    row.appendChild(bar(k.utilization));
    row.appendChild(el("span", (100 * k.utilization).toFixed(0) + "%", "pct"));
    box.appendChild(row);
  }
  if (!links.length) box.appendChild(el("div", "no traffic scheduled"));
}

function showRounds(r) {
  const ms = v => (v * 1000).toFixed(2);
  set("rounds", String(r.rounds));
  set("round-ms", r.mean_s === null ? "-" : `${ms(r.mean_s)} / ${ms(r.max_s)} ms`);
  const svg = document.getElementById("rounds-plot");
  const W = svg.width.baseVal.value, H = svg.height.baseVal.value, L = 40, B = 18;
  svg.replaceChildren();
  const h = r.history;
  if (!h.length) return;
  const t0 = h[0].t_s, t1 = Math.max(h[h.length - 1].t_s, t0 + 1e-9);
  const top = Math.max(...h.map(p => p.round_s)) * 1.1 || 1e-3;
  const x = t => L + (W - L - 4) * (t - t0) / (t1 - t0);
  const y = v => (H - B) - (H - B - 4) * v / top;
  const ns = "http://www.w3.org/2000/svg";
  const line = document.createElementNS(ns, "polyline");
  line.setAttribute("points", h.map(p => `${x(p.t_s).toFixed(1)},${y(p.round_s).toFixed(1)}`).join(" "));
  line.setAttribute("fill", "none");
  line.setAttribute("stroke", "#3b7dd8");
  svg.appendChild(line);
  const axis = document.createElementNS(ns, "path");
  axis.setAttribute("d", `M${L},4 V${H - B} H${W - 4}`);
  axis.setAttribute("stroke", "#888");
  axis.setAttribute("fill", "none");
  svg.appendChild(axis);
  for (const [tx, ty, s, anchor] of [[L - 3, 12, ms(top), "end"], [L - 3, H - B, "0", "end"],
      [L, H - 4, `${t0.toFixed(0)} s`, "start"], [W - 4, H - 4, `${t1.toFixed(0)} s`, "end"]]) {
    const t = document.createElementNS(ns, "text");
    t.setAttribute("x", tx); t.setAttribute("y", ty); t.setAttribute("text-anchor", anchor);
    t.textContent = s;
    svg.appendChild(t);
  }
}

async function refresh() {
  try {
    if (!(await (await fetch("/api/auth", { headers: token ? { Authorization: "Bearer " + token } : {},
                                             cache: "no-store" })).json()).read) {
      throw new AuthError(token ? "this token cannot read the API" : "");
    }
    const [health, agents, coflows, links, rounds] = await Promise.all([
      api("/api/health"), api("/api/agents"), api("/api/coflows"), api("/api/links"),
      api("/api/rounds")]);
    document.getElementById("login").style.display = "none";
    set("policy", health.policy);
    set("agents", `${agents.connected.length} of ${agents.hosts}`);
    showCoflows(coflows);
    showLinks(links);
    showRounds(rounds);
    set("updated", new Date().toLocaleTimeString());
    set("error", "");
  } catch (e) {
    if (e instanceof AuthError) {
      clearInterval(timer); timer = null;
      if (token) set("login-msg", e.message);
      sessionStorage.removeItem(KEY); token = null;
      document.getElementById("login").style.display = "block";
      return;
    }
    set("error", "master unreachable: " + e.message);
  }
  if (timer === null) timer = setInterval(refresh, EVERY);
}

document.getElementById("login").addEventListener("submit", ev => {
  ev.preventDefault();
  token = document.getElementById("token").value.trim();
  sessionStorage.setItem(KEY, token);
  refresh();
});
refresh();
</script>
</body></html>
"""


def page() -> str:
    return PAGE


# -- the JSON endpoints the page reads (besides /api/health and /api/coflows) --------
# Each takes the master, its latest snapshot and its round log (a copy).


def agents(master, snap: dict, rounds: list) -> dict:
    """``GET /api/agents``: the cluster's size and the hosts whose agent has a session."""
    return {"hosts": master.hosts, "connected": snap.get("agent_hosts", [])}


def links(master, snap: dict, rounds: list) -> dict:
    """``GET /api/links``: the rates decided on each host's uplink and downlink in
    the latest round, from its flows (links that carry nothing are left out)."""
    rate: dict[tuple[int, str], float] = collections.defaultdict(float)
    for f in snap["flows"]:
        rate[(f["src"], "up")] += f["rate_bytes_per_s"]
        rate[(f["dst"], "down")] += f["rate_bytes_per_s"]
    cap = master.capacity
    return {
        "hosts": master.hosts,
        "capacity_bytes_per_s": cap,
        "links": [
            {"host": h, "direction": d, "rate_bytes_per_s": r, "utilization": r / cap}
            for (h, d), r in sorted(rate.items())
        ],
    }


def round_times(master, snap: dict, rounds: list) -> dict:
    """``GET /api/rounds``: the round count, Δ, the longest and mean round, and the
    latest rounds as (round number, seconds since the master started, round seconds,
    seconds of the cyclic garbage collector inside the round, CPU seconds of the
    thread that ran the round: the rest of a round is waiting, for the
    interpreter lock or for a core); the collector's
    passes, longest pass and full (generation 2) passes since the master started."""
    m = master.metrics
    return {
        "rounds": m["rounds"],
        "interval_s": master.interval,
        "max_s": m["round_seconds_max"],
        "mean_s": m["round_seconds_sum"] / m["rounds"] if m["rounds"] else None,
        "gc": {
            "collections": m["gc_collections"],
            "full_collections": m["gc_full_collections"],
            "seconds": m["gc_seconds_sum"],
            "max_s": m["gc_seconds_max"],
        },
        "history": [
            {"round": n, "t_s": t, "round_s": d, "gc_s": g, "cpu_s": c} for n, t, d, g, c in rounds
        ],
    }


def prometheus(master) -> str:
    """``GET /metrics``: the master's counters and gauges in Prometheus' text format."""
    m = master.metrics
    with master.lock:
        snap = master.snapshot
    active = sum(1 for c in snap["coflows"] if c["finish_s"] is None and c["bytes_sent"] > 0)
    sent = snap.get("total_sent", 0.0)
    busy = master.httpd.busy if master.httpd is not None else 0
    rows = [
        ("round_seconds", "summary", "Coordination round time (reports applied, decision, changes sent).",
         [("_sum", f"{m['round_seconds_sum']:.6f}"), ("_count", m["rounds"])]),
        ("round_seconds_max", "gauge", "Longest coordination round so far.", [("", f"{m['round_seconds_max']:.6f}")]),
        ("gc_seconds", "summary", "Passes of the cyclic garbage collector (any thread's).",
         [("_sum", f"{m['gc_seconds_sum']:.6f}"), ("_count", m["gc_collections"])]),
        ("gc_seconds_max", "gauge", "Longest pass of the cyclic garbage collector so far.",
         [("", f"{m['gc_seconds_max']:.6f}")]),
        ("gc_full_collections_total", "counter", "Full (generation 2) passes of the collector.",
         [("", m["gc_full_collections"])]),
        ("agents_connected", "gauge", "Agents with an authenticated session.", [("", snap["agents"])]),
        ("connections", "gauge", "Agent connections open (HELLO accepted or not).", [("", master.open_connections())]),
        ("accepted_connections_total", "counter", "Agent connections accepted (then TLS, HELLO, ...).",
         [("", m["accepted_connections"])]),
        ("coflows_active", "gauge", "Coflows with bytes sent and not finished.", [("", active)]),
        ("bytes_scheduled_total", "counter", "Bytes acknowledged on scheduled flows.", [("", f"{sent:.0f}")]),
        ("rejected_messages_total", "counter", "Agent sessions ended for a bad frame, certificate or claim.",
         [("", m["rejected_messages"])]),
        ("decisions_sent_total", "counter", "Decision changes pushed to agents.", [("", m["decisions_sent"])]),
        ("unresolved_flows", "gauge", "Reported flows held until their destination's agent connects.",
         [("", m["unresolved_flows"])]),
        ("refused_connections_total", "counter", "Connections refused at the --max-agents cap.",
         [("", m["refused_connections"])]),
        ("accept_errors_total", "counter", "Failed accepts (descriptors exhausted, aborted).", [("", m["accept_errors"])]),
        ("slow_agents_total", "counter", "Agents disconnected for not reading their decisions.", [("", m["slow_agents"])]),
        ("flows_finished_total", "counter", "Flows whose agent reported their end.", [("", m["finished_flows"])]),
        ("flow_bytes_finished_total", "counter", "Final bytes of the flows whose agent reported their end.",
         [("", f"{m['finished_bytes']:.0f}")]),
        ("lost_flows_total", "counter", "Flows ended because their agent restarted or was lost.", [("", m["lost_flows"])]),
        ("loop_errors_total", "counter", "Unexpected errors in the master's loop (logged).", [("", m["round_errors"])]),
        ("http_busy_total", "counter", "HTTP connections refused with 503 (in-flight cap).", [("", busy)]),
        ("event_items_pending", "gauge",
         "Agent messages the Rust session layer received and the master has not applied (--io rust).",
         [("", m["event_items_pending"])]),
    ]  # fmt: skip
    lines = []
    for name, kind, help_, samples in rows:
        lines += [f"# HELP coflowkit_{name} {help_}", f"# TYPE coflowkit_{name} {kind}"]
        lines += [f"coflowkit_{name}{suffix} {v}" for suffix, v in samples]
    return "\n".join(lines) + "\n"


ENDPOINTS = {"/api/agents": agents, "/api/links": links, "/api/rounds": round_times}
