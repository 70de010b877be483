// Probe plugin for OpenCode: shells out to /work/research30/hook.sh for each hook/event and
// adds what the command prints to the model's context (system prompt / prompt parts).
import { execFileSync } from "node:child_process";
import { appendFileSync } from "node:fs";

const HOOK = "/work/research30/hook.sh";
const LOG = "/work/research30/logs/opencode.plugin.log";

// OpenCode's ascending ids: "prt_" + 12 hex digits of (ms * 0x1000 + counter) + 14 base62.
let counter = 0;
function partId() {
  const n = BigInt(Date.now()) * 0x1000n + BigInt(counter++ & 0xfff);
  const hex = n.toString(16).padStart(12, "0").slice(-12);
  const abc = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  let rand = "";
  for (let i = 0; i < 14; i++) rand += abc[Math.floor(Math.random() * 62)];
  return "prt_" + hex + rand;
}

function run(event, payload) {
  try {
    return execFileSync(HOOK, ["opencode", event], {
      input: JSON.stringify(payload),
      encoding: "utf8",
      timeout: 10000,
    }).trim();
  } catch (err) {
    appendFileSync(LOG, `hook ${event} failed: ${err}\n`);
    return "";
  }
}

export const BrainProbe = async ({ project, directory, worktree, client, $ }) => {
  appendFileSync(LOG, `init directory=${directory} worktree=${worktree} project=${JSON.stringify(project)}\n`);
  return {
    event: async ({ event }) => {
      appendFileSync(LOG, `event ${event.type} ${JSON.stringify(event.properties).slice(0, 400)}\n`);
      if (["session.created", "session.idle", "session.compacted", "session.deleted", "session.status"].includes(event.type)) {
        run(event.type, { hook_event_name: event.type, cwd: directory, ...event.properties });
      }
    },
    "chat.message": async (input, output) => {
      const prompt = output.parts.filter((p) => p.type === "text").map((p) => p.text).join("\n");
      const text = run("chat.message", { hook_event_name: "chat.message", session_id: input.sessionID, cwd: directory, prompt, input, message: output.message });
      if (text) {
        output.parts.push({
          id: partId(), // required: a part without an id fails the run (1.18.33)
          sessionID: input.sessionID,
          messageID: output.message.id,
          type: "text",
          text,
          synthetic: true,
        });
      }
    },
    "experimental.chat.system.transform": async (input, output) => {
      const text = run("system.transform", { hook_event_name: "system.transform", session_id: input.sessionID, cwd: directory, input, system_len: output.system.length });
      if (text) output.system.push(text);
    },
  };
};
