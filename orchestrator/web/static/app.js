// KernelArena's browser front end: hash routes over the JSON API of orchestrator/web/app.py.
// No build step and no framework: each page is a function that fetches and renders.
"use strict";

const view = document.getElementById("view");
const crumbs = document.getElementById("crumbs");
const live = document.getElementById("live");
const sortState = {};          // table id -> {col, dir}, kept across live re-renders
let renderToken = 0;           // a newer render cancels an older one's late writes
let plotlyLoading = null;

// ---------- helpers ----------
function esc(s) {
  return String(s === null || s === undefined ? "" : s).replace(/[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}
function num(v, d = 2) { return v === null || v === undefined ? "–" : Number(v).toFixed(d); }
function speed(v, d = 3) {
  // leaderboard.sig: d significant digits, plain from 0.001 up, scientific below (4.00e-06).
  if (v === null || v === undefined || !Number.isFinite(Number(v))) return "–";
  v = Number(v);
  if (v === 0) return "0";
  const e = Math.floor(Math.log10(Math.abs(v)));
  if (e < -3) {
    const [m, x] = v.toExponential(d - 1).split("e");
    return `${m}e${x[0] === "-" ? "-" : "+"}${String(Math.abs(parseInt(x, 10))).padStart(2, "0")}`;
  }
  const decimals = Math.max(0, d - 1 - e);
  let text = v.toFixed(decimals);
  if (decimals && text.replace(/[-.]/g, "").replace(/^0+/, "").length > d) text = v.toFixed(decimals - 1);
  return text;
}
function ms(v) { return v === null || v === undefined ? "–" : `${speed(v)} ms`; }
function pct(v) { return v === null || v === undefined ? "–" : (100 * v).toFixed(v < 0.1 ? 1 : 0) + "%"; }
function money(v) { return v === null || v === undefined ? "–" : "$" + (v >= 1 ? v.toFixed(2) : v.toFixed(4)); }
function ci(pair, d = 3) { return pair ? `[${speed(pair[0], d)}, ${speed(pair[1], d)}]` : ""; }
function ago(ts) {
  if (!ts) return "–";
  const s = Math.max(0, Date.now() / 1000 - ts);
  if (s < 60) return `${Math.round(s)} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return new Date(ts * 1000).toISOString().slice(0, 16).replace("T", " ");
}
function verdictClass(state, verdict) {
  if (state === "pending" || state === "running") return state;
  if (state === "failed") return "failed";
  return verdict || state;
}
function badge(state, verdict) {
  const v = verdictClass(state, verdict);
  return `<span class="badge v-${esc(v)}">${esc(v.replace(/_/g, " "))}</span>`;
}
function enc(s) { return encodeURIComponent(s); }
function boardHref(sweep, suite) { return `#/board/${enc(sweep)}/${enc(suite)}`; }
function kernelHref(sweep, suite, task) { return `#/kernel/${enc(sweep)}/${enc(suite)}/${enc(task)}`; }
function trialHref(sweep, trial) { return `#/trial/${enc(sweep)}/${enc(trial)}`; }
function modelHref(sweep, suite, model) { return `#/model/${enc(sweep)}/${enc(suite)}/${enc(model)}`; }
function fileHref(sweep, trial, name) { return `/api/file?sweep=${enc(sweep)}&trial=${enc(trial)}&name=${name}`; }
function flagMark(flags, hacks) {
  const f = [...new Set(flags || [])], h = [...new Set(hacks || [])];
  return (h.length ? `<span class="hackname">${esc(h.join(", "))}</span>` : "")
    + (f.length ? `<span class="flagmark" title="audit flag: ${esc(f.join(", "))}">⚑ ${esc(f.join(", "))}</span>` : "");
}
// A passed speedup timed while foreign compute ran on its device, in the first timing and the re-time.
function contendedMark(c) {
  return c && c.contended && c.verdict === "passed"
    ? `<span class="contended" title="timed while other compute ran on this device (first timing and its re-time): the speedup may be off">≈ contended</span>` : "";
}
async function api(path) {
  const r = await fetch(path, { cache: "no-store" });
  const data = await r.json().catch(() => ({ error: `HTTP ${r.status}` }));
  if (!r.ok) {
    const err = new Error(data.error || `HTTP ${r.status}`);
    err.status = r.status;
    throw err;
  }
  return data;
}
function setCrumbs(parts) {
  crumbs.innerHTML = parts.map((p) => (p.href ? `<a href="${p.href}">${esc(p.text)}</a>` : esc(p.text)))
    .join('<span class="sep">/</span>');
}
function notFound(what) {
  setTitle("Not found");
  setCrumbs([{ text: "Leaderboards", href: "#/" }, { text: "not found" }]);
  view.innerHTML = `<div class="card notfound" id="not-found"><h1>Not found</h1><p>${esc(what)}</p>
    <p><a href="#/" id="back-home">← back to the leaderboards</a></p></div>`;
}
function fail(err) {
  if (err && err.status === 404) return notFound(err.message);
  setTitle("Error");
  view.innerHTML = `<div class="err">${esc(err.message || err)}</div>`;
}
function setTitle(text) { document.title = text ? `${text} · KernelArena` : "KernelArena"; }
// The route's query (after "?" in the hash): sort, filters, selected trial. Updating it replaces
// the history entry and does not re-render (the page already shows that state).
function hashQuery() { return new URLSearchParams((location.hash.split("?")[1]) || ""); }
function setHashQuery(update) {
  const [path] = location.hash.split("?");
  const q = hashQuery();
  for (const [k, v] of Object.entries(update)) { if (v === null || v === undefined || v === "") q.delete(k); else q.set(k, v); }
  const text = q.toString();
  history.replaceState(null, "", `${path}${text ? "?" + text : ""}`);
}

// A table whose header cells sort it: th[data-type="num"] sorts by each cell's data-v.
function sortable(table) {
  const id = table.id;
  const ths = Array.from(table.tHead.rows[0].cells);
  const apply = (col, dir) => {
    const th = ths[col];
    const isNum = th.dataset.type === "num";
    const rows = Array.from(table.tBodies[0].rows);
    const key = (row) => {
      const cell = row.cells[col];
      if (isNum) {
        const v = parseFloat(cell.dataset.v);
        return Number.isNaN(v) ? null : v;
      }
      return (cell.dataset.v || cell.textContent).toLowerCase();
    };
    rows.sort((a, b) => {
      const x = key(a), y = key(b);
      if (x === null && y === null) return 0;
      if (x === null) return 1;        // missing values last, whichever the direction
      if (y === null) return -1;
      return (x < y ? -1 : x > y ? 1 : 0) * dir;
    });
    rows.forEach((r) => table.tBodies[0].appendChild(r));
    ths.forEach((h) => h.removeAttribute("aria-sort"));
    th.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
    sortState[id] = { col, dir };
  };
  ths.forEach((th, col) => {
    const toggle = () => {
      const cur = sortState[id];
      // Numbers start high-to-low (the interesting end); text starts A-Z.
      const first = th.dataset.type === "num" ? -1 : 1;
      apply(col, cur && cur.col === col ? -cur.dir : first);
      if (table.onsorted) table.onsorted(sortState[id]);
    };
    th.tabIndex = 0;  // sortable from the keyboard: Tab to a header, Enter or Space
    th.addEventListener("click", toggle);
    th.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); toggle(); }
    });
  });
  if (table.dataset.urlKey) {
    const m = (hashQuery().get(table.dataset.urlKey) || "").match(/^(-?)(\d+)$/);
    if (m && ths[Number(m[2])]) sortState[id] = { col: Number(m[2]), dir: m[1] ? -1 : 1 };
    table.onsorted = (st) => setHashQuery({ [table.dataset.urlKey]: `${st.dir < 0 ? "-" : ""}${st.col}` });
  }
  if (sortState[id]) apply(sortState[id].col, sortState[id].dir);
}

// ---------- home: every sweep and its boards ----------
async function pageHome(token) {
  setCrumbs([{ text: "Leaderboards" }]);
  setTitle("Leaderboards");
  const data = await api("/api/sweeps");
  if (token !== renderToken) return;
  if (!data.sweeps.length) {
    view.innerHTML = `<div class="card"><h2>No sweeps yet</h2><p class="muted">Run <code>kernelarena sweep SPEC.toml</code>;
      its folder appears here as soon as its index is written, and updates live.</p></div>`;
    return;
  }
  const rows = [];
  for (const s of data.sweeps) {
    const c = s.counts, total = c.pending + c.running + c.done + c.failed;
    const finished = c.done + c.failed;
    for (const su of s.suites) {
      rows.push(`<tr>
        <td class="left"><a href="${boardHref(s.id, su.suite)}"><b>${esc(su.suite)}</b></a></td>
        <td class="left">${esc(s.hardware)}</td><td class="left">${esc(s.harness)}</td>
        <td class="left" data-v="${esc(s.id)}">${esc(s.id)}</td>
        <td class="left" data-v="${esc(su.leader || "")}">${su.leader ? `${esc(su.leader)} <span class="muted small">score ${speed(su.leader_score, 3)}</span>` : '<span class="muted">–</span>'}</td>
        <td data-v="${s.models}">${s.models}</td><td data-v="${su.trials}">${su.trials}</td>
        <td data-v="${total ? finished / total : 0}"><span class="bar"><i style="width:${total ? (100 * finished / total).toFixed(1) : 0}%"></i></span>${finished}/${total}${c.running ? ` <span class="muted small">(${c.running} running)</span>` : ""}</td>
        <td data-v="${s.updated_at}">${ago(s.updated_at)}</td></tr>`);
    }
  }
  view.innerHTML = `<div class="pagehead"><div><h1>Leaderboards</h1>
      <div class="muted">One board per sweep and suite, labelled with the hardware that scored it and the agent harness.</div></div></div>
    <div class="card"><div class="tablewrap"><table class="grid sortable" id="sweeps"><thead><tr>
      <th class="left">suite</th><th class="left">hardware</th><th class="left">harness</th><th class="left">sweep</th><th class="left">leader</th>
      <th data-type="num">models</th><th data-type="num">trials</th><th data-type="num">finished</th><th data-type="num">updated</th>
    </tr></thead><tbody>${rows.join("")}</tbody></table></div></div>`;
  sortable(document.getElementById("sweeps"));
}

// ---------- a board: leaderboard, plots, kernel matrix ----------
// [key, label, type, the leaderboard's column name whose explanation (column_help) is the tooltip]
const COLS = [
  ["rank", "rank", "num", "rank"], ["model", "model", "text", "model"], ["solved", "solved", "num", "solved"],
  ["pass", "pass@1", "num", "pass@1"], ["mean", "mean ×", "num", "mean x"], ["median", "median ×", "num", "median x"],
  ["geomean", "geomean × (95% CI)", "num", "geomean x"], ["f1", "fast₁.₀", "num", "fast_1.0"],
  ["f15", "fast₁.₅", "num", "fast_1.5"], ["score", "score (95% CI)", "num", "score"],
  ["conf", "P(rank holds)", "num", "P(rank holds)"], ["hacks", "hacks", "num", "hacks"], ["flags", "flagged", "num", "flagged"],
  ["tok", "tokens / solved", "num", "tokens/solved"], ["usd", "$ / solved", "num", "$/solved"],
  ["fin", "finished", "num", "finished"],
];
function rankText(m) {
  if (m.rank === null || m.rank === undefined) return '<span class="muted" title="no finished trial: not ranked">–</span>';
  const r = m.rank_range;
  return r && (r[0] !== m.rank || r[1] !== m.rank) ? `${m.rank} <span class="ci">${r[0]}–${r[1]}</span>` : String(m.rank);
}

function leaderboardRow(m, sweep, suite) {
  const conf = m.order_confidence;
  const confCls = conf === null ? "" : conf < 0.75 ? "conf-low" : conf < 0.9 ? "conf-mid" : "";
  const cells = [
    `<td class="rank" data-v="${m.rank ?? ""}">${rankText(m)}</td>`,
    `<td class="left model" data-v="${esc(m.model)}"><a href="${modelHref(sweep, suite, m.model)}">${esc(m.model)}</a></td>`,
    `<td data-v="${m.solved}">${m.solved}/${m.tasks}</td>`,
    `<td data-v="${m.pass_at_1}">${num(m.pass_at_1)}</td>`,
    `<td data-v="${m.mean_speedup ?? ""}">${speed(m.mean_speedup)}</td>`,
    `<td data-v="${m.median_speedup ?? ""}">${speed(m.median_speedup)}</td>`,
    `<td data-v="${m.geomean_speedup ?? ""}">${speed(m.geomean_speedup)}<span class="ci">${ci(m.geomean_ci)}</span></td>`,
    `<td data-v="${m.fast_p["1.0"]}">${num(m.fast_p["1.0"])}</td>`,
    `<td data-v="${m.fast_p["1.5"]}">${num(m.fast_p["1.5"])}</td>`,
    `<td data-v="${m.score ?? ""}"><b>${speed(m.score)}</b><span class="ci">${ci(m.score_ci)}</span></td>`,
    `<td data-v="${conf ?? ""}" class="${confCls}">${conf === null ? "–" : num(conf)}</td>`,
    `<td data-v="${m.hacks}">${m.hacks ? `<span class="badge v-hack_detected">${m.hacks}</span>` : "0"}</td>`,
    `<td data-v="${m.flagged}">${m.flagged ? `<span class="badge v-flag">${m.flagged}</span>` : "0"}</td>`,
    `<td data-v="${m.tokens_per_solved ?? ""}">${m.tokens_per_solved === null ? "–" : Math.round(m.tokens_per_solved).toLocaleString()}</td>`,
    `<td data-v="${m.dollars_per_solved ?? ""}">${money(m.dollars_per_solved)}</td>`,
    `<td data-v="${m.planned ? m.finished / m.planned : 0}">${m.finished}/${m.planned}</td>`,
  ];
  return `<tr data-model="${esc(m.model)}">${cells.join("")}</tr>`;
}

async function pageBoard(token, sweep, suite) {
  const data = await api(`/api/board/${enc(sweep)}/${enc(suite)}`);
  if (token !== renderToken) return;
  const b = data.board, c = data.counts;
  setCrumbs([{ text: "Leaderboards", href: "#/" }, { text: `${sweep}` }, { text: suite }]);
  setTitle(`${suite} · ${sweep}`);
  const help = data.column_help || {};
  const head = COLS.map(([, label, type, name]) => `<th data-type="${type}" class="${type === "text" ? "left" : ""}" title="${esc(help[name] || "")}">${label}</th>`).join("");
  const cpuNote = data.hardware === "CPU" ? `<p class="warn" id="cpu-note">${esc(data.cpu_note)}</p>` : "";
  const boot = b.bootstrap
    ? `95% CI: percentile interval over ${b.bootstrap.resamples} paired bootstrap resamples (seed ${b.bootstrap.seed}) of the tasks, and of the samples within a task.
       P(rank holds): share of resamples in which a model ranks above the one below it (ties count ½); below 0.9 the two ranks are not clearly separated.
       Rank: tied models share a rank; the small range beside it is the rank's 95% range over the resamples.`
    : "No bootstrap intervals (served with --bootstrap 0).";
  const models = b.models.map((m) => m.model);
  const matrix = b.kernels.map((k) => {
    const byModel = {};
    for (const cell of k.cells) (byModel[cell.model] = byModel[cell.model] || []).push(cell);
    const tds = models.map((m) => {
      const cells = byModel[m] || [];
      if (!cells.length) return "<td>–</td>";
      const link = (cell) => (cell.state === "pending" ? null : trialHref(sweep, `${k.suite}/${k.task}/${cell.model}/${cell.sample}`));
      if (cells.length > 1) {
        // Several samples: one square per sample (its transcript on click), the pass count and the best speedup.
        const passed = cells.filter((c) => c.verdict === "passed");
        const best = Math.max(...passed.map((c) => c.speedup ?? 0));
        const dots = cells.map((c) => {
          const v = verdictClass(c.state, c.verdict), title = `sample ${c.sample}: ${v.replace(/_/g, " ")}${c.speedup !== null && c.verdict === "passed" ? " ×" + speed(c.speedup) : ""}`;
          const dot = `<span class="dot v-${esc(v)}" title="${esc(title)}"></span>`;
          return link(c) ? `<a href="${link(c)}">${dot}</a>` : dot;
        }).join("");
        const flags = cells.flatMap((c) => c.flags), hacks = cells.flatMap((c) => c.hacks);
        return `<td data-v="${passed.length}">${dots}<span class="sp">${passed.length}/${cells.length}${passed.length ? ` · ×${speed(best)}` : ""}</span>${contendedMark(cells.find((c) => c.contended && c.verdict === "passed"))}${flagMark(flags, hacks)}</td>`;
      }
      return "<td>" + cells.map((cell) => {
        const sp = cell.verdict === "passed" && cell.speedup !== null ? `<span class="sp">×${speed(cell.speedup)}</span>` : "";
        const inner = badge(cell.state, cell.verdict) + sp + contendedMark(cell) + flagMark(cell.flags, cell.hacks);
        return link(cell) ? `<a href="${link(cell)}" title="transcript">${inner}</a>` : inner;
      }).join(" ") + "</td>";
    }).join("");
    return `<tr data-task="${esc(k.task)}"><th class="left task" scope="row" data-v="${esc(k.task)}"><a href="${kernelHref(sweep, k.suite, k.task)}">${esc(k.task)}</a></th>${tds}</tr>`;
  }).join("");
  view.innerHTML = `
    <div class="pagehead"><div>
      <h1>${esc(suite)}</h1>
      <div class="meta"><span class="chip">hardware <b>${esc(data.hardware)}</b></span>
        <span class="chip">harness <b>${esc(data.harness)}</b></span><span class="chip">sweep <b>${esc(sweep)}</b></span>
        <span class="chip" id="progress">${c.done + c.failed}/${c.done + c.failed + c.pending + c.running} finished${c.running ? `, ${c.running} running` : ""}</span>
        <span class="chip">updated ${ago(data.updated_at)}</span></div>
    </div></div>
    ${cpuNote}
    <div class="searchbar"><label>models <input id="filter-models" type="search" placeholder="filter by name" autocomplete="off"></label>
      <label>tasks <input id="filter-tasks" type="search" placeholder="filter by name" autocomplete="off"></label>
      <span class="muted small" id="filter-count"></span></div>
    <section class="card"><h2>Leaderboard <a class="small" id="compare-link" href="${compareHref(sweep, suite, models[0] || "", models[1] || models[0] || "")}">compare two models →</a></h2><p class="muted" id="method-note">${esc(data.method_note)} Hover a header for its meaning; click it (or Enter) to sort.</p>
      <div class="tablewrap"><table class="grid sortable" id="leaderboard"><thead><tr>${head}</tr></thead>
      <tbody>${b.models.map((m) => leaderboardRow(m, sweep, suite)).join("")}</tbody></table></div>
      <p class="note">${boot}</p></section>
    <section class="card"><h2>Plots</h2><div class="plots">
      <div class="plot" id="plot-speedup"></div><div class="plot" id="plot-cost"></div><div class="plot" id="plot-roofline"></div>
    </div></section>
    <section class="card"><h2>Kernels <span class="muted">each model's verdict per task; a task opens its kernels, a verdict its transcript</span></h2>
      <div class="tablewrap matrixwrap"><table class="grid sortable matrix" id="kernels"><thead><tr><th class="left task">task</th>
      ${models.map((m) => `<th class="left" data-model="${esc(m)}" title="${esc(m)}">${esc(m)}</th>`).join("")}</tr></thead><tbody>${matrix}</tbody></table></div></section>`;
  const lb = document.getElementById("leaderboard"), km = document.getElementById("kernels");
  lb.dataset.urlKey = "sort";
  km.dataset.urlKey = "ksort";
  sortable(lb);
  sortable(km);
  boardFilters(lb, km);
  drawPlots(token, sweep, suite);
}

// Model and task filters (substring, case-blind), kept in the URL as ?m=...&t=...
function boardFilters(lb, km) {
  const fm = document.getElementById("filter-models"), ft = document.getElementById("filter-tasks");
  const q = hashQuery();
  fm.value = q.get("m") || "";
  ft.value = q.get("t") || "";
  const apply = () => {
    const m = fm.value.trim().toLowerCase(), t = ft.value.trim().toLowerCase();
    let shownModels = 0, shownTasks = 0;
    for (const row of lb.tBodies[0].rows) {
      const hide = m && !row.dataset.model.toLowerCase().includes(m);
      row.hidden = !!hide;
      if (!hide) shownModels++;
    }
    const heads = Array.from(km.tHead.rows[0].cells);
    const hideCol = heads.map((th, i) => i > 0 && !!m && !th.dataset.model.toLowerCase().includes(m));
    heads.forEach((th, i) => { th.hidden = hideCol[i]; });
    for (const row of km.tBodies[0].rows) {
      const hide = t && !row.dataset.task.toLowerCase().includes(t);
      row.hidden = !!hide;
      if (!hide) shownTasks++;
      Array.from(row.cells).forEach((cell, i) => { cell.hidden = hideCol[i]; });
    }
    document.getElementById("filter-count").textContent = m || t
      ? `${shownModels} of ${lb.tBodies[0].rows.length} models, ${shownTasks} of ${km.tBodies[0].rows.length} tasks shown` : "";
    setHashQuery({ m: fm.value.trim(), t: ft.value.trim() });
  };
  fm.addEventListener("input", apply);
  ft.addEventListener("input", apply);
  apply();
}

function loadPlotly() {
  if (window.Plotly) return Promise.resolve();
  if (!plotlyLoading) {
    plotlyLoading = new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = "/vendor/plotly.min.js";
      s.onload = resolve;
      s.onerror = () => reject(new Error("could not load /vendor/plotly.min.js"));
      document.head.appendChild(s);
    });
  }
  return plotlyLoading;
}

const PLOT_LAYOUT = {
  font: { family: "system-ui, sans-serif", size: 12, color: "#1d2330" },
  margin: { l: 60, r: 20, t: 46, b: 70 }, paper_bgcolor: "#fff", plot_bgcolor: "#fff",
  colorway: ["#2f5bd3", "#0b7a75", "#c2410c", "#7c3aed", "#be185d", "#15803d", "#a16207", "#475569"],
};
function layout(title, extra) { return Object.assign({}, PLOT_LAYOUT, { height: 360, title: { text: title, font: { size: 14 } } }, extra); }
function emptyPlot(el, text) { el.innerHTML = `<div class="empty">${esc(text)}</div>`; el.dataset.empty = "1"; }

async function drawPlots(token, sweep, suite) {
  let data;
  try {
    [data] = await Promise.all([api(`/api/plots/${enc(sweep)}/${enc(suite)}`), loadPlotly()]);
  } catch (err) {
    document.getElementById("plot-speedup").innerHTML = `<div class="empty">${esc(err.message)}</div>`;
    return;
  }
  if (token !== renderToken) return;
  const cfg = { displaylogo: false, responsive: true, modeBarButtonsToRemove: ["lasso2d", "select2d"] };
  const sp = document.getElementById("plot-speedup");
  const models = Object.keys(data.speedups);
  const tilted = { tickangle: models.length > 6 ? -35 : 0, automargin: true };
  if (models.some((m) => data.speedups[m].length)) {
    // Log axis: a tick at each power of ten, written out (0.001, 0.01, 1, 10), never "5, 2, 0.001".
    const all = models.flatMap((m) => data.speedups[m]).filter((v) => v > 0);
    const lo = Math.floor(Math.log10(Math.min(...all))), hi = Math.ceil(Math.log10(Math.max(...all)));
    const ticks = [];
    for (let e = lo; e <= hi; e++) ticks.push(10 ** e);
    if (ticks.length < 3) for (const f of [2, 5]) for (let e = lo; e < hi; e++) ticks.push(f * 10 ** e);
    ticks.sort((a, b) => a - b);
    Plotly.newPlot(sp, models.map((m) => ({ type: "box", name: m, y: data.speedups[m], boxpoints: "all", jitter: 0.4, pointpos: 0, marker: { size: 4 } })),
      layout("Speedup of correct kernels, per model", { yaxis: { type: "log", tickvals: ticks, ticktext: ticks.map((v) => speed(v, 1)), title: "speedup × (log)", zeroline: false },
        xaxis: tilted, showlegend: false }), cfg);
  } else emptyPlot(sp, "No correct kernel yet: nothing to plot.");
  const cost = document.getElementById("plot-cost");
  const rows = data.cost.filter((r) => r.finished);
  if (rows.length) {
    // One trace per model (a legend, not labels that collide once there are more than a few).
    Plotly.newPlot(cost, rows.map((r) => ({ type: "scatter", mode: "markers", name: r.model, x: [r.dollars], y: [r.pass_at_1],
      marker: { size: 11 }, hovertemplate: `${esc(r.model)}<br>$%{x:.4f} spent<br>pass@1 %{y:.2f}<extra></extra>` })),
    layout("pass@1 against dollars spent", { xaxis: { title: "dollars spent (all attempts)", rangemode: "tozero" },
      yaxis: { title: "pass@1", range: [-0.05, 1.05] }, legend: { font: { size: 11 } }, margin: { l: 60, r: 10, t: 46, b: 60 } }), cfg);
  } else emptyPlot(cost, "No finished trial yet.");
  const roof = document.getElementById("plot-roofline");
  const tasks = Array.from(new Set(Object.values(data.roofline).flatMap((t) => Object.keys(t)))).sort();
  if (tasks.length) {
    // A task x model heat map: grouped bars are unreadable at 40 tasks x 14 models.
    const ms = Object.keys(data.roofline);
    Plotly.newPlot(roof, [{ type: "heatmap", x: ms, y: tasks, z: tasks.map((t) => ms.map((m) => data.roofline[m][t] ?? null)),
      colorscale: "Blues", zmin: 0, zmax: 1, colorbar: { tickformat: ".0%", title: { text: "share" } },
      hovertemplate: "%{y}<br>%{x}<br>%{z:.1%} of the roofline<extra></extra>" }],
    layout("Roofline share per task (best correct sample)", { height: Math.max(360, 120 + 18 * tasks.length),
      xaxis: tilted, yaxis: { automargin: true, autorange: "reversed" } }), cfg);
  } else emptyPlot(roof, "Roofline share per task: no correct kernel with a roofline yet (the task needs FLOP or byte counts in suite.toml, and a device whose peaks the scorer knows; CPU has none).");
}

// ---------- one kernel: every model's trials ----------
function diffHtml(diff) {
  return diff.split("\n").map((line) => {
    const cls = line.startsWith("+++") || line.startsWith("---") ? "file" : line.startsWith("@@") ? "hunk"
      : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "";
    return `<span class="${cls}">${esc(line) || " "}</span>`;
  }).join("");
}
function codeHtml(text) { return text.split("\n").map((l) => `<span>${esc(l) || " "}</span>`).join(""); }

function findingsHtml(t) {
  const out = [];
  for (const h of t.hacks) out.push(`<div class="finding"><b>${esc(h.pattern)}</b><p>${esc(h.evidence)}</p></div>`);
  for (const f of t.flags) out.push(`<div class="finding flag"><b>${esc(f.pattern)}</b> <span class="muted small">audit flag</span><p>${esc(f.evidence)}</p></div>`);
  if (t.error && t.verdict !== "hack_detected") out.push(`<div class="finding flag"><b>error</b><p>${esc(String(t.error).slice(0, 4000))}</p></div>`);
  return out.join("");
}

function detailsHtml(d) {
  if (!d) return "";
  const item = (label, v) => (v === null || v === undefined || v === "" ? "" : `<div>${label} <b>${esc(v)}</b></div>`);
  const env = Object.entries(d.environment || {}).filter(([, v]) => v !== null && typeof v !== "object")
    .map(([k, v]) => item(k, v)).join("");
  const durations = Object.entries(d.durations_s || {}).map(([k, v]) => item(`${k} s`, speed(v))).join("");
  const spread = (v) => (v === null || v === undefined ? null : `±${speed(100 * v, 2)}%`);
  const body = [item("timer", d.timer), item("repetitions", d.repetitions), item("kernel spread", spread(d.kernel_spread)),
    item("baseline spread", spread(d.baseline_spread)),
    item("correctness", d.correctness_trials ? `${d.correctness_passed}/${d.correctness_trials} input sets` : null),
    item("tolerance", d.tolerance), item("max abs error", d.max_abs_error === null ? null : speed(d.max_abs_error)),
    item("max rel error", d.max_rel_error === null ? null : speed(d.max_rel_error)),
    item("timing", d.contended ? "contended (foreign compute on the device, also when re-timed)" : null),
    item("kernel's wall", d.isolation), env, durations].join("");
  return body ? `<div class="details-grid">${body}</div>` : "";
}

async function pageKernel(token, sweep, suite, task) {
  const d = await api(`/api/kernel/${enc(sweep)}/${enc(suite)}/${enc(task)}`);
  if (token !== renderToken) return;
  setCrumbs([{ text: "Leaderboards", href: "#/" }, { text: sweep }, { text: suite, href: boardHref(sweep, suite) }, { text: task }]);
  setTitle(`${task} · ${suite} · ${sweep}`);
  // Cards in the board's rank order (unranked models last), then by sample.
  const rank = (m) => d.ranks[m] ?? 1e9;
  const trials = d.trials.slice().sort((a, b) => rank(a.model) - rank(b.model) || a.model.localeCompare(b.model) || a.sample - b.sample);
  const summary = trials.map((t, i) => `<tr data-model="${esc(t.model)}" data-card="${i}">
      <td data-v="${d.ranks[t.model] ?? ""}">${d.ranks[t.model] ?? "–"}</td>
      <td class="left model" data-v="${esc(t.model)}"><a href="#card-${i}" class="tocard" data-card="${i}">${esc(t.model)}</a></td><td data-v="${t.sample}">${t.sample}</td>
      <td class="left" data-v="${esc(verdictClass(t.state, t.verdict))}">${badge(t.state, t.verdict)}</td>
      <td data-v="${t.speedup ?? ""}">${t.speedup === null ? "–" : "×" + speed(t.speedup)}${contendedMark(t)}</td>
      <td data-v="${t.kernel_ms ?? ""}">${ms(t.kernel_ms)}</td>
      <td data-v="${t.baseline_ms ?? ""}">${ms(t.baseline_ms)}</td>
      <td data-v="${t.roofline_share ?? ""}">${pct(t.roofline_share)}</td>
      <td data-v="${t.hacks.length + t.flags.length}" class="left wrap">${[...new Set(t.hacks.map((h) => h.pattern))].map((p) => `<span class="badge v-hack_detected">${esc(p)}</span>`).join(" ")}
        ${[...new Set(t.flags.map((h) => h.pattern))].map((p) => `<span class="badge v-flag" title="audit flag">⚑ ${esc(p)}</span>`).join(" ") || (t.hacks.length ? "" : "–")}</td>
      <td data-v="${t.tokens}">${t.tokens.toLocaleString()}</td><td data-v="${t.dollars}">${money(t.dollars)}</td>
      <td class="left"><a href="${trialHref(sweep, t.trial_id)}">transcript</a></td></tr>`).join("");
  const cards = trials.map((t, i) => {
    const tabs = [];
    if (t.diff !== null) tabs.push(["diff", "Diff against the reference solution"]);
    if (t.source !== null) tabs.push(["source", "kernel.py"]);
    if (d.reference !== null) tabs.push(["reference", "Reference solution"]);
    const code = tabs.length ? `<div class="tabs" data-card="${i}">${tabs.map(([k, label], j) => `<button data-k="${k}" class="${j ? "" : "on"}">${label}</button>`).join("")}</div>
        <pre class="code" id="code-${i}"></pre>` : `<p class="muted">No kernel.py ${t.state === "pending" || t.state === "running" ? "yet" : "was left"}.</p>`;
    const files = (t.files || []).map((f) => `<a href="${fileHref(sweep, t.trial_id, f)}" target="_blank">${f}</a>`).join(" · ");
    const flags = [...new Set(t.flags.map((f) => f.pattern))].map((p) => `<span class="badge v-flag">⚑ ${esc(p)}</span>`).join(" ");
    return `<details class="trial" id="card-${i}" data-model="${esc(t.model)}" data-trial="${esc(t.trial_id)}"><summary><header>
        <span class="muted">#${d.ranks[t.model] ?? "–"}</span>${badge(t.state, t.verdict)}
        <b>${esc(t.model)}</b><span class="muted">sample ${t.sample}</span>${flags}<span class="grow"></span>
        ${t.speedup !== null ? `<span class="chip">speedup <b>×${speed(t.speedup)}</b></span>${contendedMark(t)}` : ""}
        ${t.kernel_ms !== null && t.kernel_ms !== undefined ? `<span class="chip">kernel <b>${ms(t.kernel_ms)}</b></span>` : ""}
        ${t.roofline_share !== null ? `<span class="chip">roofline <b>${pct(t.roofline_share)}</b></span>` : ""}
        <a href="${trialHref(sweep, t.trial_id)}">transcript →</a></header></summary>
      <div class="body">${files ? `<div class="small">files: ${files}</div>` : ""}${detailsHtml(t.details)}${findingsHtml(t)}${code}</div></details>`;
  }).join("");
  const counts = [d.level !== null ? `<span class="chip">level <b>${d.level}</b></span>` : "",
    d.flops ? `<span class="chip">FLOPs <b>${Number(d.flops).toExponential(2)}</b></span>` : "",
    d.bytes_moved ? `<span class="chip">bytes <b>${Number(d.bytes_moved).toExponential(2)}</b></span>` : "",
    `<span class="chip">hardware <b>${esc(d.hardware)}</b></span>`].join("");
  view.innerHTML = `<div class="pagehead"><div><h1>${esc(suite)}/${esc(task)}</h1><div class="meta">${counts}</div></div></div>
    <section class="card"><h2>Trials <span class="muted">a model opens its card below</span></h2><div class="tablewrap"><table class="grid sortable" id="trials"><thead><tr>
      <th data-type="num" title="The model's rank on the board">rank</th><th class="left">model</th><th data-type="num">sample</th><th class="left">verdict</th>
      <th data-type="num" title="Baseline time / kernel time">speedup</th>
      <th data-type="num" title="Median timed run of the kernel">kernel</th><th data-type="num" title="Median timed run of the baseline">baseline</th>
      <th data-type="num" title="Roofline floor time / kernel time">roofline share</th>
      <th data-type="num" class="left" title="Rejecting anti-hack findings (red) and audit flags (⚑)">hacks / flags</th><th data-type="num">tokens</th><th data-type="num">dollars</th><th class="left"></th>
    </tr></thead><tbody>${summary}</tbody></table></div></section>
    <section><h2>Kernels and evidence <span class="muted small">in rank order; click a card to open it</span>
      <button id="expand-all" class="small">open all</button> <button id="collapse-all" class="small">close all</button></h2>${cards}</section>`;
  const table = document.getElementById("trials");
  table.dataset.urlKey = "sort";
  sortable(table);
  const filled = new Set();
  const fill = (i) => {
    if (filled.has(i)) return;
    filled.add(i);
    const t = trials[i], pre = document.getElementById(`code-${i}`);
    if (!pre) return;
    const show = (k) => {
      pre.innerHTML = k === "diff" ? (t.diff ? diffHtml(t.diff) : '<span class="muted">identical to the reference solution</span>')
        : codeHtml(k === "source" ? t.source : d.reference);
      pre.dataset.k = k;
    };
    const tabs = view.querySelector(`.tabs[data-card="${i}"]`);
    tabs.querySelectorAll("button").forEach((btn) => btn.addEventListener("click", () => {
      tabs.querySelectorAll("button").forEach((b) => b.classList.toggle("on", b === btn));
      show(btn.dataset.k);
    }));
    show(tabs.querySelector("button").dataset.k);
  };
  // A card's code is rendered when it is first opened (42 diffs up front made a 30,000 px page).
  view.querySelectorAll("details.trial").forEach((card, i) => card.addEventListener("toggle", () => {
    if (card.open) {
      fill(i);
      setHashQuery({ trial: card.dataset.trial });
    } else if (hashQuery().get("trial") === card.dataset.trial) setHashQuery({ trial: null });
  }));
  const open = (i) => {
    const card = document.getElementById(`card-${i}`);
    card.open = true;
    fill(i);
    card.scrollIntoView({ block: "start" });
  };
  table.addEventListener("click", (ev) => {
    const a = ev.target.closest("a.tocard");
    if (!a) return;
    ev.preventDefault();
    open(Number(a.dataset.card));
  });
  document.getElementById("expand-all").addEventListener("click", () => view.querySelectorAll("details.trial").forEach((c) => { c.open = true; }));
  document.getElementById("collapse-all").addEventListener("click", () => view.querySelectorAll("details.trial").forEach((c) => { c.open = false; }));
  const selected = hashQuery().get("trial");
  const at = trials.findIndex((t) => t.trial_id === selected);
  if (at >= 0) open(at);
}

// ---------- two models side by side, with the paired bootstrap's answer ----------
function compareHref(sweep, suite, a, b) { return `#/compare/${enc(sweep)}/${enc(suite)}?a=${enc(a)}&b=${enc(b)}`; }

async function pageCompare(token, sweep, suite) {
  const q = hashQuery();
  let a = q.get("a"), b = q.get("b");
  if (!a || !b) {
    const board = await api(`/api/board/${enc(sweep)}/${enc(suite)}`);
    if (token !== renderToken) return;
    const ms = board.board.models.map((m) => m.model);
    a = a || ms[0];
    b = b || ms.find((m) => m !== a) || a;
    history.replaceState(null, "", compareHref(sweep, suite, a, b));
  }
  const d = await api(`/api/compare/${enc(sweep)}/${enc(suite)}?a=${enc(a)}&b=${enc(b)}`);
  if (token !== renderToken) return;
  setCrumbs([{ text: "Leaderboards", href: "#/" }, { text: sweep }, { text: suite, href: boardHref(sweep, suite) }, { text: "compare" }]);
  setTitle(`${a} vs ${b} · ${suite} · ${sweep}`);
  const select = (id, v) => `<select id="${id}">${d.models.map((m) => `<option${m === v ? " selected" : ""}>${esc(m)}</option>`).join("")}</select>`;
  const fig = (label, f) => `<tr><th class="left">${label}</th><td>${f(d.a)}</td><td>${f(d.b)}</td></tr>`;
  const answer = d.p_a_above === null ? "No bootstrap (served with --bootstrap 0, or a model has no finished trial)."
    : `score difference ${speed(d.score_diff)} (95% CI ${ci(d.score_diff_ci)}); ${esc(a)} ranks above ${esc(b)} in ${(100 * d.p_a_above).toFixed(1)}% of the paired resamples`
      + (d.p_a_above >= 0.95 || d.p_a_above <= 0.05 ? " — a clear difference." : " — not clearly separated by these tasks.");
  const cellsHtml = (cells) => cells.map((c) => `${badge(c.state, c.verdict)}${c.verdict === "passed" && c.speedup !== null ? `<span class="sp">×${speed(c.speedup)}</span>` : ""}`).join(" ") || "–";
  const rows = d.tasks.map((t) => {
    const ba = t.best[a], bb = t.best[b];
    const win = ba !== null && bb !== null ? (ba > bb ? "a" : bb > ba ? "b" : "") : ba !== null ? "a" : bb !== null ? "b" : "";
    return `<tr data-task="${esc(t.task)}"><th class="left task" data-v="${esc(t.task)}"><a href="${kernelHref(sweep, t.suite, t.task)}">${esc(t.task)}</a></th>
      <td class="left ${win === "a" ? "win" : ""}" data-v="${ba ?? ""}">${cellsHtml(t[a])}</td><td class="left ${win === "b" ? "win" : ""}" data-v="${bb ?? ""}">${cellsHtml(t[b])}</td>
      <td data-v="${ba !== null && bb !== null ? ba / bb : ""}">${ba !== null && bb !== null ? speed(ba / bb) : "–"}</td></tr>`;
  }).join("");
  view.innerHTML = `<div class="pagehead"><div><h1>Compare</h1><div class="meta"><span class="chip">hardware <b>${esc(d.hardware)}</b></span></div></div></div>
    <section class="card"><div class="searchbar"><label>A ${select("cmp-a", a)}</label><label>B ${select("cmp-b", b)}</label></div>
      <p id="compare-answer"><b>${answer}</b></p>
      <table class="grid" id="compare-figures"><thead><tr><th class="left"></th><th>${esc(a)}</th><th>${esc(b)}</th></tr></thead><tbody>
      ${fig("rank", (m) => m.rank ?? "–")}${fig("score", (m) => speed(m.score))}${fig("pass@1", (m) => num(m.pass_at_1))}
      ${fig("mean ×", (m) => speed(m.mean_speedup))}${fig("median ×", (m) => speed(m.median_speedup))}${fig("geomean ×", (m) => speed(m.geomean_speedup))}
      ${fig("solved", (m) => `${m.solved}/${m.tasks}`)}${fig("hacks", (m) => m.hacks)}${fig("dollars", (m) => money(m.dollars))}
      ${fig("faster on tasks both solved", (m) => (m.model === a ? d.a_faster : d.b_faster))}</tbody></table></section>
    <section class="card"><h2>Per task <span class="muted">the faster best correct kernel is highlighted; A/B is the ratio of the best speedups</span></h2>
      <div class="tablewrap"><table class="grid sortable" id="compare-tasks"><thead><tr><th class="left">task</th><th class="left" data-type="num">${esc(a)}</th>
      <th class="left" data-type="num">${esc(b)}</th><th data-type="num">A/B</th></tr></thead><tbody>${rows}</tbody></table></div></section>`;
  const t = document.getElementById("compare-tasks");
  t.dataset.urlKey = "sort";
  sortable(t);
  const change = () => { location.hash = compareHref(sweep, suite, document.getElementById("cmp-a").value, document.getElementById("cmp-b").value); };
  document.getElementById("cmp-a").addEventListener("change", change);
  document.getElementById("cmp-b").addEventListener("change", change);
}

// ---------- one model on one board: its kernels, verdict mix, hacks, cost ----------
async function pageModel(token, sweep, suite, model) {
  const data = await api(`/api/board/${enc(sweep)}/${enc(suite)}`);
  if (token !== renderToken) return;
  const m = data.board.models.find((x) => x.model === model);
  if (!m) return notFound(`Board ${sweep}/${suite} has no model "${model}".`);
  setCrumbs([{ text: "Leaderboards", href: "#/" }, { text: sweep }, { text: suite, href: boardHref(sweep, suite) }, { text: model }]);
  setTitle(`${model} · ${suite} · ${sweep}`);
  const mix = {};
  const rows = [];
  for (const k of data.board.kernels) {
    for (const c of k.cells.filter((x) => x.model === model)) {
      const v = verdictClass(c.state, c.verdict);
      mix[v] = (mix[v] || 0) + 1;
      rows.push(`<tr data-task="${esc(k.task)}"><td class="left" data-v="${esc(k.task)}"><a href="${kernelHref(sweep, k.suite, k.task)}?trial=${enc(`${k.suite}/${k.task}/${model}/${c.sample}`)}">${esc(k.task)}</a></td>
        <td data-v="${c.sample}">${c.sample}</td><td class="left" data-v="${esc(v)}">${badge(c.state, c.verdict)}</td>
        <td data-v="${c.verdict === "passed" ? c.speedup ?? "" : ""}">${c.verdict === "passed" ? "×" + speed(c.speedup) : "–"}</td>
        <td class="left">${flagMark(c.flags, c.hacks) || "–"}</td>
        <td class="left err-cell" title="${esc(c.error || "")}">${esc((c.error || "").split("\n").filter(Boolean).pop() || "")}</td>
        <td class="left">${c.state === "pending" ? "" : `<a href="${trialHref(sweep, `${k.suite}/${k.task}/${model}/${c.sample}`)}">transcript</a>`}</td></tr>`);
    }
  }
  const chips = Object.entries(mix).sort((a, b) => b[1] - a[1]).map(([v, n]) => `<span class="badge v-${esc(v)}">${esc(v.replace(/_/g, " "))} ${n}</span>`).join(" ");
  const fig = (label, v) => `<span class="chip">${label} <b>${v}</b></span>`;
  view.innerHTML = `<div class="pagehead"><div><h1>${esc(model)}</h1><div class="meta">
      ${fig("rank", m.rank === null ? "–" : m.rank + (m.rank_range ? ` (${m.rank_range[0]}–${m.rank_range[1]})` : ""))}${fig("score", speed(m.score))}
      ${fig("pass@1", num(m.pass_at_1))}${fig("mean ×", speed(m.mean_speedup))}${fig("median ×", speed(m.median_speedup))}
      ${fig("solved", `${m.solved}/${m.tasks}`)}${fig("hacks", m.hacks)}${fig("flagged", m.flagged)}
      ${fig("tokens", m.tokens.toLocaleString())}${fig("dollars", money(m.dollars))}${fig("harness", esc(m.harness))}${fig("hardware", esc(data.hardware))}</div></div></div>
    <section class="card"><h2>Verdicts</h2><div id="verdict-mix">${chips}</div></section>
    <section class="card"><h2>Kernels</h2><div class="tablewrap"><table class="grid sortable" id="model-kernels"><thead><tr>
      <th class="left">task</th><th data-type="num">sample</th><th class="left">verdict</th><th data-type="num">speedup</th>
      <th class="left">hacks / flags</th><th class="left">error</th><th class="left"></th></tr></thead><tbody>${rows.join("")}</tbody></table></div></section>`;
  const t = document.getElementById("model-kernels");
  t.dataset.urlKey = "sort";
  sortable(t);
}

// ---------- a transcript, loaded in pages as it is scrolled ----------
const PAGE = 200;
const TYPES = ["model_request", "model_response", "tool_call", "tool_result", "retry", "budget", "error", "harness_event", "score", "trial_start", "trial_end"];

function clip(text, n = 6000) {
  text = String(text === null || text === undefined ? "" : text);
  return text.length <= n ? text : text.slice(0, n * 2 / 3) + `\n… [${text.length - n} characters cut] …\n` + text.slice(-n / 3);
}
function argsText(a) {
  if (a && typeof a === "object" && Object.keys(a).length === 1 && "command" in a) return String(a.command);
  if (a && typeof a === "object" && "path" in a && "content" in a) return `${a.path}:\n${a.content}`;
  return JSON.stringify(a, null, 1);
}
function eventBody(e) {
  const p = e.payload || {};
  switch (e.type) {
    case "trial_start": {
      const s = p.spec || {};
      return `<div class="line">trial <b>${esc(p.trial_id)}</b> · model ${esc(s.model)} · harness ${esc(p.harness)} · device ${esc(p.device)}</div>`;
    }
    case "model_request": {
      const msgs = (p.messages || []).map((m) => `<pre><b>${esc(m.role)}</b>${m.tool_call_id ? ` (${esc(m.tool_call_id)})` : ""}\n${esc(clip(m.content))}</pre>`).join("");
      return `<div class="line">turn ${esc(p.turn)} · ${esc(p.message_count)} messages in the conversation, ${(p.messages || []).length} new</div>${msgs}`;
    }
    case "model_response": {
      const u = p.usage || {};
      const calls = (p.tool_calls || []).map((c) => esc(c.name)).join(", ");
      return `<div class="line">turn ${esc(p.turn)} · ${esc(u.input_tokens ?? 0)} in / ${esc(u.output_tokens ?? 0)} out tokens · ${p.latency_s !== undefined ? esc(Number(p.latency_s).toFixed(2)) + " s" : ""} · ${esc(p.stop_reason)}${calls ? " · calls " + calls : ""}</div>${p.text ? `<pre>${esc(clip(p.text))}</pre>` : ""}`;
    }
    case "tool_call":
      return `<div class="line"><b>${esc(p.name)}</b> <span class="muted">${esc(p.id)}</span></div><pre>${esc(clip(argsText(p.arguments)))}</pre>`;
    case "tool_result":
      return `<div class="line"><b>${esc(p.name)}</b>${p.exit_code !== undefined ? ` · exit ${esc(p.exit_code)}` : ""} · ${speed(p.duration_s)} s</div><pre>${esc(clip(p.output))}</pre>`;
    case "retry":
      return `<div class="line">attempt ${esc(p.attempt)} after <b>${esc(p.error)}</b>; waited ${speed(p.wait_s)} s</div>`;
    case "budget":
      return `<div class="line"><b>budget hit: ${esc(p.kind)}</b> used ${esc(p.used)} of ${esc(p.limit)}</div>`;
    case "error":
      return `<div class="line">${esc(p.source)}</div><pre>${esc(clip(p.message))}</pre>`;
    case "score": {
      const t = p.timing || {}, c = p.correctness || {};
      const hacks = (p.hacks || []).map((h) => `<div class="finding"><b>${esc(h.pattern)}</b><p>${esc(h.evidence)}</p></div>`).join("");
      const flags = (p.flags || []).map((h) => `<div class="finding flag"><b>${esc(h.pattern)}</b> <span class="muted small">audit flag</span><p>${esc(h.evidence)}</p></div>`).join("");
      const timing = t.speedup !== undefined && t.speedup !== null
        ? ` speedup <b>×${speed(t.speedup)}</b> (baseline ${ms(t.baseline_ms)}, kernel ${ms(t.kernel_ms)}${t.repetitions ? `, ${t.repetitions} repetitions` : ""})` : "";
      const corr = c.trials ? ` · correctness ${esc(c.passed)}/${esc(c.trials)} input sets${c.rule ? ` (${esc(c.rule)})` : ""}` : "";
      // a rejected hack's error repeats its findings' evidence, shown below it
      const error = p.error && !(p.verdict === "hack_detected" && (p.hacks || []).length) ? `<pre class="error-text">${esc(clip(p.error))}</pre>` : "";
      return `<div class="line">${badge("done", p.verdict)}${timing}${corr}</div>${error}${hacks}${flags}`;
    }
    case "trial_end": {
      const u = p.usage || {};
      return `<div class="line">exit <b>${esc(p.exit_reason)}</b> · verdict ${esc(p.verdict)} · ${esc(u.turns)} turns · ${esc(u.input_tokens)} in / ${esc(u.output_tokens)} out · ${money(u.dollars)} · ${speed(p.duration_s)} s${p.interrupted ? " · INTERRUPTED" : ""}</div>`;
    }
    default: {
      // harness events: scalar fields on one line, nested ones folded away
      const flat = [], nested = {};
      for (const [k, v] of Object.entries(p)) {
        if (k === "kind") continue;
        if (v !== null && typeof v === "object") nested[k] = v; else flat.push(`${esc(k)} <b>${esc(clip(String(v), 300))}</b>`);
      }
      const more = Object.keys(nested).length
        ? `<details><summary class="muted small">${Object.keys(nested).map(esc).join(", ")}</summary><pre>${esc(clip(JSON.stringify(nested, null, 1), 4000))}</pre></details>` : "";
      return `<div class="line"><b>${esc(p.kind || e.type)}</b> ${flat.join(" · ")}</div>${more}`;
    }
  }
}

function eventsHtml(events, t0, prevTs) {
  let prev = prevTs;
  const html = events.map((e) => {
    const ts = Date.parse(e.ts) / 1000;
    const rel = Number.isFinite(ts) && t0 !== null ? `+${(ts - t0).toFixed(2)} s` : "";
    const gap = Number.isFinite(ts) && prev !== null && ts - prev >= 0.01 ? `<span class="gap">Δ ${(ts - prev).toFixed(2)} s</span>` : "";
    if (Number.isFinite(ts)) prev = ts;
    const hl = e.type === "retry" ? " hl" : e.type === "budget" || e.type === "error" ? " hl-bad" : "";
    return `<div class="ev${hl}" data-i="${e.i}" data-type="${esc(e.type)}"><span class="i">#${e.i}</span><span class="t">${rel}${gap}</span>
      <span class="k k-${esc(e.type)}">${esc(e.type.replace(/_/g, " "))}</span><div class="c">${eventBody(e)}</div></div>`;
  }).join("");
  return { html, prev };
}

function trialMeta(s, row) {
  const c = s.counts;
  const chip = (label, n, cls = "", key = "") => `<span class="chip ${cls}"${key ? ` data-k="${key}"` : ""}>${label} <b>${n}</b></span>`;
  const state = s.ended ? "" : `<span class="chip v-running" id="running">${row.state === "running" ? "running: new events appear as they are written" : "no trial_end: the trial was cut short"}</span>`;
  return `${badge(row.state, row.verdict)}${row.speedup !== null ? chip("speedup", "×" + speed(row.speedup)) : ""}
    ${chip("events", s.total.toLocaleString(), "", "events")}${chip("turns", c.model_response || 0, "", "turns")}${chip("tool calls", c.tool_call || 0)}
    ${chip("retries", c.retry || 0, c.retry ? "v-incorrect" : "")}${chip("budget hits", c.budget || 0, c.budget ? "v-hack_detected" : "")}
    ${chip("errors", c.error || 0, c.error ? "v-hack_detected" : "")}${chip("duration", s.duration_s === null ? "–" : speed(s.duration_s) + " s", "", "duration")}
    ${chip("tokens", (row.input_tokens + row.output_tokens).toLocaleString(), "", "tokens")}${chip("dollars", money(row.dollars))}${state}`;
}
function filtersHtml(c, filter) {
  return `<span class="muted small">show only:</span>${TYPES.filter((t) => c[t]).map((t) =>
    `<label><input type="checkbox" value="${t}"${filter.has(t) ? " checked" : ""}>${t.replace(/_/g, " ")} (<span class="n">${c[t]}</span>)</label>`).join("")}`;
}

async function pageTrial(token, sweep, trial) {
  const filter = new Set((hashQuery().get("types") || "").split(",").filter((t) => TYPES.includes(t)));
  const q = (offset) => `/api/transcript?sweep=${enc(sweep)}&trial=${enc(trial)}&offset=${offset}&limit=${PAGE}` + (filter.size ? `&types=${[...filter].join(",")}` : "");
  const first = await api(q(0) + "&summary=1");
  if (token !== renderToken) return;
  let s = first.summary;
  const row = first.trial;
  const [suite, task] = trial.split("/");
  setTitle(`Transcript ${row.model} #${row.sample} · ${task}`);
  setCrumbs([{ text: "Leaderboards", href: "#/" }, { text: sweep }, { text: suite, href: boardHref(sweep, suite) },
    { text: task, href: kernelHref(sweep, suite, task) }, { text: `${row.model} #${row.sample}` }]);
  const t0 = s.first_ts ? Date.parse(s.first_ts) / 1000 : null;
  view.innerHTML = `<div class="pagehead"><div><h1>Transcript · ${esc(row.model)}</h1>
      <div class="muted">${esc(trial)} · <a href="/api/file?sweep=${enc(sweep)}&trial=${enc(trial)}&name=transcript.jsonl">raw transcript.jsonl</a></div>
      <div class="meta" id="trial-meta">${trialMeta(s, row)}</div></div></div>
    <section class="card"><h2>Events <span class="muted" id="ev-count"></span></h2>
      <div class="filters" id="filters">${filtersHtml(s.counts, filter)}</div>
      <div class="events" id="events"></div><div class="more" id="more"></div></section>`;
  const list = document.getElementById("events"), more = document.getElementById("more"), count = document.getElementById("ev-count");
  let loaded = 0, total = first.total, prev = null, busy = false, gen = 0;
  const append = (page) => {
    const r = eventsHtml(page.events, t0, prev);
    prev = r.prev;
    list.insertAdjacentHTML("beforeend", r.html);
    loaded += page.events.length;
    total = page.total;
    count.textContent = `${loaded.toLocaleString()} of ${total.toLocaleString()} loaded`;
    more.textContent = loaded < total ? "loading more as you scroll…" : "end of transcript";
  };
  // One loader for scrolling and filtering: a filter change starts a new generation, and a
  // request of an older one is dropped when it returns (its filter is no longer the page's).
  const next = async () => {
    if (busy || loaded >= total) return;
    busy = true;
    const mine = gen;
    try {
      const page = await api(q(loaded));
      if (mine === gen && token === renderToken) append(page);
    } finally {
      if (mine === gen) busy = false;
    }
    if (mine === gen && token === renderToken && more.getBoundingClientRect().top < window.innerHeight + 800) next();
  };
  append(first);
  // A trial still running: its transcript grows; once every loaded page is shown, look for new
  // events every two seconds until its trial_end arrives. Each look also renews the header (state,
  // events, turns, tokens, time: the ledger's row comes with the summary) and the filters' counts.
  if (!s.ended) {
    const tail = async () => {
      if (token !== renderToken) return;
      if (!busy && loaded >= total) {
        const page = await api(q(loaded) + "&summary=1").catch(() => null);
        if (page && token === renderToken) {
          if (page.events.length) append(page);
          s = page.summary;
          document.getElementById("trial-meta").innerHTML = trialMeta(s, page.trial);
          document.getElementById("filters").innerHTML = filtersHtml(s.counts, filter);
          // the ledger marks the trial finished a moment after its trial_end is written: look once more
          if (s.ended && page.trial.state !== "running") return;
        }
      }
      setTimeout(tail, 2000);
    };
    setTimeout(tail, 2000);
  }
  const observer = new IntersectionObserver((entries) => { if (entries.some((e) => e.isIntersecting)) next(); }, { rootMargin: "800px" });
  observer.observe(more);
  document.getElementById("filters").addEventListener("change", (ev) => {
    if (ev.target.checked) filter.add(ev.target.value); else filter.delete(ev.target.value);
    setHashQuery({ types: [...filter].join(",") });
    gen++; busy = false; loaded = 0; total = 1; prev = null; list.innerHTML = "";
    next();
  });
  const anchor = hashQuery().get("event");
  if (anchor) {
    const el = list.querySelector(`.ev[data-i="${CSS.escape(anchor)}"]`);
    if (el) { el.classList.add("selected"); el.scrollIntoView({ block: "center" }); }
  }
  list.addEventListener("click", (ev) => {
    const el = ev.target.closest(".i");
    if (!el) return;
    const e = el.closest(".ev");
    list.querySelectorAll(".ev.selected").forEach((x) => x.classList.remove("selected"));
    e.classList.add("selected");
    setHashQuery({ event: e.dataset.i });
  });
}

// ---------- routing and live updates ----------
async function route() {
  const token = ++renderToken;
  const path = location.hash.replace(/^#\/?/, "").split("?")[0];
  const parts = path.split("/").map(decodeURIComponent);
  try {
    if (parts[0] === "board" && parts.length === 3) await pageBoard(token, parts[1], parts[2]);
    else if (parts[0] === "model" && parts.length === 4) await pageModel(token, parts[1], parts[2], parts[3]);
    else if (parts[0] === "compare" && parts.length === 3) await pageCompare(token, parts[1], parts[2]);
    else if (parts[0] === "kernel" && parts.length === 4) await pageKernel(token, parts[1], parts[2], parts[3]);
    else if (parts[0] === "trial" && parts.length >= 3) await pageTrial(token, parts[1], parts.slice(2).join("/"));
    else if (path === "") await pageHome(token);
    else notFound(`There is no page "#/${path}".`);
    view.dataset.rendered = String(token);
  } catch (err) {
    if (token === renderToken) fail(err);
  }
}

const REFRESH_MS = 1500;  // a busy sweep commits often: re-render at most this often
let lastRefresh = 0, refreshTimer = null;
function refresh() {
  // A transcript page keeps its scroll position and loaded pages (it tails a running trial itself).
  if (location.hash.startsWith("#/trial/")) return;
  const wait = lastRefresh + REFRESH_MS - Date.now();
  if (wait > 0) {
    if (!refreshTimer) refreshTimer = setTimeout(() => { refreshTimer = null; refresh(); }, wait);
    return;
  }
  lastRefresh = Date.now();
  const y = window.scrollY;
  route().then(() => window.scrollTo(0, y));
}

function connectLive() {
  let version = null;
  const source = new EventSource("/api/events");
  source.addEventListener("version", (ev) => {
    live.className = "live on";
    live.textContent = "live";
    if (version !== null && ev.data !== version) {
      // The ledger or index changed (a trial started or finished): re-read what this page shows.
      refresh();
      live.classList.add("flash");
      setTimeout(() => live.classList.remove("flash"), 1200);
    }
    version = ev.data;
  });
  source.onerror = () => { live.className = "live"; live.textContent = "reconnecting"; };
}

window.addEventListener("hashchange", route);
route();
connectLive();
