// dgm serve's page. Everything a run recorded may come from an agent (origins, diffs,
// trajectories, test output): it goes into the DOM as text nodes only (el(), textContent),
// never as HTML. Steering sends the token in a header; without it the page only reads.
"use strict";

const $ = id => document.getElementById(id);
const S = { runs: [], run: null, token: "", tree: null, node: null, nodeJson: "",
            against: null, lastEvent: 0, events: [], tab: "tree", busy: false, again: false,
            progress: {}, lastToken: "", retry: null };

function el(tag, props, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "data") Object.assign(e.dataset, v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const kid of kids.flat(Infinity)) {
    if (kid === null || kid === undefined || kid === false) continue;
    e.append(kid instanceof Node ? kid : String(kid)); // a string becomes a text node
  }
  return e;
}
function fill(node, ...kids) { // replaceChildren, with nested arrays flattened as el() does
  node.replaceChildren(...kids.flat(Infinity).filter(k => k !== null && k !== undefined && k !== false));
}
const fmt$ = x => "$" + (x || 0).toFixed(x >= 1 ? 2 : 4);
const when = ts => new Date(ts * 1000).toLocaleTimeString();
const api = p => `/api/runs/${encodeURIComponent(S.run)}${p}`;

async function getJSON(url) {
  const r = await fetch(url, { cache: "no-store" });
  const body = await r.json().catch(() => ({ error: r.statusText }));
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}
async function post(path, body) {
  const r = await fetch(api(path), { method: "POST", body: JSON.stringify(body),
    headers: { "Content-Type": "application/json", "X-DGM-Token": S.token } });
  const out = await r.json().catch(() => ({ error: r.statusText }));
  if (!r.ok) { toast("refused: " + (out.error || r.status)); throw new Error(out.error); }
  return out;
}
function toast(text) {
  const t = $("toast"); t.textContent = text; t.hidden = false;
  clearTimeout(toast.timer); toast.timer = setTimeout(() => { t.hidden = true; }, 5000);
}
async function steer(action, args) {
  const row = await post("/steer", { action, args: args || {} });
  toast(`asked #${row.id}: ${row.action} ${JSON.stringify(row.args)}; the loop applies it between jobs`);
  refresh();
}

// -- token and runs --------------------------------------------------------------------
function setToken(token) {
  S.token = token || ""; sessionStorage.setItem("dgm-token", S.token);
  $("auth").textContent = S.token ? "steering enabled" : "read-only";
  $("auth").className = S.token ? "ok" : "ro";
  document.body.classList.toggle("readonly", !S.token);
}
function readHash() {
  const h = new URLSearchParams(location.hash.slice(1));
  if (h.get("token")) setToken(h.get("token")); else setToken(sessionStorage.getItem("dgm-token"));
  history.replaceState(null, "", location.pathname + (h.get("run") ? "#run=" + h.get("run") : ""));
  return h.get("run");
}
async function loadRuns(wanted) {
  S.runs = (await getJSON("/api/runs")).runs;
  const sel = $("run"); fill(sel, ...S.runs.map(r => el("option", { value: r.name }, r.name)));
  S.run = S.runs.some(r => r.name === wanted) ? wanted : S.run || (S.runs[0] || {}).name;
  sel.value = S.run;
  fill($("compare-runs"), ...S.runs.map((r, k) => el("label", {},
    el("input", { type: "checkbox", value: r.name, checked: k < 4, onchange: drawCompare }), r.name)));
}

// -- refresh on every change the stream reports -----------------------------------------
async function refresh() {
  clearTimeout(S.retry); // (a failed load tries again by itself, see below)
  if (S.busy) { S.again = true; return; }
  S.busy = true;
  const run = S.run; // the user may switch runs while this one loads: then load again
  try {
    const data = await getJSON(api("/tree"));
    if (S.run === run) await show(run, data); else S.again = true;
  } catch (e) { toast(String(e.message || e)); S.retry = setTimeout(refresh, 2000); }
  S.busy = false;
  if (S.again) { S.again = false; refresh(); }
}
async function show(run, data) {
  S.tree.setData(data);
  S.lastToken = data.token;
  $("tree-count").textContent = `${data.id.length} nodes` + (data.best !== null ? `, best ${data.best}` : "");
  if (S.node !== null) await openNode(S.node, true).catch(e => { S.node = null; toast(String(e.message || e)); });
  if (S.tab === "progress") once("progress", loadProgress); // may be slow: the tree goes on
  if (S.tab === "compare") once("compare", drawCompare);
  window.dgmShown = { run, token: data.token, nodes: data.id.length, at: performance.now() };
  if (window.dgmReady === undefined) window.dgmReady = performance.now();
}
const running = {};
async function once(name, load) { // one load of a kind at a time; a change meanwhile: once more
  if (running[name]) { running[name] = "again"; return; }
  running[name] = true;
  try { await load(); } catch (e) { toast(String(e.message || e)); }
  const again = running[name] === "again";
  running[name] = false;
  if (again) once(name, load);
}
function listen() {
  const live = $("live"), source = new EventSource("/api/stream");
  source.addEventListener("change", e => {
    const msg = JSON.parse(e.data);
    live.textContent = "\u25cf live " + new Date().toLocaleTimeString(); live.className = "ok";
    if (msg.run === S.run && msg.token !== S.lastToken) refresh();
    if (!S.runs.some(r => r.name === msg.run)) loadRuns(S.run);
  });
  source.onerror = () => { live.textContent = "\u25cf reconnecting"; live.className = "ro"; };
}

// -- the node page ---------------------------------------------------------------------
async function openNode(id, quiet) {
  const q = S.against !== null && S.against !== undefined ? `?against=${S.against}` : "";
  const run = S.run;
  const data = await getJSON(api(`/nodes/${id}${q}`));
  if (S.run !== run) return; // the user switched runs while it loaded
  const json = JSON.stringify(data);
  if (quiet && json === S.nodeJson) return;
  if (!quiet) $("trajectory").hidden = true;
  S.node = id; S.nodeJson = json;
  renderNode(data);
}
function selectNode(id) { S.against = null; openNode(id).catch(e => toast(e.message)); }

function diffView(text) {
  return el("pre", { class: "diff", id: "diff" }, text.split("\n").map(line => el("span", {
    class: line.startsWith("+") && !line.startsWith("+++") ? "add"
         : line.startsWith("-") && !line.startsWith("---") ? "del" : line.startsWith("@@") ? "hunk" : "" },
    line + "\n")));
}
function failedTests(r) { // the judge's per-test report: which expected tests did not pass
  const failed = Object.entries(r.tests_detail || {}).filter(([, v]) => !/pass/i.test(String(v))).map(([k]) => k);
  return failed.length ? "failed: " + failed.slice(0, 8).join(", ") + (failed.length > 8 ? ", ..." : "") : "";
}
function verdict(r) {
  return r.tampered ? "TAMPERED" : r.resolved ? "pass" : r.empty ? "empty" : r.error ? "error" : "fail";
}
function table(head, rows) {
  return el("table", {}, el("tr", {}, head.map(h => el("th", {}, h))), rows);
}
function renderNode(n) {
  const against = el("input", { id: "against", size: 5, value: n.diffBase ?? "" });
  const evalN = el("input", { id: "eval-count", size: 3, value: 1, type: "number", min: 1 });
  const start = el("input", { type: "checkbox", id: "fork-start" });
  const nodeLink = id => el("button", { class: "link", onclick: () => S.tree.centerOn(id) }, String(id));
  const steerBar = el("div", { class: "steer" },
    el("button", { id: "pin", onclick: () => steer("pin", { node: n.id }) }, "Pin"),
    el("button", { id: "ban", onclick: () => steer("ban", { node: n.id }) }, "Ban"),
    el("button", { id: "evaluate", onclick: () => steer("evaluate", { node: n.id, count: +evalN.value }) }, "Evaluate"), evalN, "more",
    el("button", { id: "fork", onclick: async () => {
      const out = await post("/fork", { node: n.id, start: start.checked });
      toast(`new run ${out.run} at ${out.path}` + (out.pid ? ` (started, pid ${out.pid})` : `; start it: ${out.start}`));
      loadRuns(S.run);
    } }, "New run from here"), el("label", {}, start, "start it"));
  const results = n.results.map(r => el("tr", { class: verdict(r) },
    el("td", {}, r.task), el("td", {}, verdict(r)), el("td", {}, `${r.tests[0] ?? "-"}/${r.tests[1] ?? "-"}`),
    el("td", {}, r.agent_s === null ? "-" : r.agent_s.toFixed(1) + " s"), el("td", {}, fmt$(r.cost)),
    el("td", { class: "small" }, r.evidence ? "judge: " + r.evidence : r.error || failedTests(r)),
    el("td", {}, r.trajectory ? el("button", { class: "traj", data: { task: r.task },
      onclick: () => openTrajectory(n.id, r.task) }, "trajectory") : "")));
  const solved = n.results.filter(r => r.resolved).length;
  const calls = n.calls.map(c => el("tr", {}, el("td", {}, when(c.ts)), el("td", {}, c.role || ""),
    el("td", {}, c.task_id || ""), el("td", {}, c.model || ""), el("td", {}, `${c.input_tokens}/${c.output_tokens}`),
    el("td", {}, fmt$(c.cost_usd)), el("td", {}, c.latency_s ? c.latency_s.toFixed(2) + " s" : ""),
    el("td", { class: "small" }, c.error || "")));
  $("node").className = "";
  $("node").dataset.node = n.id;
  fill($("node"),
    el("h2", {}, `Node ${n.id} `, el("span", { class: "tag" }, n.status), n.mark ? el("span", { class: "tag " + n.mark }, n.mark) : ""),
    el("div", { class: "small" }, "parent ", n.parent === null ? "none (seed)" : nodeLink(n.parent),
      ` · depth ${n.depth} · ${new Date(n.created * 1000).toLocaleString()} · commit ${n.commit.slice(0, 10)}`,
      n.children.length ? [" · children ", n.children.slice(0, 30).map(c => [nodeLink(c), " "])] : ""),
    steerBar,
    el("h3", {}, "Origin (problem statement)"), el("pre", { class: "text", id: "origin" }, n.origin),
    n.warnings.length ? [el("h3", {}, "Static tamper warnings"), el("ul", {}, n.warnings.map(w => el("li", {}, w)))] : "",
    el("h3", {}, "Diff against node ", against, el("button", { onclick: () => {
      S.against = against.value === "" ? null : +against.value; openNode(n.id).catch(e => toast(e.message)); } }, "Show")),
    diffView(n.diff || "(no change)"),
    el("h3", {}, `Tasks: ${solved} of ${n.results.length} solved`),
    table(["task", "verdict", "tests", "agent", "cost", "evidence / error", ""], results),
    el("h3", {}, "LLM spend: ", Object.entries(n.spend).map(([k, v]) => `${k} ${fmt$(v)}`).join(", ") || "none"),
    table(["when", "role", "task", "model", "tokens in/out", "cost", "latency", "error"], calls),
    Object.keys(n.meta).length ? [el("h3", {}, "Metadata"), el("dl", {}, Object.entries(n.meta).map(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]))] : "");
}

async function openTrajectory(node, task) {
  const t = await getJSON(api(`/nodes/${node}/trajectory?task=${encodeURIComponent(task)}`));
  const box = $("trajectory"), tr = t.trajectory;
  const steps = tr ? tr.turns.map(turn => el("div", { class: "step" },
    el("h4", {}, `Step ${turn.step}`, turn.llm_s ? ` · ${turn.llm_s.toFixed(1)} s` : ""),
    turn.content ? el("pre", { class: "text" }, turn.content) : "",
    turn.tool_calls.map(c => el("div", { class: "tool" },
      el("div", { class: "small" }, `${c.name}(${c.arguments})`, c.ok === false ? " · failed" : ""),
      c.output !== null ? el("pre", { class: "text out" }, c.output) : "")),
    turn.notes.map(note => el("pre", { class: "text note" }, note)))) : [el("p", {}, "No trajectory was recorded.")];
  box.hidden = false;
  box.dataset.task = t.task;
  fill(box,
    el("h2", {}, `Trajectory: node ${node} on ${t.task} `, el("button", { onclick: () => { box.hidden = true; } }, "close")),
    tr ? el("div", { class: "small" }, `${tr.exit_status || "unfinished"} ${tr.exit_message || ""} · ${tr.turns.length} steps · from ${tr.source}`) : "",
    tr ? tr.prompt.map(m => el("details", {}, el("summary", {}, `prompt: ${m.role}`), el("pre", { class: "text" }, m.content))) : "",
    steps,
    el("h3", {}, "Patch"), el("pre", { class: "diff" }, t.patch || "(none)"),
    el("h3", {}, "Test output (judge)"), el("pre", { class: "text" }, t.testOutput || "(none)"));
  box.scrollIntoView();
}

// -- progress, steering the run, events -----------------------------------------------
async function loadProgress() {
  const p = await getJSON(api(`/progress?events_since=${S.lastEvent}`));
  S.progress[S.run] = p;
  const axis = $("x-axis").value, g = p.progress;
  drawChart($("progress-chart"), [
    { label: "best so far", x: g[axis], y: g.best },
    { label: "archive mean", x: g[axis], y: g.mean, dash: true }],
    { evals: "evaluations", dollars: "dollars", seconds: "seconds" }[axis]);
  const lim = p.limits;
  $("run-facts").textContent = `${p.name} · ${p.strategy} · spent ${fmt$(p.spend)} of ` +
    `${lim.budget_usd ? fmt$(lim.budget_usd) : "no cap"} · eval limit ${lim.max_evals ?? "none"} · workers ${lim.workers}`;
  const input = (id, v) => el("input", { id, size: 6, value: v ?? "" });
  const budget = input("budget", lim.budget_usd), evals = input("max-evals", lim.max_evals), workers = input("workers", lim.workers);
  if (!$("run-steer").childElementCount) fill($("run-steer"), 
    el("button", { id: "stop", onclick: () => { if (confirm("Stop this run gracefully?")) steer("stop"); } }, "Stop gracefully"),
    el("div", {}, "budget $", budget, el("button", { onclick: () => steer("budget", { usd: +budget.value }) }, "Set")),
    el("div", {}, "eval limit ", evals, el("button", { onclick: () => steer("eval_limit", { max_evals: +evals.value }) }, "Set")),
    el("div", {}, "workers ", workers, el("button", { onclick: () => steer("workers", { workers: +workers.value }) }, "Set")));
  fill($("spend"), ...Object.entries(p.spendByRole).map(([k, v]) => el("tr", {}, el("td", {}, k), el("td", {}, fmt$(v)))));
  fill($("running"), el("tr", {}, ["job", "kind", "node", "task", "for", "where"].map(h => el("th", {}, h))),
    ...p.running.map(j => el("tr", {}, [j.id, j.kind, j.node, j.task || "", `${j.for_s} s`, j.where].map(v => el("td", {}, v ?? "")))));
  fill($("steering"), el("tr", {}, ["#", "asked", "action", "who", "answer"].map(h => el("th", {}, h))),
    ...p.steering.slice().reverse().map(r => el("tr", {}, el("td", {}, r.id), el("td", {}, when(r.ts)),
      el("td", {}, `${r.action} ${JSON.stringify(r.args)}`), el("td", {}, r.who), el("td", {}, r.state + (r.note ? ": " + r.note : "")))));
  if (p.events.length) S.lastEvent = p.events[p.events.length - 1].id;
  S.events = S.events.concat(p.events).slice(-500);
  const line = e => { const { id, ts, kind, ...rest } = e; return `${when(ts)} ${kind} ${JSON.stringify(rest)}`; };
  fill($("events"), ...S.events.slice().reverse().map(e => el("li", { class: "ev-" + e.kind }, line(e))));
  fill($("pauses"), ...S.events.filter(e => /paus|resum/.test(e.kind)).map(e => el("li", {}, line(e))));
}

async function drawCompare() {
  const names = [...document.querySelectorAll("#compare-runs input:checked")].map(i => i.value);
  const axis = $("compare-x").value, series = [];
  for (const name of names) {
    const p = await getJSON(`/api/runs/${encodeURIComponent(name)}/progress?events_since=999999999999`);
    series.push({ label: `${name} (${p.strategy})`, x: p.progress[axis], y: p.progress.best });
  }
  drawChart($("compare-chart"), series, axis);
  window.dgmCompared = series.map(x => x.label);
}

// -- wiring ----------------------------------------------------------------------------
function showTab(tab) {
  S.tab = tab;
  document.querySelectorAll("nav button").forEach(b => b.classList.toggle("on", b.dataset.tab === tab));
  document.querySelectorAll(".tab").forEach(s => s.classList.toggle("on", s.id === "tab-" + tab));
  if (tab === "tree") S.tree.dirty = true;
  refresh();
}
function filters() {
  S.tree.filters = { tampered: $("f-tampered").checked, improve: $("f-improve").checked, minScore: +$("f-score").value || 0 };
  S.tree.dirty = true;
}
window.addEventListener("DOMContentLoaded", async () => {
  S.tree = new LineageTree($("tree"), selectNode);
  window.dgmTree = S.tree;
  const wanted = readHash();
  document.querySelectorAll("nav button").forEach(b => b.addEventListener("click", () => showTab(b.dataset.tab)));
  $("token").addEventListener("change", e => { setToken(e.target.value.trim()); e.target.value = ""; });
  $("run").addEventListener("change", e => {
    S.run = e.target.value; S.node = null; S.lastEvent = 0; S.events = []; S.tree.fitted = false;
    S.tree.collapsed.clear(); fill($("run-steer")); refresh();
  });
  $("find-go").addEventListener("click", () => { if (!S.tree.centerOn(+$("find").value)) toast("no node " + $("find").value); });
  $("find").addEventListener("keydown", e => { if (e.key === "Enter") $("find-go").click(); });
  $("zoom-in").addEventListener("click", () => S.tree.zoom(1.5));
  $("zoom-out").addEventListener("click", () => S.tree.zoom(1 / 1.5));
  $("fit").addEventListener("click", () => S.tree.fit());
  $("collapse").addEventListener("click", () => { if (S.tree.selected !== null) S.tree.toggleCollapse(S.tree.selected); });
  ["f-tampered", "f-improve", "f-score"].forEach(id => $(id).addEventListener("input", filters));
  $("x-axis").addEventListener("change", loadProgress);
  $("compare-x").addEventListener("change", drawCompare);
  await loadRuns(wanted);
  await refresh();
  listen();
});
