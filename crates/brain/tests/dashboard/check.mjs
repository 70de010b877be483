// The dashboard in a real browser: headless chromium driven over the DevTools protocol
// through --remote-debugging-pipe (file descriptors 3 and 4, NUL-separated JSON), so that
// no npm package is needed. Run by `serve::the_dashboard_renders_the_brain_in_chromium`
// (tests/it/serve.rs), which seeds the store and starts `brain serve`.
//
//   node check.mjs   with   CHROMIUM, BRAIN_URL (http://host:port), BRAIN_PROJECT,
//                           BRAIN_TOKEN (optional: typed into the page), SCREENSHOT (a .png
//                           path), PROFILE (a throw-away user-data dir)
//
// Prints one line per check and "all dashboard checks passed"; exits 1 at the first failure.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";

const env = process.env;
const base = env.BRAIN_URL;
const token = env.BRAIN_TOKEN || "";
const chrome = spawn(env.CHROMIUM, [
  "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
  "--remote-debugging-pipe", "--window-size=1400,1100", "--user-data-dir=" + env.PROFILE, "about:blank",
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
    await sleep(100);
  }
  fail("timed out waiting for " + what + "; status: " + (await evaluate("(document.getElementById('status') || {}).textContent")));
}
const text = (selector) => evaluate(`(document.querySelector(${JSON.stringify(selector)}) || {}).textContent || ""`);
const loaded = "document.getElementById('status').textContent.startsWith('loaded in')";
// A write by another client, through the API (the page must learn of it by itself).
async function write(method, path, body) {
  const headers = { "Content-Type": "application/json" };
  if (token) headers.Authorization = "Bearer " + token;
  const response = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (!response.ok) fail(method + " " + path + ": " + response.status + " " + (await response.text()));
  return response.json();
}

await page("Page.navigate", { url: base + "/?project=" + encodeURIComponent(env.BRAIN_PROJECT) });
// With tokens, the page first says it needs one (what a new user sees), then gets it.
let typedAt = 0;
if (token) {
  await waitFor("document.getElementById('status').className === 'error'", "the page to ask for a token");
  check(/needs a token/.test(await text("#status")), "without a token the page asks for one: " + (await text("#status")));
  typedAt = responses.length;
  await evaluate(`document.getElementById('token').value = ${JSON.stringify(token)};
    document.getElementById('project-form').requestSubmit(); true`);
}
await waitFor(loaded, "the page to load");
check((await text("#items")).includes("Use WAL mode for SQLite"), "items are listed");

// Layers read the same in the list and the details: L1/L2/L3, never layer1 or "archived".
const rows = await evaluate(`[...document.querySelectorAll('#items li[data-id]')].map((row) => ({
  id: row.dataset.id, title: row.querySelector('strong').textContent,
  badges: [...row.querySelectorAll('.badge')].map((badge) => badge.textContent) }))`);
const byTitle = (title) => rows.find((row) => row.title === title) || fail("no row titled " + title);
for (const row of rows) {
  const layer = row.badges.filter((text) => /^L[123]$/.test(text));
  check(layer.length <= 1, row.title + ": at most one layer badge (" + row.badges.join(", ") + ")");
  check(!row.badges.some((text) => text.startsWith("layer")), row.title + ": no raw layer name");
}
for (const title of ["Draft to review", "Old deprecated decision"]) {
  const row = byTitle(title);
  check(!row.badges.includes("archived"), title + " (" + row.badges.join(", ") + "): no 'archived' badge for a layer");
}
check(byTitle("Archived long ago").badges.includes("archived"), "an archived item shows its status 'archived'");

// The details of an unpinned item: no stray "null", the same layer badge as its row.
const unpinned = byTitle("Webhook retries back off exponentially");
await evaluate(`document.querySelector('#items li[data-id="${unpinned.id}"]').click(); true`);
await waitFor(`(document.querySelector('#detail h3') || {}).textContent === ${JSON.stringify(unpinned.title)}`, "the details");
const detail = await text("#detail");
check(!/null/.test(detail), "the details of an unpinned item show no 'null'");
const detailLayer = await evaluate(`[...document.querySelectorAll('#detail .badge')].map((b) => b.textContent).find((t) => /^L[123]$/.test(t))`);
const rowLayer = unpinned.badges.find((text) => /^L[123]$/.test(text));
check(detailLayer === rowLayer, "the details say " + detailLayer + " where the list says " + rowLayer);

// Signals: nuclear is as red as critical; warning is not.
const colors = await evaluate(`Object.fromEntries([...document.querySelectorAll('#signals .badge')].map((b) =>
  [b.textContent, getComputedStyle(b).backgroundColor]))`);
check(colors.nuclear && colors.critical, "nuclear and critical signals are shown (" + JSON.stringify(colors) + ")");
check(colors.nuclear === colors.critical, "nuclear badges are coloured like critical ones");
check(colors.warning && colors.warning !== colors.critical, "warning badges are not");

// The budget bar: every section is named in full (legend), no label is clipped in the bar.
const budget = await evaluate(`({
  clipped: [...document.querySelectorAll('#budget span, #budget-legend li')]
    .filter((node) => node.textContent && node.scrollWidth > node.clientWidth + 1).map((node) => node.textContent),
  legend: [...document.querySelectorAll('#budget-legend li')].map((node) => node.textContent) })`);
check(budget.clipped.length === 0, "no budget label is clipped (" + budget.clipped.join(", ") + ")");
check(budget.legend.some((entry) => entry.startsWith("header ")), "the legend names the header section: " + budget.legend.join(" | "));

// Live: another client renames the open item; the details follow without a click.
await write("PATCH", "/api/v2/items/" + unpinned.id, { title: "Webhook retries back off, capped at 1 h" });
await waitFor(`(document.querySelector('#detail h3') || {}).textContent === 'Webhook retries back off, capped at 1 h'`,
  "the open details to follow a change made elsewhere", 30);
check(true, "the detail panel follows a live change");
await write("PATCH", "/api/v2/items/" + unpinned.id, { title: unpinned.title });
await waitFor(`(document.querySelector('#detail h3') || {}).textContent === ${JSON.stringify(unpinned.title)}`,
  "the open details to follow the change back", 30);

// An error, then a success: the banner does not keep the error.
await evaluate(`document.getElementById('project').value = 'no-such-project';
  document.getElementById('project-form').requestSubmit(); true`);
await waitFor("document.getElementById('status').className === 'error'", "the error banner");
check(/no-such-project/.test(await text("#status")), "an unknown project shows an error: " + (await text("#status")));
await evaluate(`document.getElementById('project').value = ${JSON.stringify(env.BRAIN_PROJECT)};
  document.getElementById('project-form').requestSubmit(); true`);
await waitFor(loaded + " && document.getElementById('status').className === ''", "the error to clear after a success");
check(true, "a later success replaces the error");
await evaluate(`document.querySelector('#items li[data-id="${unpinned.id}"]').click(); true`);
await waitFor(`(document.querySelector('#detail h3') || {}).textContent === ${JSON.stringify(unpinned.title)}`, "the details again");

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

const overflow = await evaluate(`({ page: document.documentElement.scrollWidth, window: document.documentElement.clientWidth,
  wide: [...document.querySelectorAll('main > *, header')].filter((node) => node.getBoundingClientRect().right > document.documentElement.clientWidth + 1).map((node) => node.id || node.tagName) })`);
check(overflow.page <= overflow.window && overflow.wide.length === 0, "the page fits the window's width: " + JSON.stringify(overflow));

const shot = await page("Page.captureScreenshot", { format: "png" });
writeFileSync(env.SCREENSHOT, Buffer.from(shot.data, "base64"));
console.log("screenshot: " + env.SCREENSHOT);
console.log("all dashboard checks passed");
chrome.kill("SIGKILL");
process.exit(0);
