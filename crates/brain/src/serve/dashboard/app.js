// The brain dashboard (SPEC §7.5): plain JavaScript over the HTTP API of `brain serve`, no
// build step. Every text from the store is set with textContent, never parsed as HTML.
"use strict";

const KINDS = ["architecture", "convention", "decision", "implementation", "bug", "todo", "lesson",
  "preference", "learning", "context", "note", "signal", "codemap"];
const SECTION_COLORS = ["#2f6fde", "#7b4fd6", "#1e8a5a", "#c2661b", "#b3261e", "#5f6b7a", "#0f7d8c"];

const state = { project: "", token: "", cursor: null, layers: new Map(), selected: null };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (name === "onclick") node.addEventListener("click", value);
    else if (value !== undefined && value !== null) node.setAttribute(name, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function badge(text, kind) {
  return el("span", { class: "badge " + (kind || text) }, text);
}

function status(text, isError) {
  const node = document.getElementById("status");
  node.textContent = text;
  node.className = isError ? "error" : "";
}

// One API call: JSON in and out, the bearer token when one is set, `{error}` bodies raised.
async function api(path, options) {
  const init = Object.assign({ headers: {} }, options || {});
  if (state.token) init.headers["Authorization"] = "Bearer " + state.token;
  if (init.json !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(init.json);
  }
  const response = await fetch(path, init);
  const type = response.headers.get("content-type") || "";
  const body = type.startsWith("application/json") ? await response.json() : await response.text();
  if (!response.ok) {
    const message = body && body.error ? body.error.message : response.status + " " + response.statusText;
    throw new Error(message);
  }
  return { body, etag: response.headers.get("etag") };
}

function query(params) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") search.set(name, value);
  }
  return search.toString();
}

function projectParams(extra) {
  return query(Object.assign({ project: state.project }, extra || {}));
}

// The brain tree (schema keys) and which items the next brain document loads.
async function loadBrain() {
  const { body } = await api("/api/v2/brain?" + projectParams());
  state.layers = new Map();
  for (const id of body.layers.layer1.items) state.layers.set(id, "layer1");
  for (const id of body.layers.layer2.items) state.layers.set(id, "layer2");
  for (const id of body.layers.archived.items) state.layers.set(id, "archived");
  const tree = document.getElementById("tree");
  tree.replaceChildren(...body.tree.map(treeNode));
  return body;
}

function treeNode(node) {
  const states = [];
  for (const name of ["approved", "draft", "deprecated"]) {
    if (node.states[name]) states.push(badge(node.states[name] + " " + name, name));
  }
  const label = el("a", { href: "#", title: node.schemaKey, onclick: (event) => {
    event.preventDefault();
    document.getElementById("search").value = node.name;
    loadItems(true);
  } }, node.name);
  return el("li", {}, label, " ", el("span", { class: "meta" }, "(" + node.itemCount + ")"), states,
    node.children.length ? el("ul", {}, node.children.map(treeNode)) : null);
}

function itemRow(item) {
  const layer = state.layers.get(item.id);
  const row = el("li", { "data-id": item.id, onclick: () => showItem(item.id) },
    el("strong", {}, item.title), " ",
    badge(item.status), layer ? badge(layer === "archived" ? "archived" : layer.replace("layer", "L"), layer) : null,
    item.pinned ? badge("pinned", "pinned") : null,
    el("div", { class: "meta" }, item.kind + " · " + item.scope + (item.score !== undefined ? " · score " + item.score : "")));
  if (state.selected === item.id) row.classList.add("selected");
  return row;
}

// Items: a search when there are words, else the newest items with the chosen filters.
async function loadItems(fresh) {
  if (fresh) state.cursor = null;
  const list = document.getElementById("items");
  const words = document.getElementById("search").value.trim();
  let rows, next;
  if (words) {
    const { body } = await api("/api/v2/search?" + projectParams({ q: words, limit: 30, cursor: state.cursor }));
    rows = body.results;
    next = body.nextCursor;
  } else {
    const filters = {
      kind: document.getElementById("kind-filter").value,
      status: document.getElementById("status-filter").value,
      limit: 30,
      cursor: state.cursor,
    };
    const { body } = await api("/api/v2/items?" + projectParams(filters));
    rows = body.items;
    next = body.nextCursor;
  }
  const nodes = rows.map(itemRow);
  if (fresh) list.replaceChildren(...nodes);
  else list.append(...nodes);
  if (fresh && rows.length === 0) list.replaceChildren(el("li", { class: "meta" }, "nothing found"));
  state.cursor = next;
  document.getElementById("more").hidden = !next;
}

function field(label, value) {
  if (value === undefined || value === null || value === "" || (Array.isArray(value) && value.length === 0)) return [];
  return [el("dt", {}, label), el("dd", {}, Array.isArray(value) ? value.join(", ") : String(value))];
}

async function showItem(id) {
  state.selected = id;
  for (const row of document.querySelectorAll("#items li")) row.classList.toggle("selected", row.dataset.id === id);
  const { body: item, etag } = await api("/api/v2/items/" + encodeURIComponent(id));
  const layer = state.layers.get(item.id);
  const detail = document.getElementById("detail");
  const act = (label, run) => el("button", { type: "button", onclick: () => run().catch((err) => status(err.message, true)) }, label);
  const after = async (message) => {
    status(message);
    await refresh();
    await showItem(id);
  };
  const actions = el("div", { class: "actions" },
    item.status !== "approved" && item.status !== "superseded"
      ? act("approve", async () => { await api("/api/v2/items/" + id + "/approve", { method: "POST", headers: { "If-Match": etag } }); await after("approved " + id); })
      : null,
    item.status !== "deprecated"
      ? act("deprecate", async () => { await api("/api/v2/items/" + id + "/deprecate", { method: "POST", headers: { "If-Match": etag } }); await after("deprecated " + id); })
      : null,
    act(item.pinned ? "unpin" : "pin", async () => {
      await api("/api/v2/items/" + id, { method: "PATCH", headers: { "If-Match": etag }, json: { pinned: !item.pinned } });
      await after((item.pinned ? "unpinned " : "pinned ") + id);
    }),
    act("edit", async () => editItem(item, etag)));
  detail.replaceChildren(
    el("h3", {}, item.title), badge(item.status), layer ? badge(layer, layer) : null, item.pinned ? badge("pinned", "pinned") : null,
    actions,
    el("div", { class: "content" }, item.content),
    el("dl", {},
      field("id", item.id), field("kind", item.kind), field("scope", item.scope), field("schema key", item.schema_key),
      field("importance", item.importance), field("confidence", item.confidence), field("tags", item.tags),
      field("files", item.files), field("evidence", item.evidence), field("rationale", item.rationale),
      field("source", item.source), field("created", item.created_at), field("updated", item.updated_at),
      field("version", item.version), field("supersedes", item.supersedes), field("superseded by", item.superseded_by),
      field("accessed", item.access_count + " times" + (item.last_accessed_at ? ", last " + item.last_accessed_at : "")),
      field("review due", item.review_due_at), field("valid until", item.valid_until)));
}

function editItem(item, etag) {
  const title = el("input", { value: item.title, size: 50 });
  const content = el("textarea", {});
  content.value = item.content;
  const importance = el("input", { type: "number", min: 1, max: 5, value: item.importance });
  const confidence = el("input", { type: "number", min: 0, max: 1, step: "0.05", value: item.confidence });
  const tags = el("input", { value: item.tags.join(", "), size: 40 });
  const save = el("button", { type: "submit" }, "save");
  const form = el("form", {}, el("p", {}, "title ", title), content,
    el("p", {}, "importance ", importance, " confidence ", confidence), el("p", {}, "tags ", tags), save);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const draft = {
      title: title.value,
      content: content.value,
      importance: Number(importance.value),
      confidence: Number(confidence.value),
      tags: tags.value.split(",").map((tag) => tag.trim()).filter(Boolean),
    };
    try {
      await api("/api/v2/items/" + encodeURIComponent(item.id), { method: "PATCH", headers: { "If-Match": etag }, json: draft });
      status("saved " + item.id);
      await refresh();
      await showItem(item.id);
    } catch (err) {
      status(err.message, true);
    }
  });
  document.getElementById("detail").replaceChildren(el("h3", {}, "Edit " + item.id), form);
}

// What the next session would get, with its budget bar, signals from the same payload.
async function loadSession() {
  const { body } = await api("/api/v2/session-start?" + projectParams({ maxChars: 9500 }));
  if (!state.project) document.getElementById("project").value = body.project;
  document.getElementById("preview").textContent = body.text;
  const bar = document.getElementById("budget");
  const cap = Math.max(1, body.budget.cap);
  // Widths and colours through the CSSOM: the page's CSP allows no inline style attributes.
  const segment = (text, tokens, attrs, color) => {
    const node = el("span", attrs, text);
    node.style.width = (100 * tokens / cap) + "%";
    if (color) node.style.background = color;
    return node;
  };
  const parts = body.budget.sections.filter((section) => section.used > 0).map((section, index) =>
    segment(section.name, section.used, { title: section.name + ": " + section.used + " of " + section.cap + " tokens" },
      SECTION_COLORS[index % SECTION_COLORS.length]));
  const free = cap - body.budget.used;
  if (free > 0) parts.push(segment(free + " free", free, { class: "free" }));
  bar.replaceChildren(...parts);
  bar.title = body.budget.used + " of " + body.budget.cap + " tokens";
  const signals = document.getElementById("signals");
  signals.replaceChildren(...(body.signals.length
    ? body.signals.map((signal) => el("li", {}, badge(signal.severity, signal.severity === "critical" ? "deprecated" : ""), " ", signal.text,
        el("div", { class: "meta" }, signal.source)))
    : [el("li", { class: "meta" }, "no active signals")]));
}

async function loadArcs() {
  const { body } = await api("/api/v2/arcs?" + projectParams({ limit: 10 }));
  const list = document.getElementById("arcs");
  list.replaceChildren(...(body.arcs.length
    ? body.arcs.map((arc) => el("li", {}, el("strong", {}, arc.title), " ", badge("heat " + arc.heat, arc.heat >= 7 ? "layer1" : ""),
        el("div", { class: "meta" }, arc.region + " · " + arc.status + " · " + arc.path)))
    : [el("li", { class: "meta" }, "no vault indexed (brain vault init, brain vault scan)")]));
}

// Brain health over time: the score of every tick (health.jsonl), as a line chart.
async function loadHealth() {
  const box = document.getElementById("health");
  let text;
  try {
    text = (await api("/api/v2/feed/health.jsonl")).body;
  } catch (err) {
    box.replaceChildren(el("p", { class: "meta" }, "no health history yet (brain tick writes it)"));
    return;
  }
  const points = String(text).split("\n").filter(Boolean).map((line) => JSON.parse(line)).slice(-60);
  if (points.length === 0) {
    box.replaceChildren(el("p", { class: "meta" }, "no ticks yet"));
    return;
  }
  const width = 320, height = 120, pad = 22;
  const x = (index) => pad + (points.length === 1 ? 0 : index * (width - 2 * pad) / (points.length - 1));
  const y = (score) => height - pad - (score - 1) * (height - 2 * pad) / 9;
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", "0 0 " + width + " " + height);
  svg.setAttribute("width", "100%");
  const make = (tag, attrs, content) => {
    const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
    if (content !== undefined) node.textContent = content;
    svg.append(node);
  };
  for (const score of [1, 5, 10]) {
    make("line", { x1: pad, x2: width - pad, y1: y(score), y2: y(score), stroke: "#d9dee5" });
    make("text", { x: 2, y: y(score) + 3 }, String(score));
  }
  make("polyline", { fill: "none", stroke: "#2f6fde", "stroke-width": 2,
    points: points.map((point, index) => x(index) + "," + y(point.score)).join(" ") });
  for (const [index, point] of points.entries()) {
    make("circle", { cx: x(index), cy: y(point.score), r: 2.5, fill: "#2f6fde" });
  }
  const last = points[points.length - 1];
  make("text", { x: pad, y: height - 4 }, points[0].timestamp.slice(0, 10));
  make("text", { x: width - pad - 60, y: height - 4 }, last.timestamp.slice(0, 10));
  box.replaceChildren(svg, el("p", { class: "meta" }, "now " + last.score + "/10: " + last.reason +
    " (" + last.arcs + " arcs, " + last.signals + " signals)"));
}

async function refresh() {
  const started = performance.now();
  const results = await Promise.allSettled([loadSession(), loadBrain(), loadArcs(), loadHealth()]);
  const failed = results.find((result) => result.status === "rejected");
  if (failed) throw failed.reason;
  await loadItems(true);
  status("loaded in " + Math.round(performance.now() - started) + " ms");
}

function start() {
  const kinds = document.getElementById("kind-filter");
  for (const kind of KINDS) kinds.append(el("option", {}, kind));
  const params = new URLSearchParams(location.search);
  state.project = params.get("project") || "";
  state.token = sessionStorage.getItem("brain-token") || "";
  document.getElementById("project").value = state.project;
  document.getElementById("token").value = state.token;
  document.getElementById("project-form").addEventListener("submit", (event) => {
    event.preventDefault();
    state.project = document.getElementById("project").value.trim();
    state.token = document.getElementById("token").value.trim();
    sessionStorage.setItem("brain-token", state.token);
    history.replaceState(null, "", state.project ? "?project=" + encodeURIComponent(state.project) : "/");
    refresh().catch((err) => status(err.message, true));
  });
  document.getElementById("search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    loadItems(true).catch((err) => status(err.message, true));
  });
  document.getElementById("more").addEventListener("click", () => loadItems(false).catch((err) => status(err.message, true)));
  refresh().catch((err) => status(err.message, true));
  // Live updates where no token is needed (EventSource cannot send an Authorization header);
  // `?live=0` turns them off (a static view, e.g. for a screenshot).
  if (!state.token && window.EventSource && params.get("live") !== "0") {
    const events = new EventSource("/api/v2/events");
    events.addEventListener("brain", () => refresh().catch((err) => status(err.message, true)));
    events.addEventListener("signal", () => loadSession().catch((err) => status(err.message, true)));
  }
}

document.addEventListener("DOMContentLoaded", start);
