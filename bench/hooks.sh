#!/usr/bin/env bash
# The hooks' hot path, whole process, against another brain binary (the "before"):
#
#   bench/hooks.sh [BASE_BRAIN] [RUNS]
#
# Builds this tree's release binary, generates 10k deterministic items (the assembler's
# generator), imports them into one throw-away home per binary, then times each hook
# command for both binaries *interleaved* (A, B, A, B, …: the machine's load hits both
# alike) and prints medians and the load average. Without BASE_BRAIN only this tree is timed.
# TOKENIZER=o200k|cl100k|heuristic sets the token counter of both (BRAIN_TOKENIZER; by default
# the config's, heuristic).
set -euo pipefail
if [ -n "${TOKENIZER:-}" ]; then export BRAIN_TOKENIZER=$TOKENIZER; fi
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
base="${1:-}"
runs="${2:-60}"
cargo build -q --release -p brain-memory
cargo build -q -p brain-core --example gen_items
target="${CARGO_TARGET_DIR:-$root/target}"
head="$target/release/brain"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$target/debug/examples/gen_items" 10000 7 bench > "$work/items.jsonl"
mkdir -p "$work/project"
printf '{"type":"user","timestamp":"2026-11-21T08:00:00Z","cwd":"%s","message":{"content":"Fix the retry loop"}}\n' "$work/project" > "$work/t.jsonl"
for name in head base; do
  bin="$head"; [ "$name" = base ] && bin="$base"
  [ -n "$bin" ] || continue
  "$bin" --home "$work/$name" init >/dev/null
  "$bin" --home "$work/$name" import "$work/items.jsonl" >/dev/null
done
printf '{"session_id":"bench","cwd":"%s","hook_event_name":"SessionStart","source":"startup"}' "$work/project" > "$work/start.json"
printf '{"session_id":"bench","cwd":"%s","hook_event_name":"UserPromptSubmit","prompt":"retry logic for the webhook worker"}' "$work/project" > "$work/prompt.json"
printf '{"session_id":"bench","cwd":"%s","transcript_path":"%s"}' "$work/project" "$work/t.jsonl" > "$work/stop.json"
python3 - "$work" "$head" "$base" "$runs" <<'EOF'
import os, statistics, subprocess, sys, time
work, head, base, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
binaries = [("this tree", head, "head")] + ([("base", base, "base")] if base else [])
cases = [
    ("hook session-start (10k items)", ["hook", "session-start"], "start.json"),
    ("hook user-prompt-submit", ["hook", "user-prompt-submit"], "prompt.json"),
    ("hook stop (small transcript, unchanged)", ["hook", "stop"], "stop.json"),
]
for title, args, stdin in cases:
    times = {label: [] for label, _, _ in binaries}
    for round in range(runs + 3):
        for label, binary, home in binaries:
            with open(f"{work}/{stdin}", "rb") as input:
                started = time.perf_counter()
                subprocess.run([binary, "--home", f"{work}/{home}", "--project", "bench", "--now", "2026-11-21T10:00:00Z", *args],
                               stdin=input, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
                if round >= 3:  # warm-up rounds are not counted
                    times[label].append(time.perf_counter() - started)
    line = "  ".join(f"{label}: {statistics.median(values) * 1000:6.2f} ms" for label, values in times.items())
    print(f"{title:<42} {line}  (median of {runs}, interleaved)")
with open("/proc/loadavg") as load:
    print("load average:", " ".join(load.read().split()[:3]), "; tokenizer:", os.environ.get("BRAIN_TOKENIZER", "config's"))
EOF
