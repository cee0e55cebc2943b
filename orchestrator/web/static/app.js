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
  setView(`<div class="card notfound" id="not-found"><h1>Not found</h1><p>${esc(what)}</p>
    <p><a href="#/" id="back-home">← back to the leaderboards</a></p><div id="boards-here"></div></div>`);
  // what there is instead: every board, as a link
  const token = renderToken;
  api("/api/sweeps").then((data) => {
    const el = document.getElementById("boards-here");
    if (!el || token !== renderToken) return;
    const links = data.sweeps.flatMap((s) => s.suites.map((su) => `<li><a href="${boardHref(s.id, su.suite)}">${esc(s.id)} / ${esc(su.suite)}</a></li>`));
    el.innerHTML = `<h2>Boards</h2><ul id="boards">${links.join("") || "<li>no sweeps yet</li>"}</ul>`;
  }).catch(() => {});
}
function fail(err) {
  if (err && err.status === 404) return notFound(err.message);
  setTitle("Error");
  view.innerHTML = `<div class="err">${esc(err.message || err)}</div>`;
}
function setTitle(text) { document.title = text ? `${text} · KernelArena` : "KernelArena"; }

// ---------- in-place updates ----------
// A live refresh renders the page again into a detached copy and patches the shown page to match
// it: elements that stay keep their scroll position, focus, caret, typed text, selection and open
// state. Children are matched by data-key (or id), else by position and tag; an element with
// data-own holds what a script drew into it (plots, a card's code) and keeps its children.
let patching = false;
function keyOf(n) { return n.nodeType === 1 ? n.getAttribute("data-key") || n.id || null : null; }
function morphNode(cur, next) {
  if (cur.nodeType !== 1) {
    if (cur.nodeValue !== next.nodeValue) cur.nodeValue = next.nodeValue;
    return;
  }
  for (const a of Array.from(cur.attributes)) {
    // a card the reader opened stays open
    if (!next.hasAttribute(a.name) && !(a.name === "open" && cur.tagName === "DETAILS")) cur.removeAttribute(a.name);
  }
  for (const a of Array.from(next.attributes)) if (cur.getAttribute(a.name) !== a.value) cur.setAttribute(a.name, a.value);
  if (!cur.hasAttribute("data-own")) morphChildren(cur, next);
}
function morphChildren(cur, next) {
  const keyed = new Map();
  for (const c of cur.childNodes) { const k = keyOf(c); if (k) keyed.set(k, c); }
  let at = cur.firstChild;
  for (const n of Array.from(next.childNodes)) {
    const k = keyOf(n);
    let match = null;
    if (k) {
      match = keyed.get(k) || null;
      if (match && match.nodeName !== n.nodeName) match = null;
      keyed.delete(k);
    } else if (at && !keyOf(at) && at.nodeType === n.nodeType && at.nodeName === n.nodeName) match = at;
    if (!match) { cur.insertBefore(n, at); continue; }
    if (match === at) at = at.nextSibling; else cur.insertBefore(match, at);
    morphNode(match, n);
  }
  while (at) { const nx = at.nextSibling; cur.removeChild(at); at = nx; }
}
function setView(html) {
  if (!patching) { view.innerHTML = html; return; }
  const next = document.createElement("main");
  next.innerHTML = html;
  morphChildren(view, next);
}
// One listener per element and event type: a page wired again after a refresh replaces its own.
const bound = new WeakMap();
function on(el, type, fn) {
  let m = bound.get(el);
  if (!m) bound.set(el, (m = {}));
  if (m[type]) el.removeEventListener(type, m[type]);
  m[type] = fn;
  el.addEventListener(type, fn);
}
// Task names sort as people count: level1_2 before level1_10.
const natural = new Intl.Collator("en", { numeric: true, sensitivity: "base" });
// A long model name keeps its provider and its version: "openrouter:qwen/…-coder-32b".
function midEllipsis(s, n = 26) {
  s = String(s);
  if (s.length <= n) return s;
  const head = Math.ceil((n - 1) / 2), tail = n - 1 - head;
  return s.slice(0, head) + "…" + s.slice(s.length - tail);
}
function nameHtml(s, n = 26) { return `<span class="name" title="${esc(s)}">${esc(midEllipsis(s, n))}</span>`; }
// The route's query (after "?" in the hash): sort, filters, selected trial. Updating it replaces
// the history entry and does not re-render (the page already shows that state).
function hashQuery() { return new URLSearchParams((location.hash.split("?")[1]) || ""); }
function setHashQuery(update) {
  const [path] = location.hash.split("?");
  const q = hashQuery();
  for (const [k, v] of Object.entries(update)) { if (v === null || v === undefined || v === "") q.delete(k); else q.set(k, v); }
  const text = q.toString();
  history.replaceState(history.state, "", `${path}${text ? "?" + text : ""}`);
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
      return (isNum ? (x < y ? -1 : x > y ? 1 : 0) : natural.compare(x, y)) * dir;
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
    on(th, "click", toggle);
    on(th, "keydown", (ev) => {
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

// A CPU-scored board's caveat, on every page that shows its numbers.
function caveatHtml(text) { return text ? `<p class="warn" id="cpu-note">${esc(text)}</p>` : ""; }

// ---------- home: every sweep and its boards ----------
// Never one "leader" where several models share rank 1 (their intervals overlap).
function leadersHtml(su) {
  const top = su.leaders || [];
  if (!top.length) return '<span class="muted">–</span>';
  if (top.length === 1) return `${nameHtml(top[0], 30)} <span class="muted small">score ${speed(su.leader_score, 3)}</span>`;
  return `<span title="${esc(top.join(", "))}">${top.length} models share rank 1</span>
    <span class="muted small">${top.slice(0, 3).map((m) => esc(midEllipsis(m, 20))).join(", ")}${top.length > 3 ? ", …" : ""}</span>`;
}
async function pageHome(token) {
  setCrumbs([{ text: "Leaderboards" }]);
  setTitle("Leaderboards");
  const data = await api("/api/sweeps");
  if (token !== renderToken) return;
  if (!data.sweeps.length) {
    setView(`<div class="card"><h2>No sweeps yet</h2><p class="muted">Run <code>kernelarena sweep SPEC.toml</code>;
      its folder appears here as soon as its index is written, and updates live.</p></div>`);
    return;
  }
  const rows = [];
  for (const s of data.sweeps) {
    const c = s.counts, total = c.pending + c.running + c.done + c.failed;
    const finished = c.done + c.failed;
    for (const su of s.suites) {
      rows.push(`<tr data-key="${esc(s.id)}/${esc(su.suite)}">
        <td class="left"><a href="${boardHref(s.id, su.suite)}"><b>${esc(su.suite)}</b></a></td>
        <td class="left">${esc(s.hardware)}</td><td class="left">${esc(s.harness)}</td>
        <td class="left" data-v="${esc(s.id)}">${esc(s.id)}</td>
        <td class="left leaders" data-v="${esc(su.leaders[0] || "")}">${leadersHtml(su)}</td>
        <td data-v="${s.models}">${s.models}</td><td data-v="${su.trials}">${su.trials}</td>
        <td data-v="${total ? finished / total : 0}"><span class="bar"><i style="width:${total ? (100 * finished / total).toFixed(1) : 0}%"></i></span>${finished}/${total}${c.running ? ` <span class="muted small">(${c.running} running)</span>` : ""}</td>
        <td data-v="${s.updated_at}">${ago(s.updated_at)}</td></tr>`);
    }
  }
  setView(`<div class="pagehead"><div><h1>Leaderboards</h1>
      <div class="muted">One board per sweep and suite, labelled with the hardware that scored it and the agent harness.</div></div></div>
    <div class="card"><div class="tablewrap"><table class="grid sortable sticky1" id="sweeps"><thead><tr>
      <th class="left">suite</th><th class="left">hardware</th><th class="left">harness</th><th class="left">sweep</th><th class="left" title="The models at rank 1: their score intervals overlap, so the board cannot tell them apart">rank 1</th>
      <th data-type="num">models</th><th data-type="num">trials</th><th data-type="num">finished</th><th data-type="num">updated</th>
    </tr></thead><tbody>${rows.join("")}</tbody></table></div></div>`);
  sortable(document.getElementById("sweeps"));
}

// ---------- a board: leaderboard, plots, kernel matrix ----------
// One matrix cell: a square per sample (its verdict's colour; a hack is a red square marked "!",
// its pattern names in the title), the best correct speedup below, the cell shaded by the share of
// samples that passed. A fixed width per column keeps 14 models in view at 1440 px.
function heatCell(cells, link) {
  if (!cells.length) return '<td class="hm">–</td>';
  const passed = cells.filter((c) => c.verdict === "passed");
  const best = passed.length ? Math.max(...passed.map((c) => c.speedup ?? 0)) : null;
  const dots = cells.map((c) => {
    const v = verdictClass(c.state, c.verdict);
    const hacks = [...new Set(c.hacks || [])];
    const title = `sample ${c.sample}: ${v.replace(/_/g, " ")}${hacks.length ? " — " + hacks.join(", ") : ""}`
      + `${c.speedup !== null && c.verdict === "passed" ? " ×" + speed(c.speedup) : ""}${(c.flags || []).length ? " ⚑ " + c.flags.join(", ") : ""}`;
    const dot = `<span class="dot v-${esc(v)}${hacks.length ? " hack" : ""}" title="${esc(title)}">${hacks.length ? "!" : ""}</span>`;
    return link(c) ? `<a href="${link(c)}">${dot}</a>` : dot;
  }).join("");
  const flags = [...new Set(cells.flatMap((c) => c.flags || []))];
  const contended = cells.some((c) => c.contended && c.verdict === "passed");
  const marks = (flags.length ? `<span class="flagmark" title="audit flag: ${esc(flags.join(", "))}">⚑</span>` : "")
    + (contended ? '<span class="contended" title="timed while other compute ran on this device (first timing and its re-time): the speedup may be off">≈</span>' : "");
  const share = passed.length / cells.length;
  const shade = share === 0 ? 0 : share < 0.5 ? 1 : share < 1 ? 2 : 3;
  return `<td class="hm s${shade}" data-v="${passed.length + (best ?? 0) / 1e6}"><div class="dots">${dots}</div>`
    + `<div class="best">${best !== null ? "×" + speed(best) : ""}${marks}</div></td>`;
}
function matrixLegend() {
  const dot = (v, text, extra = "") => `<span class="lg"><span class="dot v-${v}${extra ? " hack" : ""}">${extra}</span>${text}</span>`;
  return `<div class="legend" id="matrix-legend">${dot("passed", "passed")}${dot("incorrect", "incorrect, compile or runtime error, timeout")}
    ${dot("hack_detected", "hack (name on hover)", "!")}${dot("running", "running")}${dot("pending", "pending")}
    <span class="lg"><span class="flagmark">⚑</span>audit flag</span>
    <span class="lg"><span class="sw s1"></span><span class="sw s2"></span><span class="sw s3"></span>share of samples passed</span>
    <span class="lg">×n: best correct speedup</span></div>`;
}
// [key, label, type, the leaderboard's column name whose explanation (column_help) is the tooltip]
const COLS = [
  ["rank", "rank", "num", "rank"], ["model", "model", "text", "model"], ["score", "score (95% CI)", "num", "score"],
  ["conf", "P(rank holds)", "num", "P(rank holds)"], ["strict", "strict", "num", "strict rank"],
  ["range", "rank range", "num", "rank range"], ["solved", "solved", "num", "solved"],
  ["pass", "pass@1", "num", "pass@1"], ["geomean", "geomean × (95% CI)", "num", "geomean x"],
  ["mean", "mean ×", "num", "mean x"], ["median", "median ×", "num", "median x"], ["f1", "fast₁.₀", "num", "fast_1.0"],
  ["f15", "fast₁.₅", "num", "fast_1.5"], ["hacks", "hacks", "num", "hacks"], ["flags", "flagged", "num", "flagged"],
  ["tok", "tokens / solved", "num", "tokens/solved"], ["usd", "$ / solved", "num", "$/solved"],
  ["fin", "finished", "num", "finished"],
];
// Tooltips where the server's column_help has none for a column.
const COL_HELP = {
  rank: "Shared rank: 1 + the number of models whose 95% score interval lies wholly above this one's (overlapping intervals share a rank)",
  "strict rank": "The order by score alone, 1..N, even where the intervals overlap",
  "rank range": "The best and worst rank this model's score interval allows",
};
const RANK_NOTE = "rank = 1 + the number of models whose 95% score interval lies wholly above this one's (LMArena's rule: overlapping intervals share a rank); rank range = the best and worst rank the intervals allow; strict = the order by score alone.";

function leaderboardRow(m, sweep, suite, ctx) {
  const conf = m.order_confidence;
  // An exact tie with the next model resamples to 0.50 by construction: nothing to warn about.
  const tie = ctx.next && ctx.next.score !== null && ctx.next.score === m.score;
  const confCls = conf === null || tie ? "" : conf < 0.75 ? "conf-low" : conf < 0.9 ? "conf-mid" : "";
  const shared = m.rank === null ? 0 : ctx.sharing[m.rank] || 0;
  const range = m.rank_range;
  const cells = [
    `<td class="rank" data-v="${m.rank ?? ""}"${shared > 1 ? ` title="${shared} models share rank ${m.rank}"` : ""}>${m.rank === null || m.rank === undefined ? '<span class="muted" title="no finished trial: not ranked">–</span>' : m.rank}</td>`,
    `<td class="left model" data-v="${esc(m.model)}"><a href="${modelHref(sweep, suite, m.model)}">${nameHtml(m.model, 34)}</a></td>`,
    `<td class="score" data-v="${m.score ?? ""}"><b>${speed(m.score)}</b><span class="ci">${ci(m.score_ci)}</span></td>`,
    `<td data-v="${conf ?? ""}" class="${confCls}"${tie ? ' title="identical scores: an exact tie"' : ""}>${conf === null ? "–" : num(conf)}${tie ? ' <span class="muted small">tie</span>' : ""}</td>`,
    `<td class="strict" data-v="${ctx.strict ?? ""}">${ctx.strict ?? "–"}</td>`,
    `<td class="range" data-v="${range ? range[1] : ""}">${range ? (range[0] === range[1] ? String(range[0]) : `${range[0]}–${range[1]}`) : "–"}</td>`,
    `<td data-v="${m.solved}">${m.solved}/${m.tasks}</td>`,
    `<td data-v="${m.pass_at_1}">${num(m.pass_at_1)}</td>`,
    `<td data-v="${m.geomean_speedup ?? ""}">${speed(m.geomean_speedup)}<span class="ci">${ci(m.geomean_ci)}</span></td>`,
    `<td data-v="${m.mean_speedup ?? ""}">${speed(m.mean_speedup)}</td>`,
    `<td data-v="${m.median_speedup ?? ""}">${speed(m.median_speedup)}</td>`,
    `<td data-v="${m.fast_p["1.0"]}">${num(m.fast_p["1.0"])}</td>`,
    `<td data-v="${m.fast_p["1.5"]}">${num(m.fast_p["1.5"])}</td>`,
    `<td data-v="${m.hacks}">${m.hacks ? `<span class="badge v-hack_detected">${m.hacks}</span>` : "0"}</td>`,
    `<td data-v="${m.flagged}">${m.flagged ? `<span class="badge v-flag">${m.flagged}</span>` : "0"}</td>`,
    `<td data-v="${m.tokens_per_solved ?? ""}">${m.tokens_per_solved === null ? "–" : Math.round(m.tokens_per_solved).toLocaleString("en-US")}</td>`,
    `<td data-v="${m.dollars_per_solved ?? ""}">${money(m.dollars_per_solved)}</td>`,
    `<td data-v="${m.planned ? m.finished / m.planned : 0}">${m.finished}/${m.planned}</td>`,
  ];
  return `<tr data-model="${esc(m.model)}" data-key="m:${esc(m.model)}">${cells.join("")}</tr>`;
}
function leaderboardRows(models, sweep, suite) {
  const sharing = {};
  for (const m of models) if (m.rank !== null && m.rank !== undefined) sharing[m.rank] = (sharing[m.rank] || 0) + 1;
  let pos = 0;
  return models.map((m, i) => {
    const ranked = m.rank !== null && m.rank !== undefined;
    if (ranked) pos++;
    const strict = m.rank_strict ?? (ranked ? pos : null);
    return leaderboardRow(m, sweep, suite, { sharing, strict, next: models[i + 1] || null });
  }).join("");
}
function rankSummary(models) {
  const top = models.filter((m) => m.rank === 1);
  if (top.length > 1) return `${top.length} models share rank 1: their score intervals overlap.`;
  return top.length ? `${esc(top[0].model)} ranks first on its own: its score interval lies above every other's.` : "";
}

async function pageBoard(token, sweep, suite) {
  const data = await api(`/api/board/${enc(sweep)}/${enc(suite)}`);
  if (token !== renderToken) return;
  const b = data.board, c = data.counts;
  setCrumbs([{ text: "Leaderboards", href: "#/" }, { text: `${sweep}` }, { text: suite }]);
  setTitle(`${suite} · ${sweep}`);
  const help = data.column_help || {};
  const head = COLS.map(([key, label, type, name]) => `<th data-type="${type}" class="c-${key}${type === "text" ? " left" : ""}" title="${esc(help[name] || COL_HELP[name] || "")}">${label}</th>`).join("");
  const rankNote = b.rank_note || data.rank_note || (b.models[0] || {}).rank_note || RANK_NOTE;
  const hw = b.hardware && typeof b.hardware === "object" ? b.hardware : null;
  const caveat = hw ? hw.cpu_caveat : data.hardware === "CPU" ? data.cpu_note : null;
  const cpuNote = caveatHtml(caveat);
  const boot = b.bootstrap
    ? `95% CI: percentile interval over ${b.bootstrap.resamples} paired bootstrap resamples (seed ${b.bootstrap.seed}) of the tasks, and of the samples within a task.
       P(rank holds): share of resamples in which a model ranks above the one below it (ties count ½); below 0.9 the two ranks are not clearly separated.
       Rank: shared where the score intervals overlap (the note above the table); strict: the order by score alone.`
    : "No bootstrap intervals (served with --bootstrap 0).";
  const models = b.models.map((m) => m.model);
  const tasksInOrder = b.kernels.slice().sort((x, y) => natural.compare(x.task, y.task));
  const matrix = tasksInOrder.map((k) => {
    const byModel = {};
    for (const cell of k.cells) (byModel[cell.model] = byModel[cell.model] || []).push(cell);
    const tds = models.map((m) => heatCell(byModel[m] || [], (cell) => (cell.state === "pending" ? null
      : trialHref(sweep, `${k.suite}/${k.task}/${cell.model}/${cell.sample}`)))).join("");
    return `<tr data-task="${esc(k.task)}" data-key="t:${esc(k.task)}"><th class="left task" scope="row" data-v="${esc(k.task)}"><a href="${kernelHref(sweep, k.suite, k.task)}" title="${esc(k.task)}">${esc(k.task)}</a></th>${tds}</tr>`;
  }).join("");
  setView(`
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
    <section class="card"><h2>Leaderboard <a class="small" id="compare-link" href="${compareHref(sweep, suite, models[0] || "", models[1] || models[0] || "")}">compare two models →</a></h2><p class="rank-note" id="rank-note"><b>${rankSummary(b.models)}</b> <span class="muted">${esc(rankNote)}</span></p>
      <p class="muted" id="method-note">${esc(data.method_note)} Hover a header for its meaning; click it (or Enter) to sort.</p>
      <div class="tablewrap"><table class="grid sortable sticky2" id="leaderboard"><thead><tr>${head}</tr></thead>
      <tbody>${leaderboardRows(b.models, sweep, suite)}</tbody></table></div>
      <p class="note">${boot}</p></section>
    <section class="card"><h2>Plots</h2><div class="plots">
      <div class="plot" id="plot-speedup" data-own></div><div class="plot" id="plot-cost" data-own></div><div class="plot" id="plot-roofline" data-own></div>
    </div></section>
    <section class="card"><h2>Kernels <span class="muted">each model's verdict per task; a task opens its kernels, a verdict its transcript</span></h2>
      ${matrixLegend()}
      <div class="tablewrap matrixwrap" id="matrixwrap"><table class="grid sortable matrix" id="kernels"><thead><tr><th class="left task">task</th>
      ${models.map((m) => `<th class="left mcol" data-model="${esc(m)}" data-key="h:${esc(m)}" title="${esc(m)}">${esc(midEllipsis(m, 30))}</th>`).join("")}</tr></thead><tbody>${matrix}</tbody></table></div></section>`);
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
  // A refresh keeps what is being typed (and its caret): the inputs are the same elements.
  if (!patching) {
    fm.value = q.get("m") || "";
    ft.value = q.get("t") || "";
  }
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
  on(fm, "input", apply);
  on(ft, "input", apply);
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
  margin: { l: 60, r: 20, t: 52, b: 70 }, paper_bgcolor: "#fff", plot_bgcolor: "#fff",
};
// 20 colours x 7 marker symbols: a model keeps its colour and symbol in every plot, and 14+
// models never share both (a pair sharing a colour differs in symbol, and the reverse).
const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
  "#393b79", "#ad494a", "#637939", "#8c6d31", "#7b4173", "#3182bd", "#e6550d", "#31a354", "#756bb1", "#636363"];
const SYMBOLS = ["circle", "square", "diamond", "triangle-up", "x", "star", "triangle-down"];
function modelStyle(i) { return { color: PALETTE[i % PALETTE.length], symbol: SYMBOLS[i % SYMBOLS.length] }; }
function layout(title, extra) {
  // The title sits left; the toolbar (wide screens only, see plotConfig) sits right, clear of it.
  return Object.assign({}, PLOT_LAYOUT, { height: 360, title: { text: title, font: { size: 14 }, x: 0.01, xanchor: "left", y: 0.98, yanchor: "top" } }, extra);
}
function plotConfig(el) {
  return { displaylogo: false, responsive: true, displayModeBar: el.clientWidth >= 600 ? "hover" : false,
    modeBarButtonsToRemove: ["lasso2d", "select2d", "autoScale2d", "zoomIn2d", "zoomOut2d"] };
}
function emptyPlot(el, text) {
  if (window.Plotly && el.classList.contains("js-plotly-plot")) Plotly.purge(el);
  el.innerHTML = `<div class="empty">${esc(text)}</div>`;
  el.dataset.empty = "1";
}
// A refresh redraws a plot in place (Plotly.react keeps the element, its size and zoom state).
function drawPlot(el, traces, lay) {
  if (el.dataset.empty) { el.innerHTML = ""; delete el.dataset.empty; }
  return (el.classList.contains("js-plotly-plot") ? Plotly.react : Plotly.newPlot)(el, traces, lay, plotConfig(el));
}
// Log-axis ticks at 1, 2 and 5 of every decade the data spans, written as the tables write numbers.
function logTicks(lo, hi) {
  const ticks = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
    for (const f of [1, 2, 5]) { const v = f * 10 ** e; if (v >= lo / 1.0001 && v <= hi * 1.0001) ticks.push(v); }
  }
  return ticks;
}

async function drawPlots(token, sweep, suite) {
  let data;
  try {
    [data] = await Promise.all([api(`/api/plots/${enc(sweep)}/${enc(suite)}`), loadPlotly()]);
  } catch (err) {
    emptyPlot(document.getElementById("plot-speedup"), err.message);
    return;
  }
  if (token !== renderToken) return;
  const sp = document.getElementById("plot-speedup");
  const models = Object.keys(data.speedups);
  const style = Object.fromEntries(models.map((m, i) => [m, modelStyle(i)]));
  const narrow = sp.clientWidth < 600;
  // shortened axis and legend names, unless shortening would make two of them equal
  const n = narrow ? 14 : 22;
  const unique = new Set(models.map((m) => midEllipsis(m, n))).size === models.length;
  const short = (m) => (unique ? midEllipsis(m, n) : m);
  const tilted = { tickangle: models.length > 6 ? -40 : 0, automargin: true };
  if (models.some((m) => data.speedups[m].length)) {
    const all = models.flatMap((m) => data.speedups[m]).filter((v) => v > 0);
    // the range pads the data by a little, and always shows the 1x line
    const lo = Math.min(...all, 1) / 1.25, hi = Math.max(...all, 1) * 1.25;
    const ticks = logTicks(lo, hi);
    drawPlot(sp, models.map((m) => ({ type: "box", name: short(m), y: data.speedups[m], boxpoints: "all", jitter: 0.4, pointpos: 0,
      marker: { size: 4, color: style[m].color, symbol: style[m].symbol }, line: { color: style[m].color },
      hovertemplate: `${esc(m)}<br>×%{y:.3g}<extra></extra>` })),
    layout("Speedup of correct kernels, per model", { yaxis: { type: "log", range: [Math.log10(lo), Math.log10(hi)], tickvals: ticks,
      ticktext: ticks.map((v) => speed(v, 1) + "×"), title: { text: narrow ? "speedup (log)" : "speedup (log; dashed: 1× = baseline)" }, zeroline: false },
    xaxis: tilted, showlegend: false,
    shapes: [{ type: "line", xref: "paper", x0: 0, x1: 1, y0: 1, y1: 1, line: { color: "#1d2330", width: 1, dash: "dash" } }] }));
  } else emptyPlot(sp, "No correct kernel yet: nothing to plot.");
  const cost = document.getElementById("plot-cost");
  const rows = data.cost.filter((r) => r.finished);
  if (rows.length) {
    // One trace per model, each its own colour and symbol; the x axis spans the data, not $0.
    const xs = rows.map((r) => r.dollars), span = Math.max(...xs) - Math.min(...xs);
    const pad = span > 0 ? span * 0.08 : Math.max(Math.abs(xs[0]) * 0.05, 0.01);
    const legend = narrow ? { orientation: "h", y: -0.3, yanchor: "top", x: 0, font: { size: 10 } } : { font: { size: 11 }, y: 1, yanchor: "top" };
    // tall enough for every legend entry (a legend that scrolls hides models)
    const height = narrow ? 380 + 22 * Math.ceil(rows.length / 2) : Math.max(380, 150 + 21 * rows.length);
    drawPlot(cost, rows.map((r) => ({ type: "scatter", mode: "markers", name: short(r.model), x: [r.dollars], y: [r.pass_at_1],
      marker: { size: 11, color: style[r.model].color, symbol: style[r.model].symbol, line: { width: 1, color: "#fff" } },
      hovertemplate: `${esc(r.model)}<br>${money(r.dollars)} spent<br>pass@1 %{y:.2f}<extra></extra>` })),
    layout("pass@1 against dollars spent", { height, legend,
      xaxis: { title: { text: "dollars spent (all attempts)" }, range: [Math.min(...xs) - pad, Math.max(...xs) + pad], tickprefix: "$", tickformat: ",.2f" },
      yaxis: { title: { text: "pass@1" }, range: [-0.05, 1.05] }, margin: { l: 60, r: 10, t: 52, b: 60 } }));
  } else emptyPlot(cost, "No finished trial yet.");
  const roof = document.getElementById("plot-roofline");
  const tasks = Array.from(new Set(Object.values(data.roofline).flatMap((t) => Object.keys(t)))).sort(natural.compare);
  if (tasks.length) {
    // A task x model heat map: grouped bars are unreadable at 40 tasks x 14 models.
    const ms = Object.keys(data.roofline);
    drawPlot(roof, [{ type: "heatmap", x: ms.map(short), y: tasks, z: tasks.map((t) => ms.map((m) => data.roofline[m][t] ?? null)),
      colorscale: "Blues", zmin: 0, zmax: 1, colorbar: { tickformat: ".0%", title: { text: "share" } },
      hovertemplate: "%{y}<br>%{x}<br>%{z:.1%} of the roofline<extra></extra>" }],
    layout("Roofline share per task (best correct sample)", { height: Math.max(360, 120 + 18 * tasks.length),
      xaxis: tilted, yaxis: { automargin: true, autorange: "reversed" } }));
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

// A finding once per pattern, however many seeds or input sets repeated it (the count says how many).
function uniqueFindings(list) {
  const seen = new Map();
  for (const h of list || []) {
    const f = seen.get(h.pattern);
    if (f) { f.n++; if (h.evidence && h.evidence !== f.evidence) f.others.push(h.evidence); } else seen.set(h.pattern, { pattern: h.pattern, evidence: h.evidence, n: 1, others: [] });
  }
  return [...seen.values()];
}
function findingsHtml(t) {
  const out = [];
  const times = (f) => (f.n > 1 ? ` <span class="muted small">found ${f.n} times</span>` : "");
  const evidence = (f) => (f.evidence ? `<p>${esc(f.evidence)}</p>` : '<p class="muted">no score.json: the ledger names the finding, without its evidence</p>')
    + (f.others.length ? `<details class="seeds"><summary class="small muted">the same finding's other evidence (${f.others.length})</summary>${f.others.map((e) => `<p>${esc(e)}</p>`).join("")}</details>` : "");
  for (const h of uniqueFindings(t.hacks)) out.push(`<div class="finding"><b>${esc(h.pattern)}</b>${times(h)}${evidence(h)}</div>`);
  for (const f of uniqueFindings(t.flags)) out.push(`<div class="finding flag"><b>${esc(f.pattern)}</b> <span class="muted small">audit flag</span>${times(f)}${evidence(f)}</div>`);
  if (t.error && t.verdict !== "hack_detected") out.push(`<div class="finding flag"><b>error</b><p>${esc(String(t.error).slice(0, 4000))}</p></div>`);
  return out.join("");
}

// The few figures a reader checks first; the scorer's other fields (versions, stage durations,
// isolation) behind a "details" toggle.
function detailsHtml(d) {
  if (!d) return "";
  const item = (label, v) => (v === null || v === undefined || v === "" ? "" : `<div>${label} <b>${esc(v)}</b></div>`);
  const env = Object.entries(d.environment || {}).filter(([, v]) => v !== null && typeof v !== "object")
    .map(([k, v]) => item(k, v)).join("");
  const durations = Object.entries(d.durations_s || {}).map(([k, v]) => item(`${k} s`, speed(v))).join("");
  const spread = (v) => (v === null || v === undefined ? null : `±${speed(100 * v, 2)}%`);
  const main = [item("repetitions", d.repetitions), item("kernel spread", spread(d.kernel_spread)),
    item("correctness", d.correctness_trials ? `${d.correctness_passed}/${d.correctness_trials} input sets` : null),
    item("timing", d.contended ? "contended (foreign compute on the device, also when re-timed)" : null)].join("");
  const rest = [item("timer", d.timer), item("baseline spread", spread(d.baseline_spread)),
    item("tolerance", d.tolerance), item("max abs error", d.max_abs_error === null ? null : speed(d.max_abs_error)),
    item("max rel error", d.max_rel_error === null ? null : speed(d.max_rel_error)),
    item("kernel's wall", d.isolation), env, durations].join("");
  const n = (rest.match(/<div>/g) || []).length;
  return (main ? `<div class="details-grid">${main}</div>` : "")
    + (rest ? `<details class="more-details"><summary class="small">details (${n} more fields)</summary><div class="details-grid">${rest}</div></details>` : "");
}

async function pageKernel(token, sweep, suite, task) {
  const d = await api(`/api/kernel/${enc(sweep)}/${enc(suite)}/${enc(task)}`);
  if (token !== renderToken) return;
  setCrumbs([{ text: "Leaderboards", href: "#/" }, { text: sweep }, { text: suite, href: boardHref(sweep, suite) }, { text: task }]);
  setTitle(`${task} · ${suite} · ${sweep}`);
  // Cards in the board's rank order (unranked models last), then by sample.
  const rank = (m) => d.ranks[m] ?? 1e9;
  const trials = d.trials.slice().sort((a, b) => rank(a.model) - rank(b.model) || a.model.localeCompare(b.model) || a.sample - b.sample);
  const summary = trials.map((t, i) => `<tr data-model="${esc(t.model)}" data-card="${i}" data-key="r:${esc(t.trial_id)}">
      <td data-v="${d.ranks[t.model] ?? ""}">${d.ranks[t.model] ?? "–"}</td>
      <td class="left model" data-v="${esc(t.model)}"><a href="#card-${i}" class="tocard" data-card="${i}">${nameHtml(t.model, 26)}</a></td><td data-v="${t.sample}">${t.sample}</td>
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
    return `<details class="trial" id="card-${i}" data-key="c:${esc(t.trial_id)}" data-model="${esc(t.model)}" data-trial="${esc(t.trial_id)}"><summary><header>
        <span class="muted">#${d.ranks[t.model] ?? "–"}</span>${badge(t.state, t.verdict)}
        <b>${nameHtml(t.model, 40)}</b><span class="muted">sample ${t.sample}</span>${flags}<span class="grow"></span>
        ${t.speedup !== null ? `<span class="chip">speedup <b>×${speed(t.speedup)}</b></span>${contendedMark(t)}` : ""}
        ${t.kernel_ms !== null && t.kernel_ms !== undefined ? `<span class="chip">kernel <b>${ms(t.kernel_ms)}</b></span>` : ""}
        ${t.roofline_share !== null ? `<span class="chip">roofline <b>${pct(t.roofline_share)}</b></span>` : ""}
        <a href="${trialHref(sweep, t.trial_id)}">transcript →</a></header></summary>
      <div class="body">${files ? `<div class="small">files: ${files}</div>` : ""}${findingsHtml(t)}${detailsHtml(t.details)}
        <div class="code-area" data-own data-key="code:${esc(t.trial_id)}:${esc(t.state)}:${tabs.length}">${code}</div></div></details>`;
  }).join("");
  const counts = [d.level !== null ? `<span class="chip">level <b>${d.level}</b></span>` : "",
    d.flops ? `<span class="chip">FLOPs <b>${Number(d.flops).toExponential(2)}</b></span>` : "",
    d.bytes_moved ? `<span class="chip">bytes <b>${Number(d.bytes_moved).toExponential(2)}</b></span>` : "",
    `<span class="chip">hardware <b>${esc(d.hardware)}</b></span>`].join("");
  setView(`<div class="pagehead"><div><h1>${esc(suite)}/${esc(task)}</h1><div class="meta">${counts}</div></div></div>${caveatHtml(d.cpu_note)}
    <section class="card"><h2>Trials <span class="muted">a model opens its card below</span></h2><div class="tablewrap long"><table class="grid sortable sticky2" id="trials"><thead><tr>
      <th data-type="num" title="The model's rank on the board">rank</th><th class="left">model</th><th data-type="num">sample</th><th class="left">verdict</th>
      <th data-type="num" title="Baseline time / kernel time">speedup</th>
      <th data-type="num" title="Median timed run of the kernel">kernel</th><th data-type="num" title="Median timed run of the baseline">baseline</th>
      <th data-type="num" title="Roofline floor time / kernel time">roofline share</th>
      <th data-type="num" class="left" title="Rejecting anti-hack findings (red) and audit flags (⚑)">hacks / flags</th><th data-type="num">tokens</th><th data-type="num">dollars</th><th class="left"></th>
    </tr></thead><tbody>${summary}</tbody></table></div></section>
    <section><h2>Kernels and evidence <span class="muted small">in rank order; click a card to open it</span>
      <button id="expand-all" class="small">open all</button> <button id="collapse-all" class="small">close all</button></h2>${cards}</section>`);
  const table = document.getElementById("trials");
  table.dataset.urlKey = "sort";
  sortable(table);
  const filled = new Set();
  const fill = (i) => {
    if (filled.has(i)) return;
    filled.add(i);
    // looked up inside the card: a refresh keeps a filled card's code area as it was drawn
    const t = trials[i], card = document.getElementById(`card-${i}`), pre = card && card.querySelector("pre.code");
    if (!pre) return;
    const show = (k) => {
      pre.innerHTML = k === "diff" ? (t.diff ? diffHtml(t.diff) : '<span class="muted">identical to the reference solution</span>')
        : codeHtml(k === "source" ? t.source : d.reference);
      pre.dataset.k = k;
    };
    const tabs = card.querySelector(".tabs");
    tabs.querySelectorAll("button").forEach((btn) => on(btn, "click", () => {
      tabs.querySelectorAll("button").forEach((b) => b.classList.toggle("on", b === btn));
      show(btn.dataset.k);
    }));
    const current = tabs.querySelector("button.on") || tabs.querySelector("button");
    if (!pre.firstChild) show(current.dataset.k);
  };
  // A card's code is rendered when it is first opened (42 diffs up front made a 30,000 px page).
  view.querySelectorAll("details.trial").forEach((card, i) => on(card, "toggle", () => {
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
    scrolledTo = true;
  };
  on(table, "click", (ev) => {
    const a = ev.target.closest("a.tocard");
    if (!a) return;
    ev.preventDefault();
    open(Number(a.dataset.card));
  });
  on(document.getElementById("expand-all"), "click", () => view.querySelectorAll("details.trial").forEach((c) => { c.open = true; }));
  on(document.getElementById("collapse-all"), "click", () => view.querySelectorAll("details.trial").forEach((c) => { c.open = false; }));
  // A refresh keeps the cards as the reader left them (and fills any open one whose code is new).
  view.querySelectorAll("details.trial[open]").forEach((card) => {
    if (!card.querySelector("pre.code span")) { const i = Number(card.id.slice(5)); filled.delete(i); fill(i); }
  });
  if (patching) return;
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
    history.replaceState(history.state, "", compareHref(sweep, suite, a, b));
  }
  const d = await api(`/api/compare/${enc(sweep)}/${enc(suite)}?a=${enc(a)}&b=${enc(b)}`);
  if (token !== renderToken) return;
  setCrumbs([{ text: "Leaderboards", href: "#/" }, { text: sweep }, { text: suite, href: boardHref(sweep, suite) }, { text: "compare" }]);
  setTitle(`${a} vs ${b} · ${suite} · ${sweep}`);
  const select = (id, v) => `<select id="${id}">${d.models.map((m) => `<option${m === v ? " selected" : ""}>${esc(m)}</option>`).join("")}</select>`;
  const fig = (label, f) => `<tr><th class="left">${label}</th><td>${f(d.a)}</td><td>${f(d.b)}</td></tr>`;
  const answer = d.p_a_above === null ? "No bootstrap (served with --bootstrap 0, or a model has no finished trial)."
    : `score difference ${speed(d.score_diff)} (95% CI ${ci(d.score_diff_ci)}); ${esc(a)} ranks above ${esc(b)} in ${(100 * d.p_a_above).toFixed(1)}% of the paired resamples`
      + (d.p_a_above >= 0.95 || d.p_a_above <= 0.05 ? " — a clear difference." : " — not clearly separated by these tasks.")
      // the board's shared rank asks more: the two score intervals must not overlap at all
      + (d.a.rank !== null && d.a.rank === d.b.rank ? ` Both share rank ${d.a.rank} on the board: their score intervals overlap.` : "");
  const cellsHtml = (cells) => cells.map((c) => `${badge(c.state, c.verdict)}${c.verdict === "passed" && c.speedup !== null ? `<span class="sp">×${speed(c.speedup)}</span>` : ""}`).join(" ") || "–";
  const rows = d.tasks.slice().sort((x, y) => natural.compare(x.task, y.task)).map((t) => {
    const ba = t.best[a], bb = t.best[b];
    const win = ba !== null && bb !== null ? (ba > bb ? "a" : bb > ba ? "b" : "") : ba !== null ? "a" : bb !== null ? "b" : "";
    return `<tr data-task="${esc(t.task)}" data-key="t:${esc(t.task)}"><th class="left task" data-v="${esc(t.task)}"><a href="${kernelHref(sweep, t.suite, t.task)}" title="${esc(t.task)}">${esc(t.task)}</a></th>
      <td class="left ${win === "a" ? "win" : ""}" data-v="${ba ?? ""}">${cellsHtml(t[a])}</td><td class="left ${win === "b" ? "win" : ""}" data-v="${bb ?? ""}">${cellsHtml(t[b])}</td>
      <td data-v="${ba !== null && bb !== null ? ba / bb : ""}">${ba !== null && bb !== null ? speed(ba / bb) : "–"}</td></tr>`;
  }).join("");
  setView(`<div class="pagehead"><div><h1>Compare</h1><div class="meta"><span class="chip">hardware <b>${esc(d.hardware)}</b></span></div></div></div>${caveatHtml(d.cpu_note)}
    <section class="card"><div class="searchbar"><label>A ${select("cmp-a", a)}</label><label>B ${select("cmp-b", b)}</label></div>
      <p id="compare-answer"><b>${answer}</b></p>
      <div class="tablewrap"><table class="grid" id="compare-figures"><thead><tr><th class="left"></th><th class="mname">${nameHtml(a, 24)}</th><th class="mname">${nameHtml(b, 24)}</th></tr></thead><tbody>
      ${fig("rank", (m) => m.rank ?? "–")}${fig("score", (m) => speed(m.score))}${fig("pass@1", (m) => num(m.pass_at_1))}
      ${fig("mean ×", (m) => speed(m.mean_speedup))}${fig("median ×", (m) => speed(m.median_speedup))}${fig("geomean ×", (m) => speed(m.geomean_speedup))}
      ${fig("solved", (m) => `${m.solved}/${m.tasks}`)}${fig("hacks", (m) => m.hacks)}${fig("dollars", (m) => money(m.dollars))}
      ${fig("faster on tasks both solved", (m) => (m.model === a ? d.a_faster : d.b_faster))}</tbody></table></div></section>
    <section class="card"><h2>Per task <span class="muted">the faster best correct kernel is highlighted; A/B is the ratio of the best speedups</span></h2>
      <div class="tablewrap long"><table class="grid sortable sticky1" id="compare-tasks"><thead><tr><th class="left task">task</th><th class="left mname" data-type="num">${nameHtml(a, 24)}</th>
      <th class="left mname" data-type="num">${nameHtml(b, 24)}</th><th data-type="num">A/B</th></tr></thead><tbody>${rows}</tbody></table></div></section>`);
  const t = document.getElementById("compare-tasks");
  t.dataset.urlKey = "sort";
  sortable(t);
  const change = () => { location.hash = compareHref(sweep, suite, document.getElementById("cmp-a").value, document.getElementById("cmp-b").value); };
  on(document.getElementById("cmp-a"), "change", change);
  on(document.getElementById("cmp-b"), "change", change);
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
      rows.push(`<tr data-task="${esc(k.task)}" data-key="${esc(k.task)}/${c.sample}"><td class="left" data-v="${esc(k.task)}"><a href="${kernelHref(sweep, k.suite, k.task)}?trial=${enc(`${k.suite}/${k.task}/${model}/${c.sample}`)}">${esc(k.task)}</a></td>
        <td data-v="${c.sample}">${c.sample}</td><td class="left" data-v="${esc(v)}">${badge(c.state, c.verdict)}</td>
        <td data-v="${c.verdict === "passed" ? c.speedup ?? "" : ""}">${c.verdict === "passed" ? "×" + speed(c.speedup) : "–"}</td>
        <td class="left">${flagMark(c.flags, c.hacks) || "–"}</td>
        <td class="left err-cell" title="${esc(c.error || "")}">${esc((c.error || "").split("\n").filter(Boolean).pop() || "")}</td>
        <td class="left">${c.state === "pending" ? "" : `<a href="${trialHref(sweep, `${k.suite}/${k.task}/${model}/${c.sample}`)}">transcript</a>`}</td></tr>`);
    }
  }
  const chips = Object.entries(mix).sort((a, b) => b[1] - a[1]).map(([v, n]) => `<span class="badge v-${esc(v)}">${esc(v.replace(/_/g, " "))} ${n}</span>`).join(" ");
  const fig = (label, v) => `<span class="chip">${label} <b>${v}</b></span>`;
  setView(`<div class="pagehead"><div><h1>${esc(model)}</h1><div class="meta">
      ${fig("rank", m.rank === null ? "–" : m.rank + (m.rank_range ? ` (range ${m.rank_range[0]}–${m.rank_range[1]}${m.rank_strict ? `, strict ${m.rank_strict}` : ""})` : ""))}${fig("score", speed(m.score))}
      ${fig("pass@1", num(m.pass_at_1))}${fig("mean ×", speed(m.mean_speedup))}${fig("median ×", speed(m.median_speedup))}
      ${fig("solved", `${m.solved}/${m.tasks}`)}${fig("hacks", m.hacks)}${fig("flagged", m.flagged)}
      ${fig("tokens", m.tokens.toLocaleString())}${fig("dollars", money(m.dollars))}${fig("harness", esc(m.harness))}${fig("hardware", esc(data.hardware))}</div></div></div>
    ${caveatHtml(data.board.hardware && typeof data.board.hardware === "object" ? data.board.hardware.cpu_caveat : data.hardware === "CPU" ? data.cpu_note : null)}
    <section class="card"><h2>Verdicts</h2><div id="verdict-mix">${chips}</div></section>
    <section class="card"><h2>Kernels</h2><div class="tablewrap long"><table class="grid sortable sticky1" id="model-kernels"><thead><tr>
      <th class="left">task</th><th data-type="num">sample</th><th class="left">verdict</th><th data-type="num">speedup</th>
      <th class="left">hacks / flags</th><th class="left">error</th><th class="left"></th></tr></thead><tbody>${rows.join("")}</tbody></table></div></section>`);
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
// A long text shows its first lines and a button for the rest (a transcript of tool outputs
// stays scannable, on a phone too).
const FOLD_LINES = 6;
function foldPre(text, head = "") {
  const lines = text.split("\n").length;
  if (lines <= FOLD_LINES + 2 && text.length <= 700) return `<pre>${head}${esc(text)}</pre>`;
  return `<div class="foldbox"><pre class="fold">${head}${esc(text)}</pre><button class="unfold" type="button">show all ${lines.toLocaleString("en-US")} lines</button></div>`;
}
function eventBody(e) {
  const p = e.payload || {};
  switch (e.type) {
    case "trial_start": {
      const s = p.spec || {};
      return `<div class="line">trial <b>${esc(p.trial_id)}</b> · model ${esc(s.model)} · harness ${esc(p.harness)} · device ${esc(p.device)}</div>`;
    }
    case "model_request": {
      const msgs = (p.messages || []).map((m) => foldPre(clip(m.content), `<b>${esc(m.role)}</b>${m.tool_call_id ? ` (${esc(m.tool_call_id)})` : ""}\n`)).join("");
      return `<div class="line">turn ${esc(p.turn)} · ${esc(p.message_count)} messages in the conversation, ${(p.messages || []).length} new</div>${msgs}`;
    }
    case "model_response": {
      const u = p.usage || {};
      const calls = (p.tool_calls || []).map((c) => esc(c.name)).join(", ");
      return `<div class="line">turn ${esc(p.turn)} · ${esc(u.input_tokens ?? 0)} in / ${esc(u.output_tokens ?? 0)} out tokens · ${p.latency_s !== undefined ? esc(Number(p.latency_s).toFixed(2)) + " s" : ""} · ${esc(p.stop_reason)}${calls ? " · calls " + calls : ""}</div>${p.text ? `${foldPre(clip(p.text))}` : ""}`;
    }
    case "tool_call":
      return `<div class="line"><b>${esc(p.name)}</b> <span class="muted">${esc(p.id)}</span></div>${foldPre(clip(argsText(p.arguments)))}`;
    case "tool_result":
      return `<div class="line"><b>${esc(p.name)}</b>${p.exit_code !== undefined ? ` · exit ${esc(p.exit_code)}` : ""} · ${speed(p.duration_s)} s</div>${foldPre(clip(p.output))}`;
    case "retry":
      return `<div class="line">attempt ${esc(p.attempt)} after <b>${esc(p.error)}</b>; waited ${speed(p.wait_s)} s</div>`;
    case "budget":
      return `<div class="line"><b>budget hit: ${esc(p.kind)}</b> used ${esc(p.used)} of ${esc(p.limit)}</div>`;
    case "error":
      return `<div class="line">${esc(p.source)}</div>${foldPre(clip(p.message))}`;
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

// The ledger's row has the tokens once the trial ends; while it runs, its events carry them.
function tokensText(s, row) {
  const inTok = Math.max(row.input_tokens || 0, s.input_tokens || 0), outTok = Math.max(row.output_tokens || 0, s.output_tokens || 0);
  return `${inTok.toLocaleString("en-US")} in / ${outTok.toLocaleString("en-US")} out`;
}
function trialMeta(s, row) {
  const c = s.counts;
  const chip = (label, n, cls = "", key = "") => `<span class="chip ${cls}"${key ? ` data-k="${key}"` : ""}>${label} <b>${n}</b></span>`;
  const state = s.ended ? "" : `<span class="chip v-running" id="running">${row.state === "running" ? "running: new events appear as they are written" : "no trial_end: the trial was cut short"}</span>`;
  return `${badge(row.state, row.verdict)}${row.speedup !== null ? chip("speedup", "×" + speed(row.speedup)) : ""}
    ${chip("events", s.total.toLocaleString(), "", "events")}${chip("turns", c.model_response || 0, "", "turns")}${chip("tool calls", c.tool_call || 0)}
    ${chip("retries", c.retry || 0, c.retry ? "v-incorrect" : "")}${chip("budget hits", c.budget || 0, c.budget ? "v-hack_detected" : "")}
    ${chip("errors", c.error || 0, c.error ? "v-hack_detected" : "")}${chip("duration", s.duration_s === null ? "–" : speed(s.duration_s) + " s", "", "duration")}
    ${chip("tokens", tokensText(s, row), "", "tokens")}${chip("dollars", money(row.dollars))}${state}`;
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
    if (el) { el.classList.add("selected"); el.scrollIntoView({ block: "center" }); scrolledTo = true; }
  }
  list.addEventListener("click", (ev) => {
    const unfold = ev.target.closest("button.unfold");
    if (unfold) {
      const box = unfold.closest(".foldbox"), opened = box.classList.toggle("open");
      unfold.textContent = opened ? "show less" : `show all ${box.querySelector("pre").textContent.split("\n").length.toLocaleString("en-US")} lines`;
      return;
    }
    const el = ev.target.closest(".i");
    if (!el) return;
    const e = el.closest(".ev");
    list.querySelectorAll(".ev.selected").forEach((x) => x.classList.remove("selected"));
    e.classList.add("selected");
    setHashQuery({ event: e.dataset.i });
  });
}

// ---------- routing and live updates ----------
// Scroll: a new page opens at its top; Back and Forward return to where the reader was. Each
// history entry gets a key (in history.state); the page's scroll position is kept under it.
history.scrollRestoration = "manual";
const scrolls = {};
let entryKey = null;
function ensureEntryKey() {
  if (!history.state || !history.state.k) history.replaceState({ k: `${Date.now()}-${Math.random().toString(36).slice(2)}` }, "", location.href);
  return history.state.k;
}
window.addEventListener("scroll", () => { if (entryKey && !routing) scrolls[entryKey] = window.scrollY; }, { passive: true });
let routing = false, scrolledTo = false;
// Back to a page whose plots are still drawing: its height grows after the first scroll, so the
// position is set again as it grows, until the reader scrolls or 3 s pass.
let holdStop = null;
function holdScroll(y) {
  if (holdStop) holdStop();
  const kinds = ["wheel", "touchstart", "keydown", "mousedown"];
  const ro = new ResizeObserver(() => { if (window.scrollY !== y) window.scrollTo(0, y); });
  const stop = () => {
    ro.disconnect();
    kinds.forEach((k) => window.removeEventListener(k, stop));
    clearTimeout(timer);
    holdStop = null;
  };
  const timer = setTimeout(stop, 3000);
  kinds.forEach((k) => window.addEventListener(k, stop, { passive: true }));
  ro.observe(view);
  holdStop = stop;
}

async function route(opts = {}) {
  const token = ++renderToken;
  const path = location.hash.replace(/^#\/?/, "").split("?")[0];
  const parts = path.split("/").map(decodeURIComponent);
  patching = !!opts.patch;
  scrolledTo = false;
  let saved = 0;
  if (!patching) {
    if (holdStop) holdStop();
    entryKey = ensureEntryKey();
    saved = scrolls[entryKey] || 0;
    routing = true;  // the old page's height must not be recorded as this entry's position
  }
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
  } finally {
    if (token === renderToken) {
      if (!patching) {
        // a page that scrolled to what its URL names (a card, an event) stays there on first visit
        if (saved || !scrolledTo) window.scrollTo(0, saved);
        if (saved) holdScroll(saved);
        routing = false;
        scrolls[entryKey] = window.scrollY;
      }
      patching = false;
    }
  }
}

const REFRESH_MS = 1500;  // a busy sweep commits often: re-render at most this often
let lastRefresh = 0, refreshTimer = null;
function refresh() {
  // A transcript page keeps its scroll position and loaded pages (it tails a running trial itself).
  if (location.hash.startsWith("#/trial/")) return;
  if (routing) {  // a page is opening: refresh it once it is shown
    if (!refreshTimer) refreshTimer = setTimeout(() => { refreshTimer = null; refresh(); }, 300);
    return;
  }
  const wait = lastRefresh + REFRESH_MS - Date.now();
  if (wait > 0) {
    if (!refreshTimer) refreshTimer = setTimeout(() => { refreshTimer = null; refresh(); }, wait);
    return;
  }
  lastRefresh = Date.now();
  // Patched in place: what is shown stays where it is; only what changed is rewritten.
  route({ patch: true });
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
