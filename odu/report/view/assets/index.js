/* ODU-Bench viewer, index page: headline with CIs, then every scene in one table with a filter
 * per column, sort by any column or by the difference of a score between two systems, and a
 * text search over transcripts and intents. Rows are built once; filtering re-orders them. */
"use strict";

ODU.page(function (data, systems) {
  const { el, pct, heat } = ODU;
  const axes = Object.keys(data.axes).length ? Object.keys(data.axes)
    : [...new Set(data.scenes.flatMap((s) => Object.keys(s.axes)))].sort();
  const METRICS = ["avg", "m1", "m2", "m3", "m4", "m5", "ftr"];
  const METRIC_NAMES = { avg: "Avg", m1: "M1", m2: "M2", m3: "M3", m4: "M4", m5: "M5", ftr: "FTR" };

  // --- header: dataset, problems, headline --------------------------------------------------------

  document.getElementById("dataset").textContent =
    `${data.scenes.length} scenes · ${systems.length} system(s) · dataset: ${data.dataset.source}` +
    (data.dataset.media ? "" : " (annotations only: no media)");
  const problems = ODU.problems(data.problems);
  if (problems) document.getElementById("problems").append(problems);

  function headline() {
    const modalities = Object.keys(data.headline);
    const entry = (modality, name) => data.headline[modality].find((e) => e.system === name);
    const groups = el("tr", {}, el("th", {}), modalities.map((m) => {
      const sizes = [...new Set(data.headline[m].map((e) => `${e.n_scenes} scenes (${e.n_positive}+ / ${e.n_negative}−)`))];
      return el("th", { colSpan: METRICS.length, className: "group" }, `${m} · ${sizes.join(" | ")}`);
    }));
    const names = el("tr", {}, el("th", {}, "system"),
      modalities.map((m) => METRICS.map((k, i) => el("th", { className: "num" + (i ? "" : " first") }, METRIC_NAMES[k]))));
    const rows = systems.map((system) => el("tr", {},
      el("th", { className: "system", title: judgeText(system.name) },
        system.name, system.approximate ? el("sup", { title: "approximate judge" }, " †") : null),
      modalities.map((m) => METRICS.map((k, i) => {
        const e = entry(m, system.name);
        const v = e ? e.metrics[k] : { value: null, ci: null };
        const small = e && e.n_scenes < data.bootstrap.small_sample_scenes;
        const ci = v.ci && v.ci[0] != null ? `${pct(v.ci[0])}–${pct(v.ci[1])}${small ? " *" : ""}` : "";
        const title = !e ? "no scenes" : `${e.n_scenes} scenes` + (small ? ": a small sample, its interval says little" : "");
        return el("td", { className: "num" + (i ? "" : " first") + (small ? " small" : ""), title },
          el("span", { className: "value" }, pct(v.value)), el("span", { className: "ci" }, ci));
      }))));
    const tables = el("table", { className: "headline" }, el("thead", {}, groups, names), el("tbody", {}, rows));
    const notes = el("aside", { className: "headline-notes" },
      el("p", {}, `% with 95% intervals from ${data.bootstrap.resamples} scene-bootstrap resamples (seed ${data.bootstrap.seed}, App E.1).`,
        systems.some((s) => s.approximate) ? " † approximate judge: M2 and Avg are not comparable with the paper's Table 3." : "",
        modalities.some((m) => data.headline[m].some((e) => e.n_scenes < data.bootstrap.small_sample_scenes))
          ? ` * fewer than ${data.bootstrap.small_sample_scenes} scenes: a small sample, whose intervals say little.` : ""),
      el("p", {}, "Judges: ", systems.map((s, i) => [i ? "; " : "", el("b", {}, s.name), " ", judgeText(s.name)])),
      data.notes.length ? el("details", { className: "notes", open: true },
        el("summary", {}, `Comparability caveats (${data.notes.length})`),
        el("ul", {}, data.notes.map((n) => el("li", {}, n)))) : null);
    document.getElementById("headline").append(el("h2", {}, "Headline (Table 3 layout)"),
      el("div", { className: "headline-body" }, tables, notes));
  }

  function judgeText(name) {
    const judge = (systems.find((s) => s.name === name) || {}).judge || {};
    return [judge.name, judge.model].filter(Boolean).join(" · ") || "judge unknown";
  }

  // --- columns --------------------------------------------------------------------------------------

  const yesNo = (v) => (v == null ? "" : v ? "yes" : "no");
  const options = (values) => [...new Set(values)].filter((v) => v !== "" && v != null).sort();

  /** Column: key, label, group, value(scene) for sort/filter, cell(scene) -> td, filter kind. */
  const columns = [
    { key: "id", label: "scene", group: "scene", filter: "text", value: (s) => s.id,
      cell: (s) => el("td", { className: "id" }, el("a", { href: ODU.sceneHref(s.id), title: s.title || null }, s.id),
        s.in_dataset ? null : el("span", { className: "flag bad", title: "not in the dataset" }, " missing")) },
    { key: "modality", label: "mod.", group: "scene", filter: "select", value: (s) => ODU.MODALITY[s.modality] || s.modality },
    { key: "language", label: "lang", group: "scene", filter: "select", value: (s) => s.language },
    { key: "source", label: "source", group: "scene", filter: "select", value: (s) => ODU.SOURCE[s.source] || s.source },
    { key: "label", label: "label", group: "scene", filter: "select", value: (s) => s.label },
    { key: "reason", label: "reason", group: "scene", filter: "select", value: (s) => s.reason,
      title: "negative reason R1-R5 (App B.3)" },
    ...axes.map((axis) => ({
      key: axis, label: axis.replace("axis", "ax"), group: "scene", filter: "select", value: (s) => s.axes[axis] || "",
      title: Object.entries(data.axes[axis] || {}).map(([c, n]) => `${c} ${n}`).join("\n") || axis,
      cell: (s) => el("td", { title: (data.axes[axis] || {})[s.axes[axis]] || null }, s.axes[axis] || ""),
    })),
  ];
  systems.forEach((system, i) => {
    const get = (s) => s.systems[i];
    columns.push({ key: `pred${i}`, label: "pred", group: i, filter: "select", title: "predicted has_demand",
      value: (s) => (get(s) ? yesNo(get(s).predicted) : "absent") });
    for (const score of ODU.SCORES) {
      columns.push({ key: `${score}_${i}`, label: score, group: i, filter: "score", numeric: true,
        title: ODU.SCORE_NAMES[score], value: (s) => (get(s) ? get(s)[score] : null),
        cell: (s) => { const v = get(s) && get(s)[score];
          return el("td", { className: "num", style: { background: heat(v) } }, pct(v, 0)); } });
    }
    columns.push({ key: `flags${i}`, label: "flags", group: i, filter: "flags",
      value: (s) => (get(s) ? get(s).flags : null),
      cell: (s) => el("td", { className: "flags" }, get(s) ? get(s).flags.map((f) => el("span", { className: "flag" }, f))
        : el("span", { className: "muted" }, "not scored")) });
  });
  const deltaColumn = { key: "delta", label: "Δ", group: "scene", filter: "score", numeric: true,
    title: "score of system A minus system B", value: () => null,
    cell: (s) => { const v = deltaColumn.value(s);
      return el("td", { className: "num delta", style: { background: v == null ? null : heat(0.5 + v / 2) } },
        v == null ? "–" : (v > 0 ? "+" : "") + (100 * v).toFixed(0)); } };

  // --- state: filters, search, sort, delta (kept for the session) -----------------------------------

  const stateKey = "odu.indexState:" + data.built + ":" + systems.map((s) => s.name).join("|");
  const state = { search: "", filters: {}, sort: null, desc: false, delta: null };
  try { Object.assign(state, JSON.parse(sessionStorage.getItem(stateKey) || "{}")); } catch (e) { /* none */ }
  if (state.delta && !(systems[state.delta.a] && systems[state.delta.b])) state.delta = null;
  const saveState = () => { try { sessionStorage.setItem(stateKey, JSON.stringify(state)); } catch (e) { /* */ } };

  /** Score filter: "<50", ">=80", "=0", "50" (percent), "none" (undefined), "any" / empty. */
  function scoreTest(text) {
    const t = text.trim().toLowerCase();
    if (!t || t === "any") return () => true;
    if (t === "none" || t === "-") return (v) => v == null;
    const m = t.match(/^(<=|>=|<|>|=)?\s*(-?[\d.]+)$/);
    if (!m) return () => true;
    const x = Number(m[2]) / 100;
    const op = m[1] || "=";
    const eps = 0.005;
    return (v) => v != null && ({ "<": v < x - 1e-9, "<=": v <= x + eps, ">": v > x + 1e-9, ">=": v >= x - eps,
      "=": Math.abs(v - x) < eps })[op];
  }

  /** One test per active filter and the search terms, compiled once per change. */
  function predicate(cols) {
    const tests = [];
    for (const col of cols) {
      const f = state.filters[col.key];
      if (!f) continue;
      if (col.filter === "text") {
        const t = f.toLowerCase();
        tests.push((s) => String(col.value(s)).toLowerCase().includes(t));
      } else if (col.filter === "select") {
        tests.push((s) => String(col.value(s)) === f);
      } else if (col.filter === "score") {
        const test = scoreTest(f);
        tests.push((s) => test(col.value(s)));
      } else if (col.filter === "flags") {
        tests.push((s) => { const v = col.value(s);
          return v != null && (f === "none" ? !v.length : f === "any" ? v.length > 0 : v.includes(f)); });
      }
    }
    const terms = state.search.toLowerCase().split(/\s+/).filter(Boolean);
    if (terms.length) {
      tests.push((s) => { const hay = `${s.id.toLowerCase()}\n${(s.title || "").toLowerCase()}\n${s.text}`;
        return terms.every((t) => hay.includes(t)); });
    }
    return (scene) => tests.every((test) => test(scene));
  }

  function activeColumns() {
    const cols = columns.slice();
    if (state.delta) {
      const { metric, a, b } = state.delta;
      deltaColumn.label = `Δ ${metric}`;
      deltaColumn.title = `${metric} of ${systems[a].name} minus ${systems[b].name}`;
      deltaColumn.value = (s) => { const x = s.systems[a], y = s.systems[b];
        return x && y && x[metric] != null && y[metric] != null ? x[metric] - y[metric] : null; };
      cols.splice(columns.findIndex((c) => c.group !== "scene"), 0, deltaColumn);
    }
    return cols;
  }

  function compare(col) {
    return (p, q) => {
      const x = col.value(p), y = col.value(q);
      if (x == null || (Array.isArray(x) && !x.length)) return y == null || (Array.isArray(y) && !y.length) ? 0 : 1;
      if (y == null || (Array.isArray(y) && !y.length)) return -1;
      const c = Array.isArray(x) ? y.length - x.length : col.numeric ? x - y : String(x).localeCompare(String(y));
      return state.desc ? -c : c;
    };
  }

  // --- table ------------------------------------------------------------------------------------------

  const table = document.getElementById("scenes");
  const tbody = el("tbody");
  const count = el("span", { className: "count" });

  function filterCell(col) {
    const value = state.filters[col.key] || "";
    const set = (v) => { if (v) state.filters[col.key] = v; else delete state.filters[col.key]; apply(); };
    if (col.filter === "text" || col.filter === "score") {
      return el("input", { type: "search", value, placeholder: col.filter === "score" ? "<50" : "filter", title: col.filter === "score" ? "percent: <50, >=80, =0, none (undefined)" : null,
        "aria-label": `filter ${col.label}`, size: col.filter === "score" ? 3 : 10, className: col.filter === "score" ? "score-filter" : null,
        oninput: (e) => set(e.target.value.trim()) });
    }
    const values = col.filter === "flags" ? ["any", "none", ...ODU.FLAGS] : options(data.scenes.map(col.value));
    const select = el("select", { "aria-label": `filter ${col.label}`, onchange: (e) => set(e.target.value) },
      el("option", { value: "" }, "all"), values.map((v) => el("option", { value: v }, v)));
    select.value = value;
    return select;
  }

  function renderHead() {
    const cols = activeColumns();
    const groups = el("tr", { className: "groups" });
    let last = null;
    for (const col of cols) {
      if (col.group === last) { groups.lastChild.colSpan += 1; continue; }
      last = col.group;
      const name = col.group === "scene" ? "scene" : systems[col.group].name;
      groups.append(el("th", { colSpan: 1, className: col.group === "scene" ? "" : `sys sys${col.group % 4}` }, name));
    }
    const labels = el("tr", {}, cols.map((col) => el("th", {
      className: "sortable" + (state.sort === col.key ? (state.desc ? " desc" : " asc") : ""),
      title: (col.title ? col.title + "\n" : "") + "click to sort", dataset: { key: col.key },
      onclick: () => { state.desc = state.sort === col.key ? !state.desc : col.numeric; state.sort = col.key; apply(); renderHead(); },
    }, col.label)));
    const filters = el("tr", { className: "filters" }, cols.map((col) => el("th", {}, filterCell(col))));
    table.replaceChildren(el("thead", {}, groups, labels, filters), tbody);
  }

  const rows = new Map();
  function row(scene) {
    if (!rows.has(scene.id)) {
      rows.set(scene.id, el("tr", { dataset: { id: scene.id } }, columns.map((col) =>
        col.cell ? col.cell(scene) : el("td", {}, col.value(scene)))));
    }
    return rows.get(scene.id);
  }

  function apply() {
    const cols = activeColumns();
    let shown = data.scenes.filter(predicate(cols));
    const sortCol = cols.find((c) => c.key === state.sort);
    if (sortCol) shown = shown.slice().sort(compare(sortCol));
    tbody.replaceChildren(...shown.map((scene) => {
      const tr = row(scene);
      const cell = tr.querySelector("td.delta");
      if (cell) cell.remove();
      if (state.delta) tr.insertBefore(deltaColumn.cell(scene), tr.children[columns.findIndex((c) => c.group !== "scene")]);
      return tr;
    }));
    count.textContent = `showing ${shown.length} of ${data.scenes.length} scenes`;
    ODU.saveOrder(shown.map((s) => s.id));
    saveState();
  }

  // --- controls -------------------------------------------------------------------------------------

  function controls() {
    const search = el("input", { type: "search", id: "search", value: state.search, size: 36,
      placeholder: "search transcripts and intents (reference and predicted)", "aria-label": "search",
      oninput: (e) => { state.search = e.target.value; apply(); } });
    const pick = (id, label, values, selected) => {
      const s = el("select", { id, "aria-label": label }, values.map(([v, t]) => el("option", { value: v }, t)));
      s.value = selected;
      return s;
    };
    const d = state.delta || { metric: "s2", a: 0, b: Math.min(1, systems.length - 1) };
    const names = systems.map((s, i) => [String(i), s.name]);
    const metric = pick("delta-metric", "difference metric", ODU.SCORES.map((m) => [m, m]), d.metric);
    const a = pick("delta-a", "system A", names, String(d.a));
    const b = pick("delta-b", "system B", names, String(d.b));
    const show = el("button", { type: "button", id: "delta-sort", onclick: () => {
      state.delta = { metric: metric.value, a: Number(a.value), b: Number(b.value) };
      state.sort = "delta"; state.desc = true; renderHead(); apply();
    } }, "sort by difference");
    const clear = el("button", { type: "button", className: "clear", onclick: () => {
      Object.assign(state, { search: "", filters: {}, sort: null, desc: false, delta: null });
      search.value = ""; renderHead(); apply();
    } }, "clear");
    document.getElementById("controls").append(search, " ",
      systems.length > 1 ? el("span", { className: "delta-controls" }, metric, " of ", a, " − ", b, " ", show) : null,
      " ", clear, " ", count);
    document.addEventListener("keydown", (e) => {
      if (e.key === "/" && !ODU.typing(e)) { e.preventDefault(); search.focus(); }
    });
  }

  headline();
  controls();
  renderHead();
  apply();
  performance.mark("odu-index-ready"); // read by benchmarks/bench_view.py
});
