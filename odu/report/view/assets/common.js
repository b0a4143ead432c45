/* ODU-Bench viewer: helpers shared by index.html and scene.html (no framework, no build step).
 *
 * Data arrive as scripts (file:// pages cannot fetch): data/index.js calls ODU.receiveIndex,
 * data/scenes/<k>.js calls ODU.receiveScenes. Every text from a run or a dataset goes into the
 * page through textContent (ODU.el), never as markup.
 */
"use strict";

const ODU = (window.ODU = {
  index: null,
  scenes: {},
  receiveIndex(data) { ODU.index = data; },
  receiveScenes(scenes) { Object.assign(ODU.scenes, scenes); },
});

ODU.SCORES = ["s2", "s3", "s4", "s5"];
ODU.SCORE_NAMES = { s2: "S2 key points", s3: "S3 IoU", s4: "S4 transcript", s5: "S5 profile" };
ODU.FLAGS = ["false trigger", "missed demand", "parse error", "no output", "judge error", "inference error"];
ODU.MODALITY = { "audio-visual": "AV", "audio-only": "AO" };
ODU.SOURCE = { "generated": "gen", "human-recorded": "rec" };

/** An element with properties (className, title, href, dataset, on* handlers) and children;
 *  strings become text nodes, null/false children are skipped. */
ODU.el = function (tag, props, ...children) {
  const node = tag === "svg" || tag === "line" ? document.createElementNS("http://www.w3.org/2000/svg", tag)
                                              : document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value == null || value === false) continue;
    if (key === "className") node.setAttribute("class", value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key === "style") Object.assign(node.style, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child == null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
};

/** Append the children that are not null / false (DOM append would write "null"). */
ODU.add = function (node, ...children) {
  node.append(...children.flat(Infinity).filter((c) => c != null && c !== false));
  return node;
};

/** Load a script beside the page (works from file://); resolves once it ran. */
ODU.loadScript = function (src) {
  return new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = src;
    script.onload = () => resolve();
    script.onerror = () => reject(new Error("cannot load " + src + " (is the site complete?)"));
    document.head.append(script);
  });
};

/** A fraction as a percentage with `digits` decimals; "–" when undefined. */
ODU.pct = (v, digits = 1) => (v == null ? "–" : (100 * v).toFixed(digits));

/** Background colour of a score cell: red (0) to green (1); none when undefined. */
ODU.heat = (v) => (v == null ? null : `hsl(${Math.round(120 * v)}, 60%, ${92 - 6 * v}%)`);

ODU.seconds = (ms) => (ms == null ? "?" : (ms / 1000).toFixed(2));

ODU.sceneHref = (id) => "scene.html#" + encodeURIComponent(id);

/** The scene order last shown by the index (filters and sort), else the index order. */
ODU.order = function () {
  try {
    const saved = JSON.parse(sessionStorage.getItem("odu.order:" + ODU.index.built) || "null");
    if (Array.isArray(saved) && saved.length) return saved;
  } catch (e) { /* storage unavailable: fall back */ }
  return ODU.index.scenes.map((s) => s.id);
};

ODU.saveOrder = function (ids) {
  try { sessionStorage.setItem("odu.order:" + ODU.index.built, JSON.stringify(ids)); } catch (e) { /* ignore */ }
};

/** True when a key event comes from a text field (shortcuts stay off there). */
ODU.typing = (event) => /^(INPUT|SELECT|TEXTAREA)$/.test(event.target.tagName);

/** The problems box: every scene or clip that could not be shown. */
ODU.problems = function (problems, title) {
  if (!problems || !problems.length) return null;
  return ODU.el("section", { className: "problems", role: "alert" },
    ODU.el("h2", {}, title || `${problems.length} problem(s) while building`),
    ODU.el("ul", {}, problems.map((p) => ODU.el("li", {}, p))));
};

/** Report a failure on the page and on the console (so it is never silent). */
ODU.fail = function (error) {
  console.error(error);
  document.body.prepend(ODU.problems([String(error.message || error)], "The viewer could not load its data"));
};

/** Run a page's script with the index (data/index.js) and its systems; a missing index is shown as an error. */
ODU.page = function (start) {
  const data = ODU.index;
  if (!data) return ODU.fail(new Error("data/index.js is missing or did not run"));
  start(data, data.systems);
};
