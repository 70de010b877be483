// The dashboard in a real browser: headless chromium driven over the DevTools protocol
// through --remote-debugging-pipe (file descriptors 3 and 4, NUL-separated JSON), so that
// no npm package is needed. Run by `serve::the_dashboard_renders_the_brain_in_chromium`
// (tests/it/serve.rs), which seeds the store and the vault and starts `brain serve`.
//
//   node check.mjs   with   CHROMIUM, BRAIN_URL (http://host:port), BRAIN_PROJECT,
//                           BRAIN_TOKEN (optional: typed into the page), SCREENSHOTS (a path
//                           prefix: -1400-1.png, -420-1.png… are added), PROFILE (a
//                           throw-away user-data dir)
//
// Prints one line per check and "all dashboard checks passed"; exits 1 at the first failure.
// Each check is what a user would look at or do: read a panel, click, type, press keys,
// narrow the window.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";

const env = process.env;
const base = env.BRAIN_URL;
const token = env.BRAIN_TOKEN || "";
const project = env.BRAIN_PROJECT;
const chrome = spawn(env.CHROMIUM, [
  "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
  "--hide-scrollbars", "--remote-debugging-pipe", "--window-size=1400,1100", "--user-data-dir=" + env.PROFILE,
  "about:blank",
], { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"] });
let chromeErr = "";
chrome.stdio[2].on("data", (chunk) => { chromeErr += chunk; });

// The protocol: commands out on fd 3, answers and events in on fd 4.
let nextId = 1;
const waiting = new Map();
const listeners = [];
let inbox = "";
chrome.stdio[4].on("data", (chunk) => {
  inbox += chunk.toString("utf8");
  let end;
  while ((end = inbox.indexOf("\0")) >= 0) {
    const message = JSON.parse(inbox.slice(0, end));
    inbox = inbox.slice(end + 1);
    if (message.id && waiting.has(message.id)) {
      const { resolve, reject } = waiting.get(message.id);
      waiting.delete(message.id);
      if (message.error) reject(new Error(JSON.stringify(message.error)));
      else resolve(message.result);
    } else if (message.method) {
      for (const listener of listeners) listener(message);
    }
  }
});
function send(method, params, sessionId) {
  const id = nextId++;
  chrome.stdio[3].write(JSON.stringify({ id, method, params: params || {}, sessionId }) + "\0");
  return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
}

function fail(message) {
  console.log("FAILED: " + message);
  chrome.kill("SIGKILL");
  process.exit(1);
}
function check(ok, message) {
  if (!ok) fail(message);
  console.log("ok: " + message);
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
setTimeout(() => fail("the checks did not finish within 120 s\n" + chromeErr.slice(-2000)), 120_000).unref();

const { targetId } = await send("Target.createTarget", { url: "about:blank" });
const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });
const page = (method, params) => send(method, params, sessionId);
const responses = [];
const problems = [];
listeners.push((message) => {
  if (message.sessionId !== sessionId) return;
  if (message.method === "Network.responseReceived") {
    responses.push({ url: message.params.response.url, status: message.params.response.status });
  } else if (message.method === "Runtime.exceptionThrown") {
    problems.push("exception: " + JSON.stringify(message.params.exceptionDetails).slice(0, 500));
  } else if (message.method === "Runtime.consoleAPICalled" && message.params.type === "error") {
    problems.push("console error: " + JSON.stringify(message.params.args).slice(0, 500));
  } else if (message.method === "Log.entryAdded" && message.params.entry.level === "error") {
    problems.push("log error: " + message.params.entry.text + " " + (message.params.entry.url || ""));
  }
});
await page("Network.enable");
await page("Runtime.enable");
await page("Log.enable");
await page("Page.enable");

// Evaluates `expression` in the page (awaiting a promise) and returns its JSON value.
async function evaluate(expression) {
  const result = await page("Runtime.evaluate", { expression, returnByValue: true, awaitPromise: true });
  if (result.exceptionDetails) fail("evaluating " + expression + ": " + JSON.stringify(result.exceptionDetails).slice(0, 400));
  return result.result.value;
}
// Polls `expression` until it is true; an exception (the page not there yet) counts as false.
async function waitFor(expression, what, seconds) {
  const until = Date.now() + (seconds || 20) * 1000;
  while (Date.now() < until) {
    const result = await page("Runtime.evaluate", { expression, returnByValue: true, awaitPromise: true });
    if (!result.exceptionDetails && result.result.value) return;
    await sleep(50);
  }
  fail("timed out waiting for " + what + "; status: " + (await evaluate("(document.getElementById('status') || {}).textContent")));
}
const quote = JSON.stringify;
const text = (selector) => evaluate(`(document.querySelector(${quote(selector)}) || {}).textContent || ""`);
const statusText = () => text("#status");
// Loaded: the banner says so and no load is under way (a banner from an earlier load may
// still say "loaded in" while the next one runs).
const loaded = "document.getElementById('status').textContent.startsWith('loaded in') && document.querySelector('main').getAttribute('aria-busy') === 'false'";
const headline = (title) => `(document.querySelector('#detail h3') || {}).textContent === ${quote(title)}`;
// The rows of the item list as the user reads them.
const listRows = () => evaluate(`[...document.querySelectorAll('#items li[data-id]')].map((row) => ({
  id: row.dataset.id, title: row.querySelector('strong').textContent, meta: row.querySelector('.meta').textContent,
  badges: [...row.querySelectorAll('.badge')].map((badge) => badge.textContent) }))`);
const rowTitles = async () => (await listRows()).map((row) => row.title);
const click = (selector) => evaluate(`document.querySelector(${quote(selector)}).click(); true`);
const submitForm = (id) => evaluate(`document.getElementById(${quote(id)}).requestSubmit(); true`);
const setValue = (id, value) => evaluate(`document.getElementById(${quote(id)}).value = ${quote(value)}; true`);
const background = (selector) => evaluate(`(() => { const node = document.querySelector(${quote(selector)});
  return node ? getComputedStyle(node).backgroundColor : null; })()`);
// A key as the keyboard sends it (focus moves on Tab, Enter activates).
async function press(key, code, keyCode) {
  await page("Input.dispatchKeyEvent", { type: "keyDown", key, code, windowsVirtualKeyCode: keyCode, text: key === "Enter" ? "\r" : undefined });
  await page("Input.dispatchKeyEvent", { type: "keyUp", key, code, windowsVirtualKeyCode: keyCode });
}
// The API as another client (the page must learn of writes by itself).
async function call(method, path, body) {
  const headers = { "Content-Type": "application/json" };
  if (token) headers.Authorization = "Bearer " + token;
  const response = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (!response.ok) fail(method + " " + path + ": " + response.status + " " + (await response.text()));
  return response.json();
}
// Runs `action` and waits for the item list to be drawn again (a marker row put in the list
// is gone) with a count line that passes `counted`.
async function relist(action, counted, what) {
  await evaluate(`document.getElementById('items').append(Object.assign(document.createElement('li'), { id: 'check-mark' })); true`);
  await action();
  await waitFor(`!document.getElementById('check-mark') && (${counted})(document.getElementById('items-count').textContent)`, what);
}
// Submits the search form and waits for the list it asks for.
async function searchFor(words, kind, status) {
  await setValue("search", words);
  await setValue("kind-filter", kind || "");
  await setValue("status-filter", status || "");
  const counted = words ? `(count) => count.includes(${quote("“" + words + "”")})` : `(count) => !count.includes("“")`;
  await relist(() => submitForm("search-form"), counted, "the list for " + quote([words, kind, status]));
}
async function resize(width, height) {
  await page("Emulation.setDeviceMetricsOverride", { width, height, deviceScaleFactor: 1, mobile: false });
  await waitFor(`document.documentElement.clientWidth === ${width}`, "the window to be " + width + " px wide");
  // Two frames: the page's resize work (the budget labels) runs on the next one.
  await evaluate("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))");
}
const overflowAt = () => evaluate(`({ page: document.documentElement.scrollWidth, window: document.documentElement.clientWidth,
  wide: [...document.querySelectorAll('header, header *, main > *')].filter((node) => node.getBoundingClientRect().right >
    document.documentElement.clientWidth + 1).map((node) => node.id || node.tagName) })`);
const clippedBudget = () => evaluate(`[...document.querySelectorAll('#budget span, #budget-legend li')]
  .filter((node) => node.textContent && node.scrollWidth > node.clientWidth + 1).map((node) => node.textContent)`);
const budgetLabels = () => evaluate(`[...document.querySelectorAll('#budget span')].map((node) => node.textContent)`);
// The whole page at the window's width, in parts of at most 1000 px (a narrow page is long:
// one tall image shrinks past reading in a viewer): <prefix>-<width>-<part>.png.
async function screenshot(width) {
  const height = Math.min(await evaluate("document.documentElement.scrollHeight"), 8000);
  for (let top = 0, part = 1; top < height; top += 1000, part += 1) {
    const shot = await page("Page.captureScreenshot", { format: "png", captureBeyondViewport: true,
      clip: { x: 0, y: top, width, height: Math.min(1000, height - top), scale: 1 } });
    const path = env.SCREENSHOTS + "-" + width + "-" + part + ".png";
    writeFileSync(path, Buffer.from(shot.data, "base64"));
    console.log("screenshot: " + path);
  }
}

await page("Page.navigate", { url: base + "/?project=" + encodeURIComponent(project) });
// With tokens, the page first says it needs one (what a new user sees), then gets it.
let typedAt = 0;
if (token) {
  await waitFor("document.getElementById('status').className === 'error'", "the page to ask for a token");
  check(/needs a token/.test(await statusText()), "without a token the page asks for one: " + (await statusText()));
  typedAt = responses.length;
  await setValue("token", token);
  await submitForm("project-form");
}
await waitFor(loaded + " && document.querySelectorAll('#signals li[data-severity]').length > 0", "the page to load");
check((await text("#items")).includes("Use WAL mode for SQLite"), "items are listed");

// Layers read the same in the list and the details: L1/L2/L3, never layer1 or "archived".
const rows = await listRows();
const byTitle = (title) => rows.find((row) => row.title === title) || fail("no row titled " + title);
for (const row of rows) {
  const layer = row.badges.filter((label) => /^L[123]$/.test(label));
  check(layer.length <= 1, row.title + ": at most one layer badge (" + row.badges.join(", ") + ")");
  check(!row.badges.some((label) => label.startsWith("layer")), row.title + ": no raw layer name");
}
for (const title of ["Draft to review", "Old deprecated decision"]) {
  const row = byTitle(title);
  check(!row.badges.includes("archived"), title + " (" + row.badges.join(", ") + "): no 'archived' badge for a layer");
}
check(byTitle("Archived long ago").badges.includes("archived"), "an archived item shows its status 'archived'");
// A pin is shown where it counts: a deprecated item is never loaded, pinned or not.
check(!byTitle("Pinned, then deprecated").badges.includes("pinned"), "a deprecated item shows no 'pinned' badge: "
  + byTitle("Pinned, then deprecated").badges.join(", "));
check(byTitle("Run cargo fmt before committing").badges.includes("pinned"), "an approved pinned item shows 'pinned'");

// Signals: those written as items are signals too; nuclear differs from critical by its
// label as well as its colour, and comes first.
const signals = await evaluate(`[...document.querySelectorAll('#signals li[data-severity]')].map((entry) => ({
  severity: entry.dataset.severity, text: entry.textContent, label: entry.querySelector('.badge').textContent,
  color: getComputedStyle(entry.querySelector('.badge')).backgroundColor }))`);
const signal = (words) => signals.find((entry) => entry.text.includes(words)) || fail("no signal " + quote(words) + " in " + JSON.stringify(signals));
check(signal("Prod DB is read-only").severity === "nuclear", "a nuclear signal written as an item is in the Signals panel");
check(signal("Staging certificate expires Friday").severity === "warning", "a warning written as an item is in the Signals panel");
check(signal("Production database is read-only").severity === "nuclear", "the vault's nuclear signal is there too");
const nuclear = signal("Prod DB is read-only");
const critical = signal("Auth broker ban rate increasing");
check(critical.severity === "critical", "the vault's critical signal is there");
check(nuclear.color !== critical.color, "nuclear badges are not coloured like critical ones (" + nuclear.color + ", " + critical.color + ")");
check(/☢/.test(nuclear.label) && !/☢/.test(critical.label) && /nuclear/i.test(nuclear.label), "nuclear badges carry their own label: " + quote(nuclear.label) + " vs " + quote(critical.label));
check(signals[0].severity === "nuclear" && signals.findIndex((entry) => entry.severity === "critical") > signals.findLastIndex((entry) => entry.severity === "nuclear"),
  "nuclear signals come first, then critical: " + signals.map((entry) => entry.severity).join(", "));
check(/no active signals/.test(await text("#signals")) === false, "the panel does not say 'no active signals'");
// The next session start carries the nuclear item signal (one signal model: issue 33), and
// the panel does not call it left out.
const preview = await text("#preview");
const sessionNote = await text("#session-note");
check(preview.includes("Prod DB is read-only") && !sessionNote.includes("Prod DB is read-only"),
  "the next-session preview shows the nuclear item signal: " + quote(preview.slice(0, 300)) + " / " + quote(sessionNote));
// Its details show its severity, with the same label.
await evaluate(`[...document.querySelectorAll('#signals li[data-severity="nuclear"]')]
  .find((entry) => entry.textContent.includes('Prod DB is read-only')).querySelector('[data-open]').click(); true`);
await waitFor(headline("Prod DB is read-only"), "the nuclear signal's details");
const severityShown = await evaluate(`(() => { const term = [...document.querySelectorAll('#detail dt')].find((dt) => dt.textContent === 'severity');
  return term ? term.nextElementSibling.textContent : ''; })()`);
check(/nuclear/.test(severityShown) && /☢/.test(severityShown), "the details of a signal item show its severity: " + quote(severityShown));

// The details of an unpinned item: no stray "null", the same layer badge as its row.
const unpinned = byTitle("Webhook retries back off exponentially");
await click(`#items li[data-id="${unpinned.id}"]`);
await waitFor(headline(unpinned.title), "the details");
check(!/null/.test(await text("#detail")), "the details of an unpinned item show no 'null'");
const detailLayer = await evaluate(`[...document.querySelectorAll('#detail .badge')].map((b) => b.textContent).find((t) => /^L[123]$/.test(t))`);
const rowLayer = unpinned.badges.find((label) => /^L[123]$/.test(label));
check(detailLayer === rowLayer, "the details say " + detailLayer + " where the list says " + rowLayer);

// Keyboard: Tab from the search form's button reaches the first row; Enter opens it.
await evaluate("document.querySelector('#search-form button[type=submit]').focus(); true");
await press("Tab", "Tab", 9);
const focused = await evaluate("document.activeElement.closest('#items li[data-id]') ? document.activeElement.dataset.id : document.activeElement.outerHTML.slice(0, 80)");
check(focused === rows[0].id, "Tab moves from the search form to the first item: " + focused);
await press("Enter", "Enter", 13);
await waitFor(headline(rows[0].title), "Enter to open the focused item");
check(true, "Enter opens the focused item");

// The budget bar: every section is named in full (legend), no label is clipped in the bar.
check((await clippedBudget()).length === 0, "no budget label is clipped (" + (await clippedBudget()).join(", ") + ")");
const legend = await evaluate(`[...document.querySelectorAll('#budget-legend li')].map((node) => node.textContent)`);
check(legend.some((entry) => entry.startsWith("header ")), "the legend names the header section: " + legend.join(" | "));

// Live: another client renames the open item; the details follow without a click.
await click(`#items li[data-id="${unpinned.id}"]`);
await waitFor(headline(unpinned.title), "the details again");
await call("PATCH", "/api/v2/items/" + unpinned.id, { title: "Webhook retries back off, capped at 1 h" });
await waitFor(headline("Webhook retries back off, capped at 1 h"), "the open details to follow a change made elsewhere", 30);
check(true, "the detail panel follows a live change");
await call("PATCH", "/api/v2/items/" + unpinned.id, { title: unpinned.title });
await waitFor(headline(unpinned.title), "the open details to follow the change back", 30);

// Filters apply to a search: a kind narrows it, a status moves it off approved items.
await searchFor("retries");
const plain = await listRows();
check(plain.length >= 2 && plain.some((row) => !row.meta.startsWith("decision")), "a search finds items of several kinds: " + plain.map((row) => row.title).join(", "));
await searchFor("retries", "decision");
const decisionsOnly = await listRows();
check(decisionsOnly.length > 0 && decisionsOnly.length < plain.length && decisionsOnly.every((row) => row.meta.startsWith("decision")),
  "the kind filter narrows a search to decisions: " + decisionsOnly.map((row) => row.title).join(", "));
check(/decision/.test(await text("#items-count")), "the count names the filter: " + quote(await text("#items-count")));
await searchFor("mysql");
check((await listRows()).length === 0 && /approved/.test(await text("#items-count")), "a search without a status says it covers approved items: " + quote(await text("#items-count")));
await searchFor("mysql", "", "deprecated");
check((await rowTitles()).join() === "Old deprecated decision", "the status filter finds the deprecated item: " + (await rowTitles()).join(", "));
await searchFor("");

// A node of the tree lists exactly the items it counts (by schema key, not by its name).
const node = await evaluate(`(() => { const link = [...document.querySelectorAll('#tree a')].find((a) => a.textContent === 'decisions');
  return link && { key: link.title, count: Number(link.parentElement.querySelector('.meta').textContent.replace(/[()]/g, '')) }; })()`);
check(node && node.key === "root/decisions" && node.count >= 4, "the tree has a decisions node: " + JSON.stringify(node));
await relist(() => evaluate(`[...document.querySelectorAll('#tree a')].find((a) => a.textContent === 'decisions').click(); true`),
  `(count) => count.includes("root/decisions")`, "the decisions node's items");
const underNode = await rowTitles();
check(underNode.length === node.count, "the decisions node (" + node.count + ") lists " + underNode.length + " items: " + underNode.join(", "));
check(underNode.includes("Use WAL mode for SQLite") && underNode.includes("Keep one database file") && !underNode.includes("Decisions are written down"),
  "by schema key, deeper keys included, not by the word");
check((await evaluate("document.getElementById('search').value")) === "", "the search box is left empty");
check((await text("#items-count")).includes("root/decisions"), "the list says it shows root/decisions: " + quote(await text("#items-count")));
await relist(() => click("#items-count button"), `(count) => !count.includes("root/decisions")`, "the tree filter to clear");
check((await listRows()).length > underNode.length, "clearing the node lists every item again");

// Vault items are read-only here: no action the server would refuse, the file to edit named.
const listed = await call("GET", "/api/v2/items?project=" + project + "&limit=100");
const fromVault = listed.items.find((item) => item.source.startsWith("vault:") && item.kind === "decision") || fail("no vault decision");
await click(`#items li[data-id="${fromVault.id}"]`);
await waitFor(headline(fromVault.title), "the vault item's details");
const vaultActions = await evaluate(`[...document.querySelectorAll('#detail .actions button')].map((b) => b.textContent)`);
check(!vaultActions.some((label) => /deprecate|pin|edit|approve/.test(label)), "a vault item offers no change: " + vaultActions.join(", "));
const readOnly = await text("#detail .readonly");
check(/read-only/.test(readOnly) && readOnly.includes(fromVault.source.slice("vault:".length)), "it says it is read-only and names its file: " + quote(readOnly));

// Opening an item while the read of the one opened before is still under way (a live
// refresh re-reads the open item): the details are the last one's, whenever the earlier read
// ends. The page's reads of the first item are held back 800 ms to make the order certain.
const [slowItem, openedItem] = listed.items.filter((item) => !item.source.startsWith("vault:"));
await evaluate(`(() => {
  const real = window.fetch;
  window.__realFetch = real;
  const slow = "/api/v2/items/" + encodeURIComponent(${quote(slowItem.id)});
  window.fetch = (url, init) => {
    const answer = real(url, init);
    return String(url).startsWith(slow) ? answer.then((response) => new Promise((done) => setTimeout(() => done(response), 800))) : answer;
  };
  return true;
})()`);
await click(`#items li[data-id="${slowItem.id}"]`);
await click(`#items li[data-id="${openedItem.id}"]`);
await waitFor(headline(openedItem.title), "the details of the item opened last");
await sleep(1200);
const shownAfter = await text("#detail h3");
await evaluate("window.fetch = window.__realFetch; true");
check(shownAfter === openedItem.title,
  "the item opened last stays in the details after the earlier read ends: " + quote(shownAfter) + " (opened first: " + quote(slowItem.title) + ")");

// Hot arcs at heat 7 and above are not coloured like the L1 badge.
const heat = await background("#arcs .badge.hot");
const layer1 = await background("#items .badge.layer1");
check(heat && layer1 && heat !== layer1, "a hot arc's badge (" + heat + ") is not the L1 badge's blue (" + layer1 + ")");

// Memory use: the week of the one session the fixture played through the hooks.
const useText = await text("#use");
check(/% used/.test(useText) && /1 session\b/.test(useText) && /given items/.test(useText),
  "the Memory use panel shows the week's use rate: " + quote(useText));

// The health chart: points in time order (the start-up tick's earlier line included), an
// axis with two different ends, the latest reading named.
const chart = await evaluate(`({
  points: [...document.querySelectorAll('#health circle')].map((c) => ({ x: Number(c.getAttribute('cx')), at: c.dataset.timestamp })),
  axis: [...document.querySelectorAll('#health text.axis')].map((t) => t.textContent),
  now: (document.querySelector('#health .meta') || {}).textContent || '' })`);
const byX = [...chart.points].sort((a, b) => a.x - b.x).map((point) => point.at);
check(chart.points.length >= 4 && byX.every((at, index) => index === 0 || byX[index - 1] <= at), "the health points are in time order: " + byX.join(", "));
check(chart.axis.length === 2 && chart.axis[0] !== chart.axis[1], "the axis ends differ: " + chart.axis.join(" … "));
check(/7\/10: calm/.test(chart.now) && !/undefined/.test(chart.now), "the latest reading is the last in time: " + quote(chart.now));

// A confirmation stays on screen after the live refresh its own write causes.
const draft = await call("POST", "/api/v2/items?project=" + project, { title: "Draft to approve " + (token ? "(token)" : "(open)"), content: "x", status: "draft" });
await waitFor(`!!document.querySelector('#items li[data-id="${draft.id}"]')`, "the new draft to appear by itself", 30);
await click(`#items li[data-id="${draft.id}"]`);
await waitFor(headline(draft.title), "the draft's details");
await evaluate(`[...document.querySelectorAll('#detail .actions button')].find((b) => b.textContent === 'approve').click(); true`);
await waitFor(`document.getElementById('status').textContent === ${quote("approved " + draft.id)}`, "the approval's confirmation");
await sleep(1500);
check((await statusText()) === "approved " + draft.id, "the confirmation is still shown 1.5 s later: " + quote(await statusText()));

// An unknown project: the error names it (and keeps the server's hint), and nothing of the
// previous project stays on screen.
await setValue("project", "no-such-project");
await submitForm("project-form");
await waitFor("document.getElementById('status').className === 'error'", "the error banner");
check(/no-such-project/.test(await statusText()), "an unknown project shows an error: " + (await statusText()));
check(/check the name/.test(await statusText()), "the banner keeps the server's hint: " + (await statusText()));
const leftOver = await evaluate(`({
  tree: document.querySelectorAll('#tree a').length, items: document.querySelectorAll('#items li[data-id]').length,
  detail: !!document.querySelector('#detail h3'), preview: document.getElementById('preview').textContent,
  arcs: document.querySelectorAll('#arcs li strong').length, signals: document.querySelectorAll('#signals li[data-severity]').length,
  budget: document.querySelectorAll('#budget span').length })`);
check(leftOver.tree + leftOver.items + leftOver.arcs + leftOver.signals + leftOver.budget === 0 && !leftOver.detail && !leftOver.preview.includes(project),
  "the panels are cleared when the project fails to load: " + JSON.stringify(leftOver));

// A project without arcs of its own: the empty panel says why.
const acme = await call("GET", "/api/v2/arcs?project=acme-api");
await setValue("project", "acme-api");
await submitForm("project-form");
await waitFor(loaded, "acme-api to load");
const arcsText = await text("#arcs");
check(arcsText.includes("no arcs for acme-api — " + acme.inOtherProjects + " in other projects") && acme.inOtherProjects > 0,
  "the empty arcs panel says why: " + quote(arcsText));

await setValue("project", project);
await submitForm("project-form");
await waitFor(loaded + " && document.getElementById('status').className === ''", "the error to clear after a success");
check(true, "a later success replaces the error");
check(!(await rowTitles()).includes("Rate limits per key") && (await rowTitles()).includes("Use WAL mode for SQLite"),
  "back on " + project + ", the list is " + project + "'s: " + (await rowTitles()).join(", "));

// Narrow windows: no sideways scrolling, the details scrolled into view, the budget's
// labels refitted (and back when the window is wide again).
await screenshot(1400);
const wideLabels = await budgetLabels();
await resize(420, 900);
let overflow = await overflowAt();
check(overflow.page <= overflow.window && overflow.wide.length === 0, "at 420 px the page fits the window's width: " + JSON.stringify(overflow));
check((await clippedBudget()).length === 0, "at 420 px no budget label is clipped: " + (await clippedBudget()).join(", "));
await evaluate("window.scrollTo(0, 0); true");
await click(`#items li[data-id="${unpinned.id}"]`);
await waitFor(headline(unpinned.title), "the details at 420 px");
await waitFor(`(() => { const box = document.getElementById('detail-panel').getBoundingClientRect();
  return box.top >= -1 && box.top < window.innerHeight / 2; })()`, "the details to scroll into view", 5);
check(true, "at 420 px the details are scrolled into view");
await evaluate("window.scrollTo(0, 0); true");
await screenshot(420);
await resize(360, 800);
overflow = await overflowAt();
check(overflow.page <= overflow.window && overflow.wide.length === 0, "at 360 px the page fits the window's width: " + JSON.stringify(overflow));
await resize(1400, 1100);
check((await budgetLabels()).join("|") === wideLabels.join("|"), "wide again, the budget labels are back: " + (await budgetLabels()).join("|"));
overflow = await overflowAt();
check(overflow.page <= overflow.window && overflow.wide.length === 0, "at 1400 px the page fits the window's width: " + JSON.stringify(overflow));

// No request failed (the favicon included), nothing was logged as an error.
const favicon = await evaluate(`(document.querySelector('link[rel=icon]') || {}).href || ''`);
check(favicon.endsWith("/favicon.svg"), "the page links its icon: " + favicon);
const icon = await fetch(base + "/favicon.svg");
check(icon.status === 200 && (icon.headers.get("content-type") || "").startsWith("image/svg+xml"), "the icon is served");
const failed = responses.slice(typedAt).filter((response) => response.status >= 400 && !response.url.includes("no-such-project"));
check(failed.length === 0, "no request failed: " + JSON.stringify(failed));
// Chromium logs every 4xx answer; the deliberate ones (no token yet, the unknown project) aside.
const serious = problems.filter((problem) => !problem.includes("no-such-project") && !(token && problem.includes("401")));
check(serious.length === 0, "no script error: " + serious.join("; "));

console.log("all dashboard checks passed");
chrome.kill("SIGKILL");
process.exit(0);
