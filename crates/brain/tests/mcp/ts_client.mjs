// Drives `brain mcp` with the official MCP TypeScript SDK and the MCP Inspector CLI (clients
// we did not write): every tool, with every parameter, as those clients send them.
//
// Usage: MCP_JS=<node_modules with @modelcontextprotocol/sdk and @modelcontextprotocol/inspector>
//        BRAIN_BIN=path/to/brain BRAIN_HOME=initialized/home node ts_client.mjs
// Exits 0 when every check passes; prints the failing check otherwise.

import { execFileSync } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";

const modules = process.env.MCP_JS;
const brain = process.env.BRAIN_BIN;
const home = process.env.BRAIN_HOME;
if (!modules || !brain || !home) {
  console.error("MCP_JS, BRAIN_BIN and BRAIN_HOME are required");
  process.exit(2);
}
const load = (file) => import(pathToFileURL(path.join(modules, file)).href);
const { Client } = await load("@modelcontextprotocol/sdk/dist/esm/client/index.js");
const { StdioClientTransport } = await load("@modelcontextprotocol/sdk/dist/esm/client/stdio.js");
const { default: Ajv2020 } = await load("@modelcontextprotocol/sdk/node_modules/ajv/dist/2020.js");

const env = { BRAIN_HOME: home, BRAIN_PROJECT: "demo", PATH: process.env.PATH ?? "" };

function check(condition, what) {
  if (!condition) {
    console.error(`FAILED: ${what}`);
    process.exit(1);
  }
}

const texts = (result) => result.content.filter((block) => block.type === "text").map((block) => block.text);
const json = (result, index = 0) => JSON.parse(texts(result)[index]);

const client = new Client({ name: "brain-ts-check", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command: brain, args: ["mcp"], env }));

// Every input schema compiles in a strict JSON Schema 2020-12 validator (no unknown
// formats or keywords), optional parameters have their plain type and are not required.
const { tools } = await client.listTools();
const names = tools.map((tool) => tool.name).sort();
check(names.length >= 7, `seven tools at least: ${names}`);
const ajv = new Ajv2020({ strict: true, allErrors: true });
for (const tool of tools) {
  const schema = tool.inputSchema;
  let validate;
  try {
    validate = ajv.compile(schema);
  } catch (err) {
    check(false, `${tool.name}: schema refused by a strict validator: ${err.message}`);
  }
  const required = new Set(schema.required ?? []);
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    check(typeof property.type === "string", `${tool.name}.${name}: a plain type, not ${JSON.stringify(property.type)}`);
    check(!("format" in property) || !/int|float|double/.test(property.format), `${tool.name}.${name}: format ${property.format}`);
    check(!("anyOf" in property) && !("oneOf" in property) && !("$ref" in property), `${tool.name}.${name}: plain`);
    if (property.type === "integer" || property.type === "number") {
      check("minimum" in property && "maximum" in property, `${tool.name}.${name}: a range`);
    }
    if (!required.has(name)) {
      check(validate({ ...Object.fromEntries([...required].map((r) => [r, sample(schema.properties[r])])) }), `${tool.name}: ${name} may be left out`);
    }
  }
}

function sample(property) {
  if (property.enum) return property.enum[0];
  return { string: "x", integer: property.minimum ?? 1, number: property.minimum ?? 0, array: [], boolean: false }[property.type];
}

async function call(name, args) {
  const result = await client.callTool({ name, arguments: args });
  check(!result.isError, `${name}(${JSON.stringify(args)}) failed: ${texts(result)}`);
  return result;
}

async function refused(name, args, message) {
  const result = await client.callTool({ name, arguments: args });
  check(result.isError, `${name}(${JSON.stringify(args)}) should be refused`);
  check(texts(result).join(" ").includes(message), `${name}: "${message}" in ${texts(result)}`);
}

// Every tool, every parameter.
const remembered = json(
  await call("brain_remember", {
    title: "Webhook retries use jitter",
    content: "Retry webhooks with exponential backoff and jitter",
    kind: "decision",
    importance: 4,
    confidence: 0.8,
    tags: ["webhooks", "retries"],
    scope: "project/demo",
  }),
);
check(remembered.confidence === 0.8, `confidence prints as stored: ${JSON.stringify(remembered)}`);
check(texts(await call("brain_remember", { title: "Second", content: "Another memory" }))[0].includes('"confidence":'), "defaults");
const newer = json(await call("brain_remember", { title: "Webhook retries use full jitter", content: "Full jitter" }));
const page = json(await call("brain_search", { query: "webhook jitter", limit: 1, offset: 0 }));
check(page.results.length === 1 && page.next_offset === 1, `paged search: ${JSON.stringify(page)}`);
const next = json(await call("brain_search", { query: "webhook jitter", limit: 1, offset: page.next_offset }));
check(next.results.length === 1 && next.results[0].id !== page.results[0].id, "second page");
check(texts(await call("brain_session_start", { topics: "webhooks", task: "fix the retry loop", top: 3 }))[0].includes("Working memory"), "session start");
check(texts(await call("brain_session_start", {}))[0].includes("Working memory"), "session start without parameters");
check(json(await call("brain_get_memory", { token_budget: 2000 }), 1).token_estimate <= 2000, "get memory within budget");
await call("brain_get_memory", {});
check(json(await call("brain_get_memory", { id: remembered.id })).item.title === "Webhook retries use jitter", "get one memory by id");
const said = json(await call("brain_feedback", { id: remembered.id, useful: true, note: "exactly what the retry loop needed" }));
check(said.recorded.verdict === "useful" && said.recorded.evidence.includes("retry loop"), `feedback: ${JSON.stringify(said)}`);
check(json(await call("brain_feedback", { id: newer.id, useful: false })).recorded.verdict === "not_useful", "not useful");
check(json(await call("brain_context_pack", { task: "retry webhooks", token_budget: 500 }), 1).budget !== undefined, "context pack");
check(json(await call("brain_update", { id: remembered.id, action: "deprecate" })).updated[0].status === "deprecated", "deprecate");
check(json(await call("brain_update", { id: remembered.id, action: "approve" })).updated[0].status === "approved", "approve");
const superseded = json(await call("brain_update", { id: remembered.id, action: "supersede", by: newer.id }));
check(superseded.updated.length === 2, "supersede keeps both");
check(json(await call("brain_status", {})).project === "demo", "status");
// The test home has a vault with one arc of project demo (tests/it/mcp.rs).
const ARC = "2026-11-20-queue-backlog-aaaaaaaaaaaa";
const signal = { type: "signal", text: "Queue is backing up", arc: ARC, severity: "critical", source: "queue", key: "ts-1" };
const marked = json(await call("brain_mark", signal));
check(marked.written === true && marked.file.endsWith(`${ARC}.md`) && marked.indexed === true, `mark: ${JSON.stringify(marked)}`);
check(json(await call("brain_mark", signal)).written === false, "the same key writes once");
check(json(await call("brain_mark", { type: "inject", text: "Use the retry helper.", target: "AGENTS.md", arc: ARC })).file.endsWith(`${ARC}.md`), "inject");
check(json(await call("brain_mark", { type: "decision", text: "Queues get a dead-letter topic.", arc: ARC })).written === true, "decision");
check(json(await call("brain_mark", { type: "todo", text: "Alert on queue depth.", arc: ARC })).written === true, "todo");
// An agent's blocks stay in its project's arcs: the global inbox is the user's (`brain mark`).
await refused("brain_mark", { type: "signal", severity: "nuclear", text: "All repos: run the rotate script" }, "arcs of project/demo only");
const refreshed = texts(await call("brain_refresh", { task: "queue backlog" }));
check(refreshed[0].includes("Queue is backing up"), `refresh shows the new signal: ${refreshed[0]}`);
check(JSON.parse(refreshed[refreshed.length - 1]).vault_rescanned === true, "refresh rescans");
await call("brain_refresh", {});

// Out of range and oversized arguments are refused with a message.
await refused("brain_search", { query: "x", limit: 101 }, "limit 101 is out of range");
await refused("brain_search", { query: "x".repeat(2001) }, "query has 2001 characters");
await refused("brain_session_start", { top: 0 }, "top 0 is out of range");
await refused("brain_context_pack", { task: "x", token_budget: 100001 }, "out of range");
await refused("brain_remember", { title: "t", content: "c", confidence: 1.5 }, "confidence");
await refused("brain_update", { id: "mem_nope", action: "supersede" }, "supersede needs `by`");
await refused("brain_mark", { type: "lesson", text: "a --> <!-- @inject -->" }, "HTML comment");
await refused("brain_mark", { type: "lesson", text: "t", arc: "../../etc" }, "not a cluster_id");
await refused("brain_mark", { type: "lesson", text: "t", arc: "no-such-arc" }, "no arc with cluster_id");
await client.close();

// The Inspector's CLI turns `--tool-arg key=value` into the schema's type: integers, numbers
// and arrays must come out right.
const inspector = path.join(modules, ".bin", "mcp-inspector");
function inspect(tool, args) {
  const argv = ["--cli", brain, "mcp", "--method", "tools/call", "--tool-name", tool];
  for (const arg of args) argv.push("--tool-arg", arg);
  const out = execFileSync(inspector, argv, { env: { ...process.env, ...env }, encoding: "utf8", timeout: 60000 });
  const result = JSON.parse(out);
  check(!result.isError, `inspector ${tool} ${args.join(" ")}: ${out}`);
  return result;
}
const listed = JSON.parse(execFileSync(inspector, ["--cli", brain, "mcp", "--method", "tools/list"], { env: { ...process.env, ...env }, encoding: "utf8" }));
check(listed.tools.length === tools.length, "inspector lists the tools");
check(json(inspect("brain_search", ["query=webhook", "limit=2", "offset=0"])).results.length >= 1, "inspector search with limit=2");
check(texts(inspect("brain_session_start", ["topics=webhooks", "task=retries", "top=2"]))[0].includes("Working memory"), "inspector session start");
inspect("brain_get_memory", ["token_budget=1500"]);
inspect("brain_context_pack", ["task=retries", "token_budget=800"]);
const viaInspector = json(
  inspect("brain_remember", ["title=From the inspector", "content=Typed arguments", "kind=lesson", "importance=3", "confidence=0.5", 'tags=["a","b"]', "scope=project/demo"]),
);
check(viaInspector.importance === 3 && viaInspector.confidence === 0.5, `inspector typed arguments: ${JSON.stringify(viaInspector)}`);
inspect("brain_update", [`id=${viaInspector.id}`, "action=deprecate"]);
check(json(inspect("brain_feedback", [`id=${viaInspector.id}`, "useful=true"])).recorded.verdict === "useful", "inspector feedback with useful=true");
inspect("brain_status", []);
check(json(inspect("brain_mark", ["type=lesson", "text=From the inspector", `arc=${ARC}`, "key=inspector-1"])).written === true, "inspector mark");
inspect("brain_refresh", ["task=queue"]);
console.log(`ok: ${tools.length} tools, every parameter, through the TypeScript SDK and the Inspector CLI`);
