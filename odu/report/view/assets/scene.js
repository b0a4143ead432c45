/* ODU-Bench viewer, scene page (scene.html#<scene_id>): the clips in turn order with players and
 * the assistant replies between them; a timeline of the final clip with the reference segments
 * and each system's predicted segments (IoU, matches drawn); per reference segment the M4 edits,
 * predicted intent and context, M5 fields and the key-point verdicts; parse issues and raw
 * outputs. Up to four systems side by side. The scene's data file is loaded on demand. */
"use strict";

ODU.page(function (data, systems) {
  const { el, add, pct } = ODU;
  const byId = new Map(data.scenes.map((s) => [s.id, s]));
  const main = document.getElementById("scene");
  const MAX_COLUMNS = 4;
  const TRACK_H = 24, LANE_PAD = 5;
  const pickerKey = "odu.systems:" + data.built;
  let media = null; // the final clip's player
  let current = null;

  // --- which systems, which scene -----------------------------------------------------------------

  let shown = (() => {
    try {
      const saved = JSON.parse(sessionStorage.getItem(pickerKey) || "null");
      if (Array.isArray(saved) && saved.length && saved.every((i) => systems[i])) return saved.slice(0, MAX_COLUMNS);
    } catch (e) { /* storage unavailable */ }
    return systems.slice(0, MAX_COLUMNS).map((_, i) => i);
  })();

  function picker() {
    const boxes = systems.map((s, i) => el("label", { className: `pick sys${i % 4}` },
      el("input", { type: "checkbox", value: i, checked: shown.includes(i), onchange: (e) => {
        const next = systems.map((_, j) => j).filter((j) => (j === i ? e.target.checked : shown.includes(j)));
        if (!next.length || next.length > MAX_COLUMNS) { e.target.checked = !e.target.checked; return; }
        shown = next;
        try { sessionStorage.setItem(pickerKey, JSON.stringify(shown)); } catch (err) { /* ignore */ }
        render(current);
      } }), " ", s.name));
    document.getElementById("system-picker").replaceChildren(
      ...(systems.length > 1 ? [el("span", { className: "muted" }, `columns (≤${MAX_COLUMNS}): `), ...boxes] : []));
  }

  const currentId = () => decodeURIComponent(location.hash.slice(1)) || (data.scenes[0] || {}).id;

  function go(step) {
    const order = ODU.order();
    const ids = order.includes(current.id) ? order : data.scenes.map((s) => s.id);
    const next = ids[ids.indexOf(current.id) + step];
    if (next) location.hash = encodeURIComponent(next);
  }

  async function show() {
    const id = currentId();
    const entry = byId.get(id);
    if (!entry) {
      main.replaceChildren(ODU.problems([`scene ${id} is not in this site`], "Unknown scene"));
      return;
    }
    if (!ODU.scenes[id]) await ODU.loadScript(`data/scenes/${entry.chunk}.js`);
    render(ODU.scenes[id]);
  }

  // --- small pieces -----------------------------------------------------------------------------------

  const chip = (text, className, title) => el("span", { className: "chip " + (className || ""), title }, text);
  const sysHead = (k) => el("div", { className: `col-head sys${k % 4}` }, systems[k].name);
  const segName = (i) => `R${i + 1}`;
  const predName = (j) => `P${j + 1}`;
  const yesNo = (v) => (v == null ? "–" : v ? "yes" : "no");

  function field(label, value, className) {
    if (value == null || value === "") return null;
    return el("div", { className: "field " + (className || "") }, el("span", { className: "label" }, label), " ", value);
  }

  function contextList(items) {
    if (!items || !items.length) return null;
    return el("ul", { className: "context" }, items.map((c) => el("li", {},
      c.type ? el("span", { className: "ctx-type" }, c.type) : null, " ", c.description,
      c.necessity ? el("span", { className: "muted" }, ` — ${c.necessity}`) : null)));
  }

  // --- scene header and conversation --------------------------------------------------------------------

  function header(scene) {
    const neg = scene.negative_reason;
    const sig = scene.negative_signal;
    return el("section", { className: "scene-head" },
      el("h2", {}, scene.title || scene.id),
      scene.summary ? el("p", { className: "summary" }, scene.summary) : null,
      el("div", { className: "chips" },
        chip(scene.modality), chip(scene.language), chip(scene.source),
        chip(scene.label, scene.label === "positive" ? "pos" : "neg"),
        neg ? chip(`${neg.code} ${neg.name}`, "neg", `negative reason: ${neg.value} (App B.3)`) : null,
        sig ? chip(`${sig.code} ${sig.name} signal`, "neg", `negative signal: ${sig.value}`) : null,
        scene.axes.filter((a) => a.code).map((a) => chip(`${a.code} ${a.name}`.trim(), "axis", a.axis))),
      Object.entries(scene.notes).map(([k, v]) => field(k, v, "note")));
  }

  /** The clips in turn order, left to right, each followed by the assistant replies to it. */
  function conversation(scene) {
    const section = el("section", { className: "conversation" }, el("h3", {}, "Conversation"));
    if (!scene.clips.length) {
      return add(section, el("p", { className: "muted" }, "No clips: the scene is not in the dataset."));
    }
    const turns = el("div", { className: "turns" });
    scene.clips.forEach((clip, i) => {
      const final = i === scene.clips.length - 1;
      let player;
      if (clip.media) {
        player = el(clip.kind, { src: clip.media, controls: true, preload: "auto", className: "player",
          dataset: { clip: clip.id } });
        if (final) media = player;
      } else {
        player = el("p", { className: clip.error ? "bad" : "muted" },
          clip.error ? `Clip ${clip.id}: ${clip.error}` : "No media in this dataset (annotations only).");
      }
      turns.append(el("div", { className: "clip" + (final ? " final" : "") },
        el("div", { className: "clip-head" }, `${i + 1}. clip ${clip.id}`,
          clip.duration != null ? ` · ${clip.duration.toFixed(2)} s` : "",
          final ? el("span", { className: "chip" }, "final · annotated") : null),
        player,
        clip.replies.map((reply) => el("div", { className: "reply" }, el("span", { className: "who" }, "assistant"), " ", reply))));
    });
    return add(section, turns);
  }

  // --- timeline of the final clip -----------------------------------------------------------------------

  /** Greedy tracks so that overlapping marks of one lane do not hide each other. */
  function assignTracks(marks) {
    const ends = [];
    for (const m of marks.slice().sort((a, b) => a.start - b.start)) {
      let t = ends.findIndex((end) => end <= m.start);
      if (t < 0) { t = ends.length; ends.push(0); }
      ends[t] = m.end;
      m.track = t;
    }
    return Math.max(1, ends.length);
  }

  function timeline(scene) {
    const section = el("section", { className: "timeline-section" }, el("h3", {}, "Timeline of the final clip"));
    const ref = scene.reference;
    const final = scene.clips[scene.clips.length - 1];
    const lanes = [];
    if (ref) {
      lanes.push({ name: `reference (${ref.language})`, className: "ref", marks: ref.segments.map((s, i) => ({
        start: s.start_ms, end: s.end_ms, label: segName(i), color: i, kind: "ref", key: `r${i}`,
        title: `${segName(i)} ${ODU.seconds(s.start_ms)}–${ODU.seconds(s.end_ms)} s\n${s.transcript}` })) });
    }
    for (const k of shown) {
      const sys = scene.systems[k];
      const lane = { name: systems[k].name, className: `sys${k % 4}`, marks: [], note: null };
      if (!sys.present) lane.note = "not scored by this system";
      else if (!sys.segments) lane.note = "no raw output in this run: segments unknown";
      else if (!sys.segments.length) lane.note = sys.predicted ? "no segments" : "predicted no demand";
      for (const [j, p] of (sys.segments || []).entries()) {
        const m = sys.matches.find((x) => x.predictions.includes(j));
        const timed = p.start_ms != null && p.end_ms != null;
        lane.marks.push({ start: timed ? p.start_ms : null, end: timed ? p.end_ms : null, kind: "pred",
          color: m ? m.reference : null, key: `s${k}p${j}`, ref: m ? `r${m.reference}` : null,
          label: predName(j) + (m ? ` → ${segName(m.reference)} · IoU ${m.iou.toFixed(2)}` : " · unmatched"),
          title: `${predName(j)} ${timed ? ODU.seconds(p.start_ms) + "–" + ODU.seconds(p.end_ms) + " s" : "(no time given)"}` +
            (m ? `\nmatched ${segName(m.reference)} by ${m.method}, IoU ${m.iou.toFixed(2)}` : "\nunmatched") + `\n${p.transcript}` });
      }
      lanes.push(lane);
    }
    const allEnds = lanes.flatMap((l) => l.marks.map((m) => m.end || 0));
    const duration = Math.max(final && final.duration ? final.duration * 1000 : 0, ...allEnds, 1);
    const x = (ms) => (100 * ms) / duration;

    const body = el("div", { className: "tl-body" });
    const overlay = el("svg", { className: "tl-links", "aria-hidden": "true" });
    const track = el("div", { className: "tl-tracks" }, overlay);
    const positions = {};
    let y = 0;
    for (const lane of lanes) {
      const timed = lane.marks.filter((m) => m.start != null);
      const tracks = assignTracks(timed);
      const untimed = lane.marks.length - timed.length;
      const height = 2 * LANE_PAD + (tracks + (untimed ? 1 : 0)) * TRACK_H;
      body.append(el("div", { className: `tl-label ${lane.className}`, style: { height: height + "px" }, title: lane.name }, lane.name));
      const laneEl = el("div", { className: `tl-lane ${lane.className}`, style: { top: y + "px", height: height + "px" } },
        lane.note ? el("span", { className: "tl-note" }, lane.note) : null);
      lane.marks.forEach((m) => {
        const t = m.start != null ? m.track : tracks;
        const left = m.start != null ? x(m.start) : 0;
        const width = m.start != null ? Math.max(x(m.end) - x(m.start), 0.4) : 100;
        const top = LANE_PAD + t * TRACK_H;
        const mark = el("div", {
          className: `tl-mark ${m.kind}` + (m.color == null ? " unmatched" : ` c${m.color % 8}`) + (m.start == null ? " untimed" : ""),
          style: { left: left + "%", width: width + "%", top: top + "px", height: TRACK_H - 4 + "px" },
          title: m.title, dataset: { key: m.key },
          onclick: () => { if (media && m.start != null) { media.currentTime = m.start / 1000; media.play().catch(() => {}); } },
        }, m.start != null ? m.label : `${m.label} (no time)`);
        laneEl.append(mark);
        positions[m.key] = { x: left + width / 2, top: y + top, bottom: y + top + TRACK_H - 4, ref: m.ref };
      });
      track.append(laneEl);
      y += height;
    }
    overlay.setAttribute("height", y);
    for (const p of Object.values(positions)) {
      const r = p.ref && positions[p.ref];
      if (r) overlay.append(el("line", { x1: r.x + "%", y1: r.bottom, x2: p.x + "%", y2: p.top, className: "tl-link" }));
    }
    const playhead = el("div", { className: "tl-playhead", style: { height: y + "px" } });
    track.append(playhead);
    track.style.height = y + "px";
    const step = duration <= 15000 ? 1000 : duration <= 60000 ? 5000 : 10000;
    const ticks = [];
    for (let t = 0; t <= duration; t += step) {
      ticks.push(el("span", { className: "tick", style: { left: x(t) + "%" } }, `${t / 1000}s`));
      track.prepend(el("div", { className: "tl-grid", style: { left: x(t) + "%", height: y + "px" } }));
    }
    body.append(track, el("div", {}), el("div", { className: "tl-axis" }, ticks));
    section.append(body);
    if (media) {
      const move = () => { playhead.style.left = x(media.currentTime * 1000) + "%"; };
      const loop = () => { move(); if (!media.paused) requestAnimationFrame(loop); };
      media.addEventListener("timeupdate", move);
      media.addEventListener("play", loop);
    } else {
      playhead.hidden = true;
    }
    return section;
  }

  // --- per reference segment ----------------------------------------------------------------------------

  function editsView(group) {
    const sep = group.unit === "char" ? "" : " ";
    const line = el("p", { className: "edits" });
    group.ops.forEach(([tag, ref, hyp], n) => {
      if (n) line.append(sep);
      if (tag === "equal") line.append(el("span", {}, ref));
      if (tag === "delete" || tag === "replace") line.append(el("del", { title: tag === "delete" ? "deleted (missing in prediction)" : "substituted: reference" }, ref));
      if (tag === "insert" || tag === "replace") line.append(el("ins", { title: tag === "insert" ? "inserted (extra in prediction)" : "substituted: prediction" }, hyp));
    });
    const units = group.unit === "char" ? "characters" : "words";
    return el("div", { className: "transcript" }, line,
      el("div", { className: "muted small" }, `${group.edits} edit(s) / ${group.length} reference ${units}` +
        (group.references.length > 1 ? ` · scored together with ${group.references.map(segName).join(", ")}` : "")));
  }

  function systemCell(scene, k, i) {
    const sys = scene.systems[k];
    const cell = el("div", { className: "col" }, sysHead(k));
    if (!sys.present) return add(cell, el("p", { className: "muted" }, "not scored by this system"));
    const mi = sys.matches.findIndex((m) => m.reference === i);
    const m = sys.matches[mi];
    if (!m || !m.predictions.length) {
      add(cell, el("p", { className: "bad" }, "unmatched: no predicted segment"));
    } else {
      add(cell, el("p", { className: "match" }, `${m.predictions.map(predName).join(" + ")} · ${m.method} match · IoU ${m.iou.toFixed(2)}` +
        ` · similarity ${m.similarity.toFixed(2)}`));
    }
    const group = sys.transcripts && sys.transcripts.find((g) => g.references.includes(i));
    if (group) add(cell, field("transcript", editsView(group)));
    else if (sys.note) add(cell, el("p", { className: "muted" }, sys.note));
    if (m && sys.segments) {
      for (const j of m.predictions) {
        const p = sys.segments[j];
        add(cell, field(`${predName(j)} intent`, p.intent || el("span", { className: "muted" }, "(none)")), contextList(p.context));
      }
    }
    if (sys.candidates[String(i)]) add(cell, field("judged text", sys.candidates[String(i)], "small"));
    const profile = sys.profile && sys.profile[mi];
    if (profile) {
      const ref = scene.reference.segments[i].profile;
      add(cell, el("div", { className: "profile" }, el("span", { className: "label" }, "profile (M5)"),
        Object.entries(profile).map(([f, v]) => el("span", { className: "chip " + (v.ok ? "good" : "bad"),
          title: `reference: ${ref[f]}` }, `${f.replace("user_", "")}: ${v.predicted == null ? "–" : v.predicted} ${v.ok ? "✓" : "✗"}`))));
    }
    return cell;
  }

  function verdict(sys, i, qid) {
    if (!sys.present) return el("td", { className: "muted" }, "–");
    const v = sys.key_points[`${i}/${qid}`];
    if (!v) return el("td", { className: "muted", title: "not among this run's key points" }, "–");
    if (v.judge_error) return el("td", { className: "verdict warn", title: v.judge_error }, "judge error");
    if (v.hit) return el("td", { className: "verdict good" }, "hit");
    return el("td", { className: "verdict bad" }, v.matched ? "miss" : "miss (unmatched)");
  }

  function keyPoints(scene, seg, i) {
    if (!seg.key_points.length) return null;
    return el("table", { className: "keypoints" },
      el("thead", {}, el("tr", {}, el("th", {}, "key point"), el("th", {}, "source"), el("th", {}, "tier"),
        shown.map((k) => el("th", { className: `sys${k % 4}` }, systems[k].name)))),
      el("tbody", {}, seg.key_points.map((kp) => el("tr", {},
        el("td", {}, el("span", { className: "muted" }, kp.qid + " "), kp.point),
        el("td", { className: "muted" }, kp.source), el("td", { className: "muted" }, kp.tiers.join(" ")),
        shown.map((k) => verdict(scene.systems[k], i, kp.qid))))));
  }

  function segments(scene) {
    const ref = scene.reference;
    if (!ref) return null;
    const out = [];
    if (!ref.segments.length) {
      const neg = scene.negative_reason;
      out.push(el("section", { className: "segment" }, el("h3", {}, "No demand in this scene"),
        el("p", {}, neg ? `Negative reason ${neg.code} ${neg.name} (${neg.value}).` : "A negative scene."),
        el("p", { className: "muted" }, "Any predicted demand is a false trigger (FTR).")));
    }
    ref.segments.forEach((seg, i) => {
      out.push(el("section", { className: "segment", style: { borderLeftColor: `var(--c${i % 8})` } },
        el("h3", {}, el("span", { className: `seg-tag c${i % 8}` }, segName(i)),
          ` ${ODU.seconds(seg.start_ms)}–${ODU.seconds(seg.end_ms)} s`),
        el("div", { className: "ref-card" },
          field("transcript", seg.transcript), field("intent", seg.intent), contextList(seg.context),
          el("div", { className: "profile" }, el("span", { className: "label" }, "profile"),
            Object.entries(seg.profile).map(([f, v]) => chip(`${f.replace("user_", "")}: ${v == null ? "–" : v}`)))),
        el("div", { className: "columns", style: { gridTemplateColumns: `repeat(${shown.length}, minmax(0, 1fr))` } },
          shown.map((k) => systemCell(scene, k, i))),
        keyPoints(scene, seg, i)));
    });
    return out;
  }

  // --- outputs --------------------------------------------------------------------------------------------

  function outputCell(scene, k) {
    const sys = scene.systems[k];
    const cell = el("div", { className: "col" }, sysHead(k));
    if (!sys.present) return add(cell, el("p", { className: "muted" }, "not scored by this system"));
    const truth = scene.label === "positive";
    add(cell, 
      el("p", {}, "predicted demand: ", el("b", { className: sys.predicted === truth ? "good" : "bad" }, yesNo(sys.predicted)),
        ` (true: ${yesNo(truth)})`),
      el("div", { className: "scores" }, ODU.SCORES.map((s) => el("span", { className: "score", title: ODU.SCORE_NAMES[s],
        style: { background: ODU.heat(sys[s]) } }, `${s} ${pct(sys[s], 0)}`))),
      sys.flags.length ? el("div", {}, sys.flags.map((f) => el("span", { className: "flag" }, f))) : null,
      sys.inference_error ? field("inference error", sys.inference_error, "bad") : null,
      sys.issues.length ? el("div", { className: "issues" }, el("span", { className: "label" }, "parse issues"),
        el("ul", {}, sys.issues.map((t) => el("li", {}, t)))) : null);
    const used = new Set(sys.matches.flatMap((m) => m.predictions));
    const extra = (sys.segments || []).map((p, j) => [p, j]).filter(([, j]) => !used.has(j));
    if (extra.length) {
      add(cell, el("div", { className: "unmatched" }, el("span", { className: "label" }, "unmatched predicted segments"),
        el("ul", {}, extra.map(([p, j]) => el("li", {}, `${predName(j)} ${ODU.seconds(p.start_ms)}–${ODU.seconds(p.end_ms)} s: `,
          p.transcript || "(no transcript)", p.intent ? el("div", { className: "muted" }, p.intent) : null)))));
    }
    if (!sys.has_outputs) add(cell, el("p", { className: "muted" }, "raw output: not in this run (no predictions.jsonl)"));
    else add(cell, el("details", { className: "raw", open: sys.flags.includes("parse error") },
      el("summary", {}, "raw output"), el("pre", {}, sys.raw == null ? "(no output)" : sys.raw)));
    return cell;
  }

  // --- page -----------------------------------------------------------------------------------------------

  function render(scene) {
    current = scene;
    media = null;
    const order = ODU.order();
    const ids = order.includes(scene.id) ? order : data.scenes.map((s) => s.id);
    const pos = ids.indexOf(scene.id);
    document.title = `${scene.id} · ODU-Bench viewer`;
    document.getElementById("scene-id").textContent = scene.id;
    document.getElementById("position").textContent = `${pos + 1} / ${ids.length}`;
    document.getElementById("prev").disabled = pos <= 0;
    document.getElementById("next").disabled = pos >= ids.length - 1;
    picker();
    main.replaceChildren(...[
      header(scene),
      ODU.problems(scene.problems, "Problems with this scene"),
      conversation(scene),
      timeline(scene),
      segments(scene),
      el("section", { className: "outputs" }, el("h3", {}, "Outputs"),
        el("div", { className: "columns", style: { gridTemplateColumns: `repeat(${shown.length}, minmax(0, 1fr))` } },
          shown.map((k) => outputCell(scene, k)))),
    ].flat().filter(Boolean));
    performance.mark("odu-scene-ready"); // read by benchmarks/bench_view.py
  }

  document.getElementById("prev").addEventListener("click", () => go(-1));
  document.getElementById("next").addEventListener("click", () => go(+1));
  document.addEventListener("keydown", (e) => {
    if (ODU.typing(e) || e.ctrlKey || e.metaKey || e.altKey || !current) return;
    if (e.key === "n" || e.key === "ArrowRight") go(+1);
    else if (e.key === "p" || e.key === "ArrowLeft") go(-1);
    else if (e.key === "i") location.href = "index.html";
    else if (e.key === " " && media && !/^(AUDIO|VIDEO|BUTTON)$/.test(e.target.tagName)) {
      e.preventDefault();
      if (media.paused) media.play().catch(() => {}); else media.pause();
    }
  });
  window.addEventListener("hashchange", () => show().catch(ODU.fail));
  show().catch(ODU.fail);
});
