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
// Signal severities, most urgent first. Nuclear has a label of its own, not only a colour.
const SEVERITIES = {
  nuclear: { label: "☢ nuclear", title: "nuclear: stop and read this before anything else" },
  critical: { label: "critical", title: "critical: act on this first" },
  warning: { label: "warning", title: "warning" },
  info: { label: "info", title: "information" },
  resolved: { label: "resolved", title: "resolved" },
};
const SEVERITY_ORDER = ["nuclear", "critical", "warning", "info", "resolved"];
// How long a confirmation ("approved mem_…") stays in the banner before a live refresh may
// replace it.
const CONFIRMATION_MS = 5000;

const state = {
  project: "", token: "", cursor: null, layers: new Map(), selected: null, showing: 0, editing: false,
  // The schema key of the tree node the list is narrowed to (null: none).
  schemaKey: null,
  // What the Signals panel merges: the active signals (API), the item signals, the payload's.
  activeSignals: [], itemSignals: [], signalTitles: new Map(), session: null,
  confirmedUntil: 0, listening: 0, busy: 0,
};

// Loads under way, as `aria-busy` on the panels (for screen readers, and for the test).
function busy(delta) {
  state.busy += delta;
  document.querySelector("main").setAttribute("aria-busy", state.busy > 0 ? "true" : "false");
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (name === "onclick") node.addEventListener("click", value);
    else if (value !== undefined && value !== null && value !== false) node.setAttribute(name, value);
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

function byId(id) {
  return document.getElementById(id);
}

function badge(text, kind, title) {
  return el("span", { class: "badge " + (kind || text), title }, text);
}

function layerBadge(layer) {
  const shown = LAYERS[layer];
  return shown ? badge(shown.label, layer === "archived" ? "layer3" : layer, shown.title) : null;
}

function severityBadge(severity) {
  const shown = SEVERITIES[severity] || { label: severity, title: severity };
  return badge(shown.label, "sev-" + severity, shown.title);
}

// A pin counts only on an approved item: the next session loads no other.
function pinBadge(item) {
  return item.pinned && item.status === "approved" ? badge("pinned", "pinned", "loaded first at session start") : null;
}

// One line under a panel's title that says what is (or is not) shown, and why.
function hint(text) {
  return el("li", { class: "meta empty" }, text);
}

function status(text, isError) {
  const node = byId("status");
  node.textContent = text;
  node.className = isError ? "error" : "";
}

// Runs a user or live action: a failure shows in the banner; a success replaces a shown
// error (with the action's own message, if it returns one), so no error outlives a success.
// `confirm`: the message confirms a change and is held for a few seconds; `live`: a refresh
// the server asked for, which does not replace a held confirmation (its own write causes one).
function run(action, options) {
  const { confirm, live } = options || {};
  // The action starts at once (a load marks the page busy before the caller goes on).
  return new Promise((resolve) => resolve(action())).then((message) => {
    const held = live && Date.now() < state.confirmedUntil && byId("status").className !== "error";
    if (held) return;
    if (typeof message === "string") status(message);
    else if (byId("status").className === "error") status("");
    state.confirmedUntil = confirm ? Date.now() + CONFIRMATION_MS : 0;
  }).catch((err) => {
    if (err instanceof Superseded) return;
    state.confirmedUntil = 0;
    if (err.status !== 401) return status(err.message, true);
    status("this server needs a token: type one above and press load (" + err.message + ")", true);
    byId("token").focus();
  });
}

function authHeaders() {
  return state.token ? { Authorization: "Bearer " + state.token } : {};
}

// One API call: JSON in and out, the bearer token when one is set, `{error}` bodies raised
// with the server's hint (it names what to do: the file to edit, the name to check).
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
    const error = body && body.error;
    const message = error ? error.message + (error.hint ? " — " + error.hint : "") : response.status + " " + response.statusText;
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
  const asked = state.project;
  const { body } = await api("/api/v2/brain?" + projectParams());
  if (asked !== state.project) return;
  state.layers = new Map();
  for (const id of body.layers.layer1.items) state.layers.set(id, "layer1");
  for (const id of body.layers.layer2.items) state.layers.set(id, "layer2");
  for (const id of body.layers.archived.items) state.layers.set(id, "archived");
  fill(byId("tree"), body.tree.length ? body.tree.map(treeNode) : [hint("no items in " + state.project + " yet")]);
  return body;
}

// A node lists the items it counts: those at or below its schema key (not a text search for
// its name, which finds other items and misses some of these).
function treeNode(node) {
  const states = [];
  for (const name of ["approved", "draft", "deprecated"]) {
    if (node.states[name]) states.push(badge(node.states[name] + " " + name, name));
  }
  const label = el("a", { href: "#", title: node.schemaKey, class: node.schemaKey === state.schemaKey ? "current" : null,
    onclick: (event) => {
      event.preventDefault();
      state.schemaKey = node.schemaKey;
      byId("search").value = "";
      for (const link of document.querySelectorAll("#tree a")) link.classList.toggle("current", link === event.currentTarget);
      run(() => loadItems(true));
    } }, node.name);
  return el("li", {}, label, " ", el("span", { class: "meta" }, "(" + node.itemCount + ")"), states,
    node.children.length ? el("ul", {}, node.children.map(treeNode)) : null);
}

function itemRow(item) {
  const open = () => run(() => showItem(item.id, { reveal: true }));
  const row = el("li", { "data-id": item.id, tabindex: 0, role: "button", onclick: open },
    el("strong", {}, item.title), " ",
    item.kind === "signal" && item.severity ? severityBadge(item.severity) : null,
    badge(item.status), layerBadge(state.layers.get(item.id)), pinBadge(item),
    el("div", { class: "meta" }, item.kind + " · " + item.scope + (item.score !== undefined ? " · score " + item.score : "")));
  row.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" && event.key !== " ") return;
    event.preventDefault();
    open();
  });
  if (state.selected === item.id) row.classList.add("selected");
  return row;
}

// Items: a search when there are words, else the newest items; the kind and status filters
// apply to both, the tree node's schema key to the list.
async function loadItems(fresh) {
  if (fresh) state.cursor = null;
  const words = byId("search").value.trim();
  const kind = byId("kind-filter").value;
  const chosenStatus = byId("status-filter").value;
  if (words && state.schemaKey) {
    state.schemaKey = null;
    for (const link of document.querySelectorAll("#tree a.current")) link.classList.remove("current");
  }
  const common = { kind, status: chosenStatus, limit: 30, cursor: state.cursor };
  const asked = state.project;
  let rows, next;
  if (words) {
    const { body } = await api("/api/v2/search?" + projectParams(Object.assign({ q: words }, common)));
    rows = body.results;
    next = body.nextCursor;
  } else {
    const { body } = await api("/api/v2/items?" + projectParams(Object.assign({ schemaKey: state.schemaKey }, common)));
    rows = body.items;
    next = body.nextCursor;
  }
  // Another project was asked for meanwhile: its own load draws the list.
  if (asked !== state.project) return;
  const list = byId("items");
  const shown = (fresh ? 0 : list.querySelectorAll("li[data-id]").length) + rows.length;
  const nodes = rows.map(itemRow);
  if (fresh) fill(list, nodes);
  else fill(list, nodes, true);
  state.cursor = next;
  byId("more").hidden = !next;
  // The count line says what the list is: the words, the filters, the node, and for a
  // search without a status, that it covers approved items only (the server's default).
  const filters = [kind && "kind " + kind, chosenStatus && "status " + chosenStatus].filter(Boolean);
  let line;
  if (words) {
    const among = chosenStatus ? "" : " among approved items (pick a status for others)";
    line = shown === 0
      ? "nothing found for “" + words + "”" + among
      : shown + (next ? "+" : "") + " result" + (shown === 1 ? "" : "s") + " for “" + words + "”" + among;
  } else {
    line = shown === 0 ? "no items" + (filters.length || state.schemaKey ? " match" : " in " + state.project + " yet")
      : shown + (next ? "+" : "") + " item" + (shown === 1 ? "" : "s") + ", newest first";
  }
  if (filters.length) line += " · " + filters.join(" · ");
  const clear = state.schemaKey ? el("button", { type: "button", class: "link", title: "list every item again",
    onclick: () => {
      state.schemaKey = null;
      for (const link of document.querySelectorAll("#tree a.current")) link.classList.remove("current");
      run(() => loadItems(true));
    } }, "clear") : null;
  fill(byId("items-count"), [line, state.schemaKey ? [" · under ", el("code", {}, state.schemaKey), " ", clear] : null]);
}

function field(label, value) {
  if (value === undefined || value === null || value === "" || (Array.isArray(value) && value.length === 0)) return [];
  const shown = value instanceof Node ? value : Array.isArray(value) ? value.join(", ") : String(value);
  return [el("dt", {}, label), el("dd", {}, shown)];
}

// On a narrow screen the details are below the list: bring them into view when the user
// opens an item (not when a live refresh redraws them).
function reveal(panel) {
  const box = panel.getBoundingClientRect();
  if (box.top < 0 || box.top > window.innerHeight * 0.5) panel.scrollIntoView({ block: "start" });
}

// Each call is numbered: when another item is opened (or one is being edited) while this one
// is read, this read draws nothing, so a live refresh's re-read of the item the user has
// just left cannot replace the one they opened.
async function showItem(id, options) {
  const call = ++state.showing;
  const superseded = () => call !== state.showing || state.editing;
  state.selected = id;
  state.editing = false;
  for (const row of document.querySelectorAll("#items li[data-id]")) row.classList.toggle("selected", row.dataset.id === id);
  const detail = byId("detail");
  if (options && options.reveal) reveal(byId("detail-panel"));
  let item, etag;
  try {
    ({ body: item, etag } = await api("/api/v2/items/" + encodeURIComponent(id)));
  } catch (err) {
    if (superseded()) return;
    if (err.status !== 404) throw err;
    state.selected = null;
    fill(detail, [el("p", { class: "hint" }, "This item no longer exists.")]);
    return;
  }
  if (superseded()) return;
  // A button that changes the item, then re-reads everything and says what it did.
  const act = (label, done, change) => el("button", { type: "button", onclick: () => run(async () => {
    await change();
    await refresh();
    await showItem(id);
    return done + " " + id;
  }, { confirm: true }) }, label);
  const path = "/api/v2/items/" + encodeURIComponent(id);
  const ifMatch = { "If-Match": etag };
  // A vault item is the vault file's: the server refuses every change made here.
  const vaultFile = item.source.startsWith("vault:") ? item.source.slice("vault:".length) : null;
  const actions = vaultFile
    ? el("p", { class: "readonly" }, "read-only: this item comes from the vault file ", el("code", {}, vaultFile),
        "; edit that file (the next scan updates it)")
    : el("div", { class: "actions" },
      item.status !== "approved" && item.status !== "superseded"
        ? act("approve", "approved", () => api(path + "/approve", { method: "POST", headers: ifMatch }))
        : null,
      item.status !== "deprecated"
        ? act("deprecate", "deprecated", () => api(path + "/deprecate", { method: "POST", headers: ifMatch }))
        : null,
      act(item.pinned ? "unpin" : "pin", item.pinned ? "unpinned" : "pinned",
        () => api(path, { method: "PATCH", headers: ifMatch, json: { pinned: !item.pinned } })),
      el("button", { type: "button", onclick: () => editItem(item, etag) }, "edit"));
  const pin = item.pinned ? (item.status === "approved" ? "yes" : "yes, but not loaded while " + item.status) : null;
  fill(detail, [
    el("h3", {}, item.title),
    item.kind === "signal" && item.severity ? severityBadge(item.severity) : null,
    badge(item.status), layerBadge(state.layers.get(item.id)), pinBadge(item),
    actions,
    el("div", { class: "content" }, item.content),
    el("dl", {},
      field("id", item.id), field("kind", item.kind),
      field("severity", item.severity ? severityBadge(item.severity) : null),
      field("scope", item.scope), field("schema key", item.schema_key),
      field("importance", item.importance), field("confidence", item.confidence), field("pinned", pin), field("tags", item.tags),
      field("files", item.files), field("evidence", item.evidence), field("rationale", item.rationale),
      field("source", item.source), field("created", item.created_at), field("updated", item.updated_at),
      field("version", item.version), field("supersedes", item.supersedes), field("superseded by", item.superseded_by),
      field("accessed", item.access_count + " times" + (item.last_accessed_at ? ", last " + item.last_accessed_at : "")),
      field("review due", item.review_due_at), field("valid until", item.valid_until)),
  ]);
}

function editItem(item, etag) {
  state.editing = true;
  const title = el("input", { value: item.title, class: "wide" });
  const content = el("textarea", {});
  content.value = item.content;
  const importance = el("input", { type: "number", min: 1, max: 5, value: item.importance });
  const confidence = el("input", { type: "number", min: 0, max: 1, step: "0.05", value: item.confidence });
  const tags = el("input", { value: item.tags.join(", "), class: "wide" });
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
    }, { confirm: true });
  });
  fill(byId("detail"), [el("h3", {}, "Edit " + item.id), form]);
}

// What the next session would get, with its budget bar.
async function loadSession() {
  const asked = state.project;
  const { body } = await api("/api/v2/session-start?" + projectParams({ maxChars: 9500 }));
  if (asked !== state.project) return;
  if (!state.project) byId("project").value = body.project;
  state.session = body;
  byId("preview").textContent = body.text;
  renderBudget(body.budget);
}

// The signals an agent of the project is told of: the active critical and nuclear ones
// (vault and items alike, as `/api/v2/signals` gives them) and the approved signal items of
// lower severity, unexpired. The session payload's own signals are merged in when drawn.
async function loadSignals() {
  const asked = state.project;
  const [active, items] = await Promise.all([
    api("/api/v2/signals?" + projectParams()),
    api("/api/v2/items?" + projectParams({ kind: "signal", status: "approved", limit: 100 })),
  ]);
  if (asked !== state.project) return;
  state.activeSignals = active.body.signals;
  state.signalTitles = new Map(items.body.items.map((item) => [item.id, item.title]));
  const now = Date.now();
  state.itemSignals = items.body.items
    .filter((item) => item.severity === "warning" || item.severity === "info")
    .filter((item) => !item.valid_until || Date.parse(item.valid_until) > now)
    .map((item) => ({ id: item.id, severity: item.severity, scope: item.scope, source: item.source,
      text: item.content.trim() ? item.content : item.title }));
}

// A signal as the panel reads it: an item's title before its text (the signal's text is the
// item's content), a vault marker's text alone.
function signalText(signal) {
  const title = state.signalTitles.get(signal.id);
  return title && !signal.text.includes(title) ? title + ": " + signal.text : signal.text;
}

function mergedSignals() {
  const seen = new Map();
  const payload = state.session ? state.session.signals.filter((signal) => signal.severity !== "resolved") : [];
  for (const signal of [...state.activeSignals, ...state.itemSignals, ...payload]) {
    if (!seen.has(signal.id)) seen.set(signal.id, signal);
  }
  const rank = (signal) => SEVERITY_ORDER.indexOf(signal.severity);
  return [...seen.values()].map((signal) => Object.assign({ shown: signalText(signal) }, signal))
    .sort((a, b) => rank(a) - rank(b) || a.shown.localeCompare(b.shown));
}

function renderSignals() {
  const signals = mergedSignals();
  fill(byId("signals"), signals.length
    ? signals.map((signal) => el("li", { "data-severity": signal.severity, class: "signal " + signal.severity },
        severityBadge(signal.severity), " ", signal.shown,
        el("div", { class: "meta" }, [signal.source, signal.scope].filter(Boolean).join(" · "), " ",
          signal.id.startsWith("mem_")
            ? el("button", { type: "button", class: "link", "data-open": signal.id,
                onclick: () => run(() => showItem(signal.id, { reveal: true })) }, "details")
            : null)))
    : [hint("no active signals for " + state.project + " (nor global ones)")]);
  const nuclear = signals.filter((signal) => signal.severity === "nuclear").length;
  const alert = byId("alert");
  alert.hidden = nuclear === 0;
  alert.textContent = "☢ " + nuclear + " nuclear signal" + (nuclear === 1 ? "" : "s");
  renderSessionNote(signals);
}

// The urgent signals the next session start does not carry, named under its preview: the
// dashboard shows what the agent will get, and says what it will miss.
function renderSessionNote(signals) {
  const note = byId("session-note");
  if (!state.session) return fill(note, []);
  const carried = new Set(state.session.signals.map((signal) => signal.id));
  const missing = signals.filter((signal) => (signal.severity === "nuclear" || signal.severity === "critical")
    && !carried.has(signal.id) && !state.session.text.includes(signal.text));
  fill(note, missing.length
    ? ["not in this session start: ", missing.map((signal, index) => [index ? "; " : "", severityBadge(signal.severity), " ", signal.shown])]
    : []);
}

// The budget bar, and a legend that names every section in full: a section of a few tokens
// is a sliver of the bar, so a label keeps its place inside only when it fits there (fitted
// again whenever the bar's width changes).
function renderBudget(budget) {
  const bar = byId("budget");
  const legend = byId("budget-legend");
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
    const node = swatch(part, el("span", { title: part.title, "data-label": part.name }));
    node.style.width = (100 * part.tokens / cap) + "%";
    return node;
  });
  fill(bar, segments);
  bar.title = budget.used + " of " + budget.cap + " tokens";
  fitBudgetLabels();
  fill(legend, parts.map((part) => el("li", { title: part.title },
    swatch(part, el("span", { class: "swatch" })), part.free ? part.name : part.name + " " + part.tokens)));
}

function fitBudgetLabels() {
  for (const node of byId("budget").children) {
    node.textContent = node.dataset.label;
    if (node.scrollWidth > node.clientWidth) node.textContent = "";
  }
}

// Hot arcs; an empty list says why: no vault at all, or arcs of other projects only.
async function loadArcs() {
  const asked = state.project;
  const { body } = await api("/api/v2/arcs?" + projectParams({ limit: 10 }));
  if (asked !== state.project) return;
  const others = body.inOtherProjects || 0;
  const empty = others > 0
    ? "no arcs for " + state.project + " — " + others + " in other projects"
    : "no arcs in the vault index (brain vault init, brain vault scan)";
  fill(byId("arcs"), body.arcs.length
    ? body.arcs.map((arc) => el("li", {}, el("strong", {}, arc.title), " ",
        badge("heat " + arc.heat, arc.heat >= 7 ? "hot" : "warm", arc.heat >= 7 ? "hot: heat 7 or more" : null),
        el("div", { class: "meta" }, arc.region + " · " + arc.status + (arc.hosts && arc.hosts.length ? " · " + arc.hosts.join(", ") : "") + " · " + arc.path)))
    : [hint(empty)]);
}

// What sessions used of the memory they were given, week by week (newest first): the share
// of given tokens used, and how many items.
async function loadUse() {
  const asked = state.project;
  const { body } = await api("/api/v2/use?" + projectParams({ weeks: 8 }));
  if (asked !== state.project) return;
  const weeks = body.weeks.filter((week) => week.given > 0).reverse();
  fill(byId("use"), weeks.length
    ? weeks.map((week) => el("li", {}, el("strong", {}, Math.round(100 * week.tokenShare) + "% used"), " ",
        el("span", { class: "meta" }, "week to " + week.until.slice(0, 10) + " · " + week.used + " of " + week.given +
          " given items · " + week.sessions + " session" + (week.sessions === 1 ? "" : "s"))))
    : [hint("no session's use recorded yet: brain learns it from captured sessions (hooks)")]);
}

// "2026-11-21T06:00:00Z" as "2026-11-21 06:00", or "06:00" when `day` is the same date.
function shortTime(timestamp, day) {
  const date = timestamp.slice(0, 10);
  const time = timestamp.slice(11, 16);
  return date === day ? time : (date + " " + time).trim();
}

// Brain health over time: the score of every tick (health.jsonl), as a line chart in time
// order (the file is in the order ticks finished, not the order of their clocks).
async function loadHealth() {
  const box = byId("health");
  const asked = state.project;
  let text;
  try {
    text = (await api("/api/v2/feed/health.jsonl?" + projectParams())).body;
  } catch (err) {
    if (asked !== state.project) return;
    // No tick yet, or a token without a grant on every project of the vault (the history
    // covers the whole vault): the panel says so, the other panels are not at fault.
    if (err.status !== 404 && err.status !== 403) throw err;
    fill(box, [el("p", { class: "meta" }, err.status === 404 ? "no health history yet (brain tick writes it)" : err.message)]);
    return;
  }
  const points = String(text).split("\n").filter(Boolean).map((line) => {
    try { return JSON.parse(line); } catch (err) { return null; }
  }).filter((point) => point && typeof point.timestamp === "string" && typeof point.score === "number" && !isNaN(Date.parse(point.timestamp)))
    .sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp)).slice(-60);
  if (asked !== state.project) return;
  if (points.length === 0) {
    fill(box, [el("p", { class: "meta" }, "no ticks yet")]);
    return;
  }
  const width = 320, height = 120, pad = 22;
  const first = Date.parse(points[0].timestamp), last = Date.parse(points[points.length - 1].timestamp);
  // Spaced by time; ticks at one instant (or one tick) spread evenly instead.
  const x = (point, index) => pad + (last > first
    ? (Date.parse(point.timestamp) - first) * (width - 2 * pad) / (last - first)
    : points.length === 1 ? 0 : index * (width - 2 * pad) / (points.length - 1));
  const y = (score) => height - pad - (Math.min(10, Math.max(1, score)) - 1) * (height - 2 * pad) / 9;
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", "0 0 " + width + " " + height);
  svg.setAttribute("width", "100%");
  svg.setAttribute("role", "img");
  const make = (tag, attrs, content, parent) => {
    const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
    if (content !== undefined) node.textContent = content;
    (parent || svg).append(node);
    return node;
  };
  for (const score of [1, 5, 10]) {
    make("line", { x1: pad, x2: width - pad, y1: y(score), y2: y(score), stroke: "#d9dee5" });
    make("text", { x: 2, y: y(score) + 3 }, String(score));
  }
  make("polyline", { fill: "none", stroke: "#2f6fde", "stroke-width": 2,
    points: points.map((point, index) => x(point, index) + "," + y(point.score)).join(" ") });
  for (const [index, point] of points.entries()) {
    const dot = make("circle", { cx: x(point, index), cy: y(point.score), r: 2.5, fill: "#2f6fde", "data-timestamp": point.timestamp });
    make("title", {}, shortTime(point.timestamp) + ": " + point.score + "/10, " + point.reason, dot);
  }
  const newest = points[points.length - 1];
  const firstDay = points[0].timestamp.slice(0, 10);
  make("text", { class: "axis", x: pad, y: height - 4 }, shortTime(points[0].timestamp));
  if (last > first) {
    make("text", { class: "axis", x: width - pad, y: height - 4, "text-anchor": "end" }, shortTime(newest.timestamp, firstDay));
  }
  const counts = typeof newest.arcs === "number" ? " (" + newest.arcs + " arcs, " + newest.signals + " signals)" : "";
  fill(box, [svg, el("p", { class: "meta" }, "now " + newest.score + "/10: " + newest.reason + counts +
    ", " + shortTime(newest.timestamp))]);
}

// Every panel that shows the project, and what it says when its load failed: nothing of
// a project stays on screen under an error about another one.
const PANELS = {
  tree: () => fill(byId("tree"), [hint("not loaded")]),
  session: () => {
    state.session = null;
    fill(byId("budget"), []);
    fill(byId("budget-legend"), []);
    byId("preview").textContent = "";
    fill(byId("session-note"), []);
  },
  arcs: () => fill(byId("arcs"), [hint("not loaded")]),
  use: () => fill(byId("use"), [hint("not loaded")]),
  health: () => fill(byId("health"), [el("p", { class: "meta" }, "not loaded")]),
  signals: () => {
    state.activeSignals = [];
    state.itemSignals = [];
    fill(byId("signals"), [hint("not loaded")]);
    byId("alert").hidden = true;
  },
  items: () => {
    fill(byId("items"), []);
    fill(byId("items-count"), ["not loaded"]);
    byId("more").hidden = true;
  },
  detail: () => {
    state.selected = null;
    state.editing = false;
    fill(byId("detail"), [el("p", { class: "hint" }, "Pick an item.")]);
  },
};

// A load of a project the user has since left: it says nothing and draws nothing (the load
// of the new project does).
class Superseded extends Error {}

// Every panel of the project, read again.
async function refresh() {
  busy(1);
  try {
    return await loadAll();
  } finally {
    busy(-1);
  }
}

async function loadAll() {
  const started = performance.now();
  const asked = state.project;
  const loads = { tree: loadBrain, session: loadSession, arcs: loadArcs, health: loadHealth, signals: loadSignals, use: loadUse };
  const names = Object.keys(loads);
  const results = await Promise.allSettled(names.map((name) => loads[name]()));
  if (asked !== state.project) throw new Superseded();
  const failed = names.filter((name, index) => results[index].status === "rejected");
  // The brain document is the project itself: when it fails, every panel goes.
  const cleared = failed.includes("tree") ? Object.keys(PANELS) : failed;
  for (const name of cleared) PANELS[name]();
  if (!cleared.includes("signals")) renderSignals();
  if (failed.length) throw results[names.indexOf(failed[0])].reason;
  try {
    await loadItems(true);
  } catch (err) {
    if (asked !== state.project) throw new Superseded();
    PANELS.items();
    throw err;
  }
  if (asked !== state.project) throw new Superseded();
  return "loaded in " + Math.round(performance.now() - started) + " ms";
}

// A store change announced by the server: everything is re-read, the open item too (unless
// it is being edited, which would lose the user's typing).
async function onStoreChanged() {
  const message = await refresh();
  if (state.selected && !state.editing) await showItem(state.selected);
  return message;
}

async function onSignal() {
  await Promise.all([loadSession(), loadSignals()]);
  renderSignals();
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
        if (name === "brain" || name === "lagged") run(onStoreChanged, { live: true });
        else if (name === "signal") run(onSignal, { live: true });
      }
    }
  }
  if (generation === state.listening) setTimeout(() => listen(generation), 3000);
}

function startListening() {
  const params = new URLSearchParams(location.search);
  if (params.get("live") === "0" || !window.TextDecoderStream) return;
  state.listening += 1;
  listen(state.listening);
}

function start() {
  const kinds = byId("kind-filter");
  for (const kind of KINDS) kinds.append(el("option", {}, kind));
  const params = new URLSearchParams(location.search);
  state.project = params.get("project") || "";
  state.token = sessionStorage.getItem("brain-token") || "";
  byId("project").value = state.project;
  byId("token").value = state.token;
  byId("project-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const project = byId("project").value.trim();
    if (project !== state.project) {
      state.schemaKey = null;
      PANELS.detail();
    }
    state.project = project;
    state.token = byId("token").value.trim();
    sessionStorage.setItem("brain-token", state.token);
    history.replaceState(null, "", state.project ? "?project=" + encodeURIComponent(state.project) : "/");
    run(refresh);
    startListening();
  });
  byId("search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    run(() => loadItems(true));
  });
  byId("more").addEventListener("click", () => run(() => loadItems(false)));
  byId("alert").addEventListener("click", () => byId("signals-panel").scrollIntoView({ block: "start" }));
  // The bar's labels fit its width: fitted again when the window (and so the bar) changes.
  if (window.ResizeObserver) new ResizeObserver(fitBudgetLabels).observe(byId("budget"));
  else window.addEventListener("resize", fitBudgetLabels);
  run(refresh);
  startListening();
}

document.addEventListener("DOMContentLoaded", start);
