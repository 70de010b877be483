// The brain dashboard (SPEC §7.5): plain JavaScript over the HTTP API of `brain serve`, no
// build step. Every text from the store is set with textContent, never parsed as HTML.
"use strict";

const KINDS = ["architecture", "convention", "decision", "implementation", "bug", "todo", "lesson",
  "signal", "preference", "learning", "context", "session", "skill", "codemap", "note", "arc"];
const SECTION_COLORS = ["#2f6fde", "#7b4fd6", "#1e8a5a", "#c2661b", "#b3261e", "#5f6b7a", "#0f7d8c"];
// The layer the next brain document puts an item in, as the list and the details show it.
// Layer 3 is what the document leaves out; it is not the `archived` status.
const LAYERS = {
  layer1: { label: "L1", title: "layer 1: active knowledge in the next brain document" },
  layer2: { label: "L2", title: "layer 2: reference in the next brain document" },
  archived: { label: "L3", title: "layer 3: left out of the next brain document (kept, searchable)" },
};

const state = { project: "", token: "", cursor: null, layers: new Map(), selected: null, editing: false };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (name === "onclick") node.addEventListener("click", value);
    else if (value !== undefined && value !== null) node.setAttribute(name, value);
  }
  fill(node, children, true);
  return node;
}

// Sets (or appends) a node's children, skipping null and undefined: `replaceChildren` would
// print them as the text "null".
function fill(node, children, append) {
  const nodes = children.flat(Infinity).filter((child) => child !== null && child !== undefined)
    .map((child) => (child instanceof Node ? child : document.createTextNode(String(child))));
  if (append) node.append(...nodes);
  else node.replaceChildren(...nodes);
}

function badge(text, kind, title) {
  return el("span", { class: "badge " + (kind || text), title }, text);
}

function layerBadge(layer) {
  const shown = LAYERS[layer];
  return shown ? badge(shown.label, layer === "archived" ? "layer3" : layer, shown.title) : null;
}

function severityBadge(severity) {
  return badge(severity, "sev-" + severity);
}

function status(text, isError) {
  const node = document.getElementById("status");
  node.textContent = text;
  node.className = isError ? "error" : "";
}

// Runs a user or live action: a failure shows in the banner; a success replaces a shown
// error (with the action's own message, if it returns one), so no error outlives a success.
function run(action) {
  return Promise.resolve().then(action).then((message) => {
    const node = document.getElementById("status");
    if (typeof message === "string") status(message);
    else if (node.className === "error") status("");
  }).catch((err) => {
    if (err.status !== 401) return status(err.message, true);
    status("this server needs a token: type one above and press load (" + err.message + ")", true);
    document.getElementById("token").focus();
  });
}

function authHeaders() {
  return state.token ? { Authorization: "Bearer " + state.token } : {};
}

// One API call: JSON in and out, the bearer token when one is set, `{error}` bodies raised.
// Every state change says Content-Type: application/json, body or not: the server refuses
// any other (it is what keeps cross-site forms out).
async function api(path, options) {
  const init = Object.assign({}, options || {});
  init.headers = Object.assign(authHeaders(), init.headers || {});
  if (init.method && init.method !== "GET") init.headers["Content-Type"] = "application/json";
  if (init.json !== undefined) init.body = JSON.stringify(init.json);
  const response = await fetch(path, init);
  const type = response.headers.get("content-type") || "";
  const body = type.startsWith("application/json") ? await response.json() : await response.text();
  if (!response.ok) {
    const message = body && body.error ? body.error.message : response.status + " " + response.statusText;
    const err = new Error(message);
    err.status = response.status;
    throw err;
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
  fill(document.getElementById("tree"), body.tree.map(treeNode));
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
    run(() => loadItems(true));
  } }, node.name);
  return el("li", {}, label, " ", el("span", { class: "meta" }, "(" + node.itemCount + ")"), states,
    node.children.length ? el("ul", {}, node.children.map(treeNode)) : null);
}

function itemRow(item) {
  const row = el("li", { "data-id": item.id, onclick: () => run(() => showItem(item.id)) },
    el("strong", {}, item.title), " ",
    badge(item.status), layerBadge(state.layers.get(item.id)),
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
  if (fresh) fill(list, nodes);
  else fill(list, nodes, true);
  if (fresh && rows.length === 0) fill(list, [el("li", { class: "meta" }, "nothing found")]);
  state.cursor = next;
  document.getElementById("more").hidden = !next;
}

function field(label, value) {
  if (value === undefined || value === null || value === "" || (Array.isArray(value) && value.length === 0)) return [];
  return [el("dt", {}, label), el("dd", {}, Array.isArray(value) ? value.join(", ") : String(value))];
}

async function showItem(id) {
  state.selected = id;
  state.editing = false;
  for (const row of document.querySelectorAll("#items li")) row.classList.toggle("selected", row.dataset.id === id);
  const detail = document.getElementById("detail");
  let item, etag;
  try {
    ({ body: item, etag } = await api("/api/v2/items/" + encodeURIComponent(id)));
  } catch (err) {
    if (err.status !== 404) throw err;
    state.selected = null;
    fill(detail, [el("p", { class: "hint" }, "This item no longer exists.")]);
    return;
  }
  // A button that changes the item, then re-reads everything and says what it did.
  const act = (label, done, change) => el("button", { type: "button", onclick: () => run(async () => {
    await change();
    await refresh();
    await showItem(id);
    return done + " " + id;
  }) }, label);
  const path = "/api/v2/items/" + encodeURIComponent(id);
  const ifMatch = { "If-Match": etag };
  const actions = el("div", { class: "actions" },
    item.status !== "approved" && item.status !== "superseded"
      ? act("approve", "approved", () => api(path + "/approve", { method: "POST", headers: ifMatch }))
      : null,
    item.status !== "deprecated"
      ? act("deprecate", "deprecated", () => api(path + "/deprecate", { method: "POST", headers: ifMatch }))
      : null,
    act(item.pinned ? "unpin" : "pin", item.pinned ? "unpinned" : "pinned",
      () => api(path, { method: "PATCH", headers: ifMatch, json: { pinned: !item.pinned } })),
    el("button", { type: "button", onclick: () => editItem(item, etag) }, "edit"));
  fill(detail, [
    el("h3", {}, item.title), badge(item.status), layerBadge(state.layers.get(item.id)), item.pinned ? badge("pinned", "pinned") : null,
    actions,
    el("div", { class: "content" }, item.content),
    el("dl", {},
      field("id", item.id), field("kind", item.kind), field("scope", item.scope), field("schema key", item.schema_key),
      field("importance", item.importance), field("confidence", item.confidence), field("tags", item.tags),
      field("files", item.files), field("evidence", item.evidence), field("rationale", item.rationale),
      field("source", item.source), field("created", item.created_at), field("updated", item.updated_at),
      field("version", item.version), field("supersedes", item.supersedes), field("superseded by", item.superseded_by),
      field("accessed", item.access_count + " times" + (item.last_accessed_at ? ", last " + item.last_accessed_at : "")),
      field("review due", item.review_due_at), field("valid until", item.valid_until)),
  ]);
}

function editItem(item, etag) {
  state.editing = true;
  const title = el("input", { value: item.title, size: 50 });
  const content = el("textarea", {});
  content.value = item.content;
  const importance = el("input", { type: "number", min: 1, max: 5, value: item.importance });
  const confidence = el("input", { type: "number", min: 0, max: 1, step: "0.05", value: item.confidence });
  const tags = el("input", { value: item.tags.join(", "), size: 40 });
  const cancel = el("button", { type: "button", onclick: () => run(() => showItem(item.id)) }, "cancel");
  const form = el("form", {}, el("p", {}, "title ", title), content,
    el("p", {}, "importance ", importance, " confidence ", confidence), el("p", {}, "tags ", tags),
    el("button", { type: "submit" }, "save"), " ", cancel);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const draft = {
      title: title.value,
      content: content.value,
      importance: Number(importance.value),
      confidence: Number(confidence.value),
      tags: tags.value.split(",").map((tag) => tag.trim()).filter(Boolean),
    };
    run(async () => {
      await api("/api/v2/items/" + encodeURIComponent(item.id), { method: "PATCH", headers: { "If-Match": etag }, json: draft });
      await refresh();
      await showItem(item.id);
      return "saved " + item.id;
    });
  });
  fill(document.getElementById("detail"), [el("h3", {}, "Edit " + item.id), form]);
}

// What the next session would get, with its budget bar, signals from the same payload.
async function loadSession() {
  const { body } = await api("/api/v2/session-start?" + projectParams({ maxChars: 9500 }));
  if (!state.project) document.getElementById("project").value = body.project;
  document.getElementById("preview").textContent = body.text;
  renderBudget(body.budget);
  const signals = document.getElementById("signals");
  fill(signals, body.signals.length
    ? body.signals.map((signal) => el("li", {}, severityBadge(signal.severity), " ", signal.text,
        el("div", { class: "meta" }, signal.source)))
    : [el("li", { class: "meta" }, "no active signals")]);
}

// The budget bar, and a legend that names every section in full: a section of a few tokens
// is a sliver of the bar, so a label keeps its place inside only when it fits there.
function renderBudget(budget) {
  const bar = document.getElementById("budget");
  const legend = document.getElementById("budget-legend");
  const cap = Math.max(1, budget.cap);
  const parts = budget.sections.filter((section) => section.used > 0).map((section, index) => ({
    name: section.name, tokens: section.used, color: SECTION_COLORS[index % SECTION_COLORS.length],
    title: section.name + ": " + section.used + " of " + section.cap + " tokens",
  }));
  const free = cap - budget.used;
  if (free > 0) parts.push({ name: free + " free", tokens: free, free: true, title: free + " tokens free" });
  // Widths and colours through the CSSOM: the page's CSP allows no inline style attributes.
  const swatch = (part, node) => {
    if (part.free) node.classList.add("free");
    else node.style.background = part.color;
    return node;
  };
  const segments = parts.map((part) => {
    const node = swatch(part, el("span", { title: part.title }, part.name));
    node.style.width = (100 * part.tokens / cap) + "%";
    return node;
  });
  fill(bar, segments);
  bar.title = budget.used + " of " + budget.cap + " tokens";
  for (const node of segments) if (node.scrollWidth > node.clientWidth) node.textContent = "";
  fill(legend, parts.map((part) => el("li", { title: part.title },
    swatch(part, el("span", { class: "swatch" })), part.free ? part.name : part.name + " " + part.tokens)));
}

async function loadArcs() {
  const { body } = await api("/api/v2/arcs?" + projectParams({ limit: 10 }));
  const list = document.getElementById("arcs");
  fill(list, body.arcs.length
    ? body.arcs.map((arc) => el("li", {}, el("strong", {}, arc.title), " ", badge("heat " + arc.heat, arc.heat >= 7 ? "layer1" : ""),
        el("div", { class: "meta" }, arc.region + " · " + arc.status + (arc.hosts && arc.hosts.length ? " · " + arc.hosts.join(", ") : "") + " · " + arc.path)))
    : [el("li", { class: "meta" }, "no vault indexed (brain vault init, brain vault scan)")]);
}

// Brain health over time: the score of every tick (health.jsonl), as a line chart.
async function loadHealth() {
  const box = document.getElementById("health");
  let text;
  try {
    text = (await api("/api/v2/feed/health.jsonl?" + projectParams())).body;
  } catch (err) {
    fill(box, [el("p", { class: "meta" }, "no health history yet (brain tick writes it)")]);
    return;
  }
  const points = String(text).split("\n").filter(Boolean).map((line) => JSON.parse(line)).slice(-60);
  if (points.length === 0) {
    fill(box, [el("p", { class: "meta" }, "no ticks yet")]);
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
  fill(box, [svg, el("p", { class: "meta" }, "now " + last.score + "/10: " + last.reason +
    " (" + last.arcs + " arcs, " + last.signals + " signals)")]);
}

async function refresh() {
  const started = performance.now();
  const results = await Promise.allSettled([loadSession(), loadBrain(), loadArcs(), loadHealth()]);
  const failed = results.find((result) => result.status === "rejected");
  if (failed) throw failed.reason;
  await loadItems(true);
  return "loaded in " + Math.round(performance.now() - started) + " ms";
}

// A store change announced by the server: everything is re-read, the open item too (unless
// it is being edited, which would lose the user's typing).
async function onStoreChanged() {
  const message = await refresh();
  if (state.selected && !state.editing) await showItem(state.selected);
  return message;
}

// Live updates from /api/v2/events, read with fetch so that the bearer token travels in
// the Authorization header (EventSource cannot send one); reconnects after a pause.
async function listen(generation) {
  let response;
  try {
    response = await fetch("/api/v2/events?" + projectParams(), { headers: Object.assign(authHeaders(), { Accept: "text/event-stream" }) });
  } catch (err) {
    response = null;
  }
  // Refused (no token yet, or a wrong one): wait for the form to start listening again.
  if (response && (response.status === 401 || response.status === 403)) return;
  if (response && response.ok && response.body) {
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ done: true }));
      if (done || generation !== state.listening) break;
      buffer += value;
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const name = (block.match(/^event: ?(.*)$/m) || [])[1];
        if (name === "brain" || name === "lagged") run(onStoreChanged);
        else if (name === "signal") run(loadSession);
      }
    }
  }
  if (generation === state.listening) setTimeout(() => listen(generation), 3000);
}

function startListening() {
  const params = new URLSearchParams(location.search);
  if (params.get("live") === "0" || !window.TextDecoderStream) return;
  state.listening = (state.listening || 0) + 1;
  listen(state.listening);
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
    run(refresh);
    startListening();
  });
  document.getElementById("search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    run(() => loadItems(true));
  });
  document.getElementById("more").addEventListener("click", () => run(() => loadItems(false)));
  run(refresh);
  startListening();
}

document.addEventListener("DOMContentLoaded", start);
