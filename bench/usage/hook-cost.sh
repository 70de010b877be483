#!/usr/bin/env bash
# What learning from use costs the hooks' hot path (issue 32), whole process:
#
#   bench/usage/hook-cost.sh [SESSIONS] [RUNS]
#
# Builds the release binary, imports 10k deterministic items (the assembler's generator) into
# a throw-away home, then plays SESSIONS sessions through the real hooks (session start, a
# prompt, a transcript quoting two of the items it was given, stop) so the store holds their
# decisions. Then times `brain hook session-start` and `brain hook user-prompt-submit` with
# `[search] learn_from_use` on and off, interleaved (on, off, on, off, …), and prints medians
# and the load average. The difference is the learning's read of the candidates' decisions.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
sessions="${1:-50}"
runs="${2:-60}"
cargo build -q --release -p brain-memory
cargo build -q -p brain-core --example gen_items
target="${CARGO_TARGET_DIR:-$root/target}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$target/debug/examples/gen_items" 10000 7 bench > "$work/items.jsonl"
python3 - "$work" "$target/release/brain" "$sessions" "$runs" <<'EOF'
import json, os, statistics, subprocess, sys, time
work, brain, sessions, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
home, project = os.path.join(work, "home"), os.path.join(work, "project")
os.makedirs(project)
env = {"PATH": os.environ["PATH"], "HOME": work, "BRAIN_HOME": home}
now = "2026-11-21T10:00:00Z"

def run(args, stdin=None):
    done = subprocess.run([brain, "--now", now] + args, input=stdin, capture_output=True, text=True, cwd=project, env=env)
    if done.returncode != 0:
        raise SystemExit(f"brain {args}: {done.stderr}")
    return done.stdout

def learning(on):
    with open(os.path.join(project, ".brain.toml"), "w") as handle:
        handle.write(f'project = "bench"\n[search]\nlearn_from_use = {"true" if on else "false"}\n')

learning(True)
run(["init"])
run(["import", os.path.join(work, "items.jsonl")])
tasks = ["retry logic for the webhook worker", "database pool size", "release checklist", "auth token refresh"]
for index in range(sessions):
    session = f"seed-{index:03d}"
    base = {"session_id": session, "cwd": project}
    run(["hook", "session-start"], json.dumps(base))
    run(["hook", "user-prompt-submit"], json.dumps({**base, "prompt": tasks[index % len(tasks)]}))
    with open(os.path.join(home, "hooks", "sessions", f"{session}.json")) as handle:
        given = json.load(handle)["given"]
    lines = [{"type": "user", "timestamp": now, "cwd": project, "message": {"content": tasks[index % len(tasks)]}}]
    for item_id in given[:2]:
        item = json.loads(run(["show", item_id, "--json"]))
        quote = " ".join(item["content"].split()[:12])
        lines.append({"type": "assistant", "timestamp": now, "cwd": project,
                      "message": {"content": [{"type": "text", "text": f"Per the memory: {quote}"}]}})
    path = os.path.join(work, f"{session}.jsonl")
    with open(path, "w") as handle:
        handle.write("".join(json.dumps(line) + "\n" for line in lines))
    run(["hook", "stop"], json.dumps({**base, "transcript_path": path}))
decisions = json.loads(run(["status", "--json"]))["use_rate"][-1]
print(f"seeded {sessions} sessions: {decisions['given']} decisions, {decisions['used']} used")

cases = [("hook session-start", ["hook", "session-start"], {"session_id": "bench", "cwd": project}),
         ("hook user-prompt-submit (task recall)", ["hook", "user-prompt-submit"],
          {"session_id": "bench", "cwd": project, "prompt": "retry logic for the webhook worker"})]
load = os.getloadavg()
for label, args, payload in cases:
    times = {True: [], False: []}
    for round_index in range(runs):
        for on in (True, False):
            learning(on)
            state = os.path.join(home, "hooks", "sessions", "bench.json")
            if os.path.exists(state):
                os.remove(state)
            if args[1] == "user-prompt-submit":
                run(["hook", "session-start"], json.dumps(payload))
            started = time.perf_counter()
            run(args, json.dumps(payload))
            times[on].append(1000 * (time.perf_counter() - started))
    on, off = statistics.median(times[True]), statistics.median(times[False])
    print(f"{label}: learning on {on:.2f} ms, off {off:.2f} ms (median of {runs}, interleaved), on/off {on / off:.2f}")
print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
EOF
