// dgm report: draws the lineage tree, node details, progress charts and the task heatmap
// from the JSON blob embedded in the page. No network, no libraries.
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("dgm-data").textContent);
  const byId = new Map(D.nodes.map((n) => [n.id, n]));
  const SLOT = 14, LEVEL = 56, PAD = 16;  // radius stays < SLOT / 2: circles never overlap
  const $ = (id) => document.getElementById(id);
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) =>
    ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
  const pct = (p, t) => (t ? `${p}/${t} (${Math.round((100 * p) / t)}%)` : "–/–");
  const usd = (x) => "$" + Number(x || 0).toFixed(x >= 100 ? 0 : 2);
  const when = (t) => new Date(t * 1000).toLocaleString();
  const maxOf = (xs, start) => xs.reduce((m, v) => (v > m ? v : m), start);
  let selected = null, zoom = 1;

  // Score colour: red (0%) -> amber -> green (100%); grey when never evaluated.
  function colour(n) {
    if (!n.total) return "#c9ced6";
    const r = n.passed / n.total, h = Math.round(4 + 126 * r);
    return `hsl(${h}, 62%, ${48 - 6 * r}%)`;
  }
  const radius = (n) => Math.min(6.5, 2.5 + Math.sqrt(n.total));

  // ---- summary ---------------------------------------------------------------------
  function summary() {
    const r = D.run;
    $("run-name").textContent = r.name;
    const best = r.best !== null ? byId.get(r.best) : null;
    $("summary").innerHTML = [
      `<span>strategy <b>${esc(r.strategy)}</b></span>`,
      `<span><b>${r.nodes}</b> nodes</span>`,
      `<span><b>${r.evaluations}</b> evaluations on ${D.tasks.length} tasks</span>`,
      `<span>spend <b>${usd(r.spend)}</b></span>`,
      ...costSpans(D.costs),
      best ? `<span>best <a href="#node-${best.id}" data-go="${best.id}">node ${best.id}</a>
        <b>${pct(best.passed, best.total)}</b></span>` : "<span>no evaluated node yet</span>",
      ...tamperedSpans(r.tampered),
      `<span class="muted">generated ${when(r.generated)}</span>`,
    ].join("");
    $("legend").innerHTML =
      `score <i class="swatch" style="background:hsl(4,62%,48%)"></i>0%` +
      `<i class="swatch" style="background:hsl(67,62%,45%)"></i>50%` +
      `<i class="swatch" style="background:hsl(130,62%,42%)"></i>100%` +
      `<i class="swatch" style="background:#c9ced6"></i>not evaluated` +
      `<i class="swatch" style="border:2px solid var(--best)"></i>best lineage` +
      ` · size: evaluations · faded: rejected`;
  }

  // Nodes the judge caught tampering with the test run: named loudly, never best.
  function tamperedSpans(t) {
    const ids = Object.keys(t || {});
    if (!ids.length) return [];
    const n = ids.reduce((s, k) => s + t[k], 0);
    return [`<span class="tampered">TAMPERED: ${n} evaluation(s) on node(s) ` +
      ids.map((k) => `<a data-go="${k}">${k}</a>`).join(", ") + ` (never best or exported)</span>`];
  }

  // ---- tree ------------------------------------------------------------------------
  const px = (n) => PAD + n.x * SLOT, py = (n) => PAD + n.depth * LEVEL;
  function drawTree() {
    const width = PAD * 2 + SLOT * maxOf(D.nodes.map((n) => n.x), 0),
      height = PAD * 2 + LEVEL * maxOf(D.nodes.map((n) => n.depth), 0);
    const edges = { normal: [], muted: [], path: [] };
    for (const n of D.nodes) {
      if (n.parent === null) continue;
      const p = byId.get(n.parent), mid = py(p) + LEVEL / 2;
      const d = `M${px(p)} ${py(p)}V${mid}H${px(n)}V${py(n)}`;
      (n.onPath ? edges.path : n.status === "rejected" ? edges.muted : edges.normal).push(d);
    }
    const parts = [
      `<path class="edges" d="${edges.normal.join("")}"/>`,
      `<path class="edges muted" d="${edges.muted.join("")}"/>`,
      `<path class="edges path" d="${edges.path.join("")}"/>`,
    ];
    const labels = D.nodes.length <= 200;
    for (const n of D.nodes) {
      const cls = "n" + (n.status === "rejected" ? " rejected" : "") + (n.tampered.length ? " tampered" : "");
      parts.push(`<circle class="${cls}" data-id="${n.id}" cx="${px(n)}" cy="${py(n)}" ` +
        `r="${radius(n)}" fill="${colour(n)}"><title>node ${n.id}: ` +
        `${pct(n.passed, n.total)}, ${usd(n.cost)}${n.status !== "active" ? ", " + n.status : ""}` +
        `${n.tampered.length ? ", TAMPERED" : ""}${n.marks.map((m) => ", " + m).join("")}` +
        `</title></circle>`);
      if (n.onPath) parts.push(`<circle class="ring" cx="${px(n)}" cy="${py(n)}" r="${radius(n) + 3}"/>`);
      if (labels) parts.push(`<text x="${px(n) + 8}" y="${py(n) - 6}">${n.id}` +
        `${n.marks.length ? " [" + esc(n.marks.join(", ")) + "]" : ""}</text>`);
    }
    const svg = $("tree");
    svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    svg.dataset.w = width;
    svg.dataset.h = height;
    svg.innerHTML = parts.join("");
    svg.addEventListener("click", (e) => {
      const c = e.target.closest("circle[data-id]");
      if (c) select(Number(c.dataset.id));
    });
    const fit = () => $("tree-scroll").clientWidth / width;
    const setZoom = (z) => {
      zoom = Math.max(0.2, Math.min(4, z));
      svg.setAttribute("width", width * zoom);
      svg.setAttribute("height", height * zoom);
    };
    $("zoom-in").onclick = () => setZoom(zoom * 1.4);
    $("zoom-out").onclick = () => setZoom(zoom / 1.4);
    $("zoom-fit").onclick = () => setZoom(fit());
    setZoom(Math.min(1.6, Math.max(0.35, fit())));
  }

  function reveal(id) {
    const c = document.querySelector(`#tree circle[data-id="${id}"]`);
    if (!c) return;
    const box = $("tree-scroll"), r = c.getBoundingClientRect(), b = box.getBoundingClientRect();
    if (r.left < b.left || r.right > b.right || r.top < b.top || r.bottom > b.bottom) {
      box.scrollLeft += r.left - b.left - b.width / 2;
      box.scrollTop += r.top - b.top - b.height / 2;
    }
  }

  // ---- details ---------------------------------------------------------------------
  function select(id) {
    const n = byId.get(id);
    if (!n) return;
    if (selected !== null) {
      const old = document.querySelector(`#tree circle[data-id="${selected}"]`);
      if (old) old.classList.remove("sel");
    }
    selected = id;
    const c = document.querySelector(`#tree circle[data-id="${id}"]`);
    if (c) c.classList.add("sel");
    if (location.hash !== `#node-${id}`) history.replaceState(null, "", `#node-${id}`);
    const el = $("details");
    el.dataset.node = id;
    el.innerHTML = details(n);
    el.scrollTop = 0;
  }

  function ancestry(n) {
    const chain = [];
    for (let a = n; a; a = a.parent === null ? null : byId.get(a.parent)) chain.push(a);
    return chain.reverse();
  }

  function details(n) {
    const crumbs = ancestry(n).map((a) => a.id === n.id ? `<b>${a.id}</b>` :
      `<a data-go="${a.id}">${a.id}</a>`).join(" → ");
    const kids = D.nodes.filter((k) => k.parent === n.id).map((k) => `<a data-go="${k.id}">${k.id}</a>`);
    const rows = [
      ["lineage", `<span class="crumbs">${crumbs}</span>`],
      ["score", `<b>${pct(n.passed, n.total)}</b>${n.best ? " ★ best node" : ""}`],
      ["status", esc(n.status)],
      ["cost", usd(n.cost)],
      ...(n.made ? [["made by", `expansion: ${cents(n.made.cost_usd)}, ${n.made.calls} calls; ${tokenText(n.made)}`]] : []),
      ["created", when(n.created)],
      ["commit", `<code>${n.commit.slice(0, 12)}</code>`],
      ["children", kids.join(", ") || "–"],
      ...Object.entries(n.meta).map(([k, v]) => [esc(k), esc(v)]),
    ];
    let html = `<h2>Node ${n.id}</h2><table class="kv">` +
      rows.map(([k, v]) => `<tr><td>${k}</td><td>${v}</td></tr>`).join("") + "</table>";
    if (n.tampered.length) html += `<div class="tampered"><h3>TAMPERED: the judge caught this ` +
      `agent's patch interfering with the test run in ${n.tampered.length} evaluation(s)</h3>` +
      `<p>Counted as failures; this node is never best and never exported.</p><ul>` +
      n.tampered.map((w) => `<li><code>${esc(w)}</code></li>`).join("") + "</ul></div>";
    html += `<h3>Origin</h3><div class="origin">${esc(n.origin)}</div>`;
    if (n.warnings.length) html += `<h3>Tamper scan: ${n.warnings.length} warning(s), not a verdict</h3>` +
      `<ul class="warnings">${n.warnings.map((w) => `<li><code>${esc(w)}</code></li>`).join("")}</ul>`;
    html += usageTable(n);
    html += evalTable(n);
    html += n.parent === null ? `<h3>Code</h3><p class="muted">The seed: the whole codebase.</p>`
      : `<h3>Diff against node ${n.parent}</h3>` +
        (n.diff ? `<pre class="diff">${colourDiff(n.diff)}</pre>` : `<p class="muted">No change.</p>`);
    return html;
  }

  function costSpans(c) {
    const spans = [["expansion", "expansions"], ["evaluation", "evaluations"]]
      .filter(([k]) => c.byKind[k].jobs)
      .map(([k, label]) => `<span>${label} <b>${usd(c.byKind[k].cost_usd)}</b>` +
        ` (${cents(c.byKind[k].cost_usd / c.byKind[k].jobs)} each)</span>`);
    const p = c.perPoint;
    if (p) spans.push(p.usd_per_task === null ? `<span class="muted">no task gained over the seed yet</span>` :
      `<span title="run spend / tasks the best node solves beyond the seed (${p.gained} of ${p.common})">` +
      `<b>${usd(p.usd_per_task)}</b> per additional task solved</span>`);
    return spans;
  }

  // Per-job dollars are often under a cent: show them to a hundredth of a cent.
  const cents = (x) => "$" + Number(x || 0).toFixed(x >= 1 ? 2 : 4);

  function tokenText(s) {
    return `${s.input_tokens} in (${s.cached_tokens} cached, ${s.cache_write_tokens} cache write), ` +
      `${s.output_tokens} out`;
  }

  function usageTable(n) {
    const roles = Object.entries(n.usage);
    if (!roles.length) return `<h3>LLM usage</h3><p class="muted">No calls recorded.</p>`;
    return `<h3>LLM usage by role</h3><table><tr><th>role</th><th>calls</th><th>in tokens</th>` +
      `<th>out tokens</th><th>cost</th></tr>` + roles.map(([role, [c, i, o, d]]) =>
        `<tr><td>${esc(role)}</td><td>${c}</td><td>${i}</td><td>${o}</td><td>${usd(d)}</td></tr>`).join("") +
      "</table>";
  }

  const VERDICT = { P: "passed", F: "failed", E: "empty patch", X: "error", T: "TAMPERED" };
  const LINK_LABEL = ["trajectory", "test output", "patch", "llm log"];
  function evalTable(n) {
    if (!n.evals.length) return `<h3>Tasks</h3><p class="muted">Not evaluated.</p>`;
    const rows = n.evals.map(([t, v, tp, tt, secs, cost, log, mask, stage, err]) => {
      const links = D.linkedFiles.map((f, i) => (mask >> i) & 1 ?
        `<a href="${esc(D.runHref + D.logDirs[log] + "/" + f)}">${LINK_LABEL[i]}</a>` : "")
        .filter(Boolean).join(" · ");
      return `<tr><td>${esc(D.tasks[t])}${stage > 1 ? ` <span class="muted">(stage ${stage})</span>` : ""}` +
        `${err ? `<div class="muted">${esc(err)}</div>` : ""}</td>` +
        `<td class="v-${v}">${VERDICT[v]}</td><td>${tt ? `${tp}/${tt}` : ""}</td>` +
        `<td>${secs === null ? "" : secs + " s"}</td><td>${usd(cost)}</td><td>${links}</td></tr>`;
    });
    const solved = n.evals.filter((e) => e[1] === "P").length;
    return `<h3>Tasks: ${solved} of ${n.evals.length} solved</h3><table><tr><th>task</th>` +
      `<th>result</th><th>tests</th><th>agent</th><th>cost</th><th>logs</th></tr>${rows.join("")}</table>`;
  }

  // Diff lines coloured by kind; code tokens coloured by a small language-agnostic lexer.
  const KEYWORDS = new Set(("def class return if elif else for while in not and or import from " +
    "as with try except finally raise lambda yield pass break continue None True False self " +
    "function const let var new this null undefined true false func package type struct " +
    "interface go defer fn let mut impl pub use match enum trait public private static void " +
    "int long double float bool string auto template namespace include switch case").split(" "));
  function tokens(code, hash) {
    const re = hash ? /(#.*$)|("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')|\b(\d+(?:\.\d+)?)\b|([A-Za-z_]\w*)/g
      : /(\/\/.*$)|("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)|\b(\d+(?:\.\d+)?)\b|([A-Za-z_]\w*)/g;
    let out = "", last = 0, m;
    while ((m = re.exec(code))) {
      out += esc(code.slice(last, m.index));
      const cls = m[1] ? "com" : m[2] ? "str" : m[3] ? "num" : KEYWORDS.has(m[4]) ? "kw" : "";
      out += cls ? `<span class="t-${cls}">${esc(m[0])}</span>` : esc(m[0]);
      last = re.lastIndex;
    }
    return out + esc(code.slice(last));
  }
  function colourDiff(diff) {
    let hash = true;
    return diff.split("\n").map((line) => {
      if (line.startsWith("diff --git")) {
        hash = /\.(py|sh|toml|ya?ml|rb|txt|md|cfg)$/.test(line) || !/\.\w+$/.test(line);
        return `<div class="d-file">${esc(line)}</div>`;
      }
      if (/^(index |--- |\+\+\+ |new file|deleted file|similarity|rename )/.test(line))
        return `<div class="d-file">${esc(line)}</div>`;
      if (line.startsWith("@@")) return `<div class="d-hunk">${esc(line)}</div>`;
      const cls = line[0] === "+" ? "d-add" : line[0] === "-" ? "d-del" : "";
      return `<div class="${cls}">${esc(line[0] || "")}${tokens(line.slice(1), hash)}</div>`;
    }).join("");
  }

  // ---- charts ----------------------------------------------------------------------
  function ticks(max) {
    if (max <= 0) return [0];
    const step = Math.pow(10, Math.floor(Math.log10(max))), n = max / step;
    const s = n > 5 ? step * 2 : n > 2 ? step : step / 2;
    const out = [];
    for (let v = 0; v <= max * 1.0001; v += s) out.push(+v.toPrecision(6));
    return out;
  }
  function lineChart(title, xs, xfmt, ser) {
    const W = 360, H = 210, L = 40, R = 10, T = 22, B = 30;
    const xmax = maxOf(xs, 1e-9), X = (v) => L + ((W - L - R) * v) / xmax,
      Y = (v) => H - B - (H - T - B) * v;
    let g = `<text class="title" x="${L}" y="14">${title}</text>`;
    g += `<line class="axis" x1="${L}" y1="${H - B}" x2="${W - R}" y2="${H - B}"/>` +
      `<line class="axis" x1="${L}" y1="${T}" x2="${L}" y2="${H - B}"/>`;
    for (const v of [0, 0.25, 0.5, 0.75, 1])
      g += `<text x="${L - 4}" y="${Y(v) + 3}" text-anchor="end">${v * 100}%</text>`;
    for (const v of ticks(xmax))
      g += `<text x="${X(v)}" y="${H - B + 13}" text-anchor="middle">${xfmt(v)}</text>`;
    for (const [cls, ys] of ser) {
      if (!ys.length) continue;
      let d = `M${X(xs[0])} ${Y(ys[0])}`;
      for (let i = 1; i < ys.length; i++) d += `H${X(xs[i]).toFixed(1)}V${Y(ys[i]).toFixed(1)}`;
      g += `<path class="${cls}" d="${d}"/>`;
    }
    g += `<text x="${W - R}" y="${T}" text-anchor="end"><tspan fill="#137333">━ best so far</tspan>` +
      ` <tspan fill="#0a58ca">╌ archive mean</tspan></text>`;
    return `<div class="chart"><svg viewBox="0 0 ${W} ${H}">${g}</svg></div>`;
  }
  function barChart(title, entries) {
    const W = 360, rowH = 22, L = 110, T = 24, H = T + rowH * Math.max(1, entries.length) + 8;
    const max = maxOf(entries.map((e) => e[1]), 1e-9);
    let g = `<text class="title" x="4" y="14">${title}</text>`;
    entries.forEach(([k, v], i) => {
      const y = T + i * rowH, w = ((W - L - 60) * v) / max;
      g += `<text x="${L - 6}" y="${y + 14}" text-anchor="end">${esc(k)}</text>` +
        `<rect class="bar" x="${L}" y="${y + 3}" width="${w}" height="${rowH - 8}"/>` +
        `<text x="${L + w + 4}" y="${y + 14}">${usd(v)}</text>`;
    });
    if (!entries.length) g += `<text x="4" y="${T + 14}">no LLM calls recorded</text>`;
    return `<div class="chart"><svg viewBox="0 0 ${W} ${H}">${g}</svg></div>`;
  }
  function drawCharts() {
    const p = D.progress, s = [["best", p.best], ["mean", p.mean]];
    const hours = maxOf(p.seconds, 0) > 7200;
    $("charts").innerHTML = p.evals.length ? [
      lineChart("Score vs evaluations", p.evals, (v) => v, s),
      lineChart("Score vs dollars", p.dollars, (v) => "$" + v, s),
      lineChart("Score vs wall-clock", p.seconds.map((v) => (hours ? v / 3600 : v / 60)),
        (v) => v + (hours ? " h" : " min"), s),
      barChart("Spend by role", Object.entries(D.spendByRole).sort((a, b) => b[1] - a[1])),
    ].join("") : `<p class="muted">No evaluations yet.</p>` +
      barChart("Spend by role", Object.entries(D.spendByRole));
  }

  // ---- heatmap ---------------------------------------------------------------------
  const HEAT = { P: "#2e9e4f", F: "#e8a8a3", E: "#f3c77a", X: "#b58bd1", T: "#000000", ".": "#f1f3f5" };
  function drawHeat() {
    const rows = D.nodes.filter((n) => n.heat).sort((a, b) => a.x - b.x || a.depth - b.depth);
    const canvas = $("heat");
    if (!rows.length || !D.tasks.length) { canvas.remove(); $("heat-hint").textContent = "(none yet)"; return; }
    const cw = Math.max(4, Math.min(16, Math.floor(1100 / D.tasks.length)));
    const ch = rows.length > 300 ? 4 : rows.length > 80 ? 7 : 14, left = 56;
    canvas.width = left + cw * D.tasks.length;
    canvas.height = ch * rows.length;
    const ctx = canvas.getContext("2d");
    ctx.font = `${Math.min(11, ch)}px sans-serif`;
    rows.forEach((n, r) => {
      if (ch >= 7) { ctx.fillStyle = n.onPath ? "#b07d00" : "#555"; ctx.fillText(`node ${n.id}`, 2, r * ch + ch - 2); }
      for (let t = 0; t < n.heat.length; t++) {
        ctx.fillStyle = HEAT[n.heat[t]];
        ctx.fillRect(left + t * cw, r * ch, cw - (cw > 5 ? 1 : 0), ch - (ch > 5 ? 1 : 0));
      }
    });
    $("heat-hint").textContent = `(${rows.length} evaluated nodes × ${D.tasks.length} tasks; ` +
      `rows in tree order; green: solved, red: failed, amber: empty patch, purple: error, black: tampered)`;
    const at = (e) => {
      const b = canvas.getBoundingClientRect();
      const r = Math.floor((e.clientY - b.top) / ch), t = Math.floor((e.clientX - b.left - left) / cw);
      return [rows[r], t >= 0 && t < D.tasks.length ? t : -1];
    };
    canvas.addEventListener("mousemove", (e) => {
      const [n, t] = at(e);
      $("heat-tip").textContent = n ? `node ${n.id} ${pct(n.passed, n.total)}` +
        (t >= 0 ? ` · ${D.tasks[t]}: ${VERDICT[n.heat[t]] || "not evaluated"}` : "") : " ";
    });
    canvas.addEventListener("click", (e) => {
      const [n] = at(e);
      if (n) { select(n.id); reveal(n.id); }
    });
  }

  // ---- wiring ----------------------------------------------------------------------
  document.addEventListener("click", (e) => {
    const a = e.target.closest("[data-go]");
    if (a) { e.preventDefault(); select(Number(a.dataset.go)); reveal(Number(a.dataset.go)); }
  });
  summary();
  drawTree();
  drawCharts();
  drawHeat();
  $("goto-best").onclick = () => { if (D.run.best !== null) { select(D.run.best); reveal(D.run.best); } };
  const fromHash = /^#node-(\d+)$/.exec(location.hash);
  const first = fromHash ? Number(fromHash[1]) : D.run.best;
  if (first !== null && byId.has(first)) { select(first); reveal(first); }
  window.dgmReady = performance.now();
})();
