#!/usr/bin/env bash
# The hot paths of this tree against another brain binary (the "before"), whole process,
# interleaved (A, B, A, B, …: the machine's load hits both alike), medians and the load
# average:
#
#   bench/compare.sh BASE_BRAIN [RUNS]          # default 30 runs
#
# Cases: the session-start and user-prompt-submit hooks at 10k items, `brain search` and
# `brain session-start --task` at 100k items, and a steady `brain tick --no-ai` of a
# 1,000-arc vault (gen_vault.py, --seed 7). Builds this tree's release binary and the item
# generator; homes and vaults are throw-away, one per binary.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
base="${1:?usage: bench/compare.sh BASE_BRAIN [RUNS]}"
runs="${2:-30}"
gen_vault="${GEN_VAULT:-$root/../shared/bench/gen_vault.py}"
cd "$root"
cargo build -q --release -p brain
cargo build -q --release -p brain-core --example gen_items
target="${CARGO_TARGET_DIR:-$root/target}"
head="$target/release/brain"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
NOW=2026-11-21T10:00:00Z
"$target/release/examples/gen_items" 10000 7 bench > "$work/items-10k.jsonl"
"$target/release/examples/gen_items" 100000 7 bench > "$work/items-100k.jsonl"
python3 "$gen_vault" vault --out "$work/vault-src" --n 1000 --seed 7 >/dev/null
mkdir -p "$work/project"
for name in head base; do
  bin="$head"; [ "$name" = base ] && bin="$base"
  for n in 10k 100k; do
    "$bin" --home "$work/$name-$n" init >/dev/null
    "$bin" --home "$work/$name-$n" import "$work/items-$n.jsonl" >/dev/null
  done
  cp -R "$work/vault-src" "$work/$name-vault"
  # Files dated a day back (a scan hashes again what changed in the last 2 s); two ticks
  # settle the vault, so the timed ones change nothing.
  find "$work/$name-vault" -type f -exec touch -d '2026-11-20 10:00' {} +
  for _ in 1 2; do "$bin" --home "$work/$name-10k" --now "$NOW" tick --vault "$work/$name-vault" --no-ai >/dev/null; done
done
printf '{"session_id":"bench","cwd":"%s","hook_event_name":"SessionStart","source":"startup"}' "$work/project" > "$work/start.json"
printf '{"session_id":"bench","cwd":"%s","hook_event_name":"UserPromptSubmit","prompt":"retry logic for the webhook worker"}' "$work/project" > "$work/prompt.json"
: > "$work/empty"
python3 - "$work" "$head" "$base" "$runs" "$NOW" <<'PY'
import statistics, subprocess, sys, time
work, head, base, runs, now = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
binaries = [("head", head), ("base", base)]
cases = [
    ("hook session-start (10k items)", "10k", ["hook", "session-start"], "start.json"),
    ("hook user-prompt-submit (10k items)", "10k", ["hook", "user-prompt-submit"], "prompt.json"),
    ("search \"retry logic\" (100k items)", "100k", ["search", "retry", "logic"], "empty"),
    ("session-start --task (100k items)", "100k", ["session-start", "--task", "fix the webhook retry"], "empty"),
    ("tick --no-ai, steady (1,000 arcs)", "10k", ["tick", "--no-ai", "--vault", "{vault}"], "empty"),
]
print(f"{'case':<40} {'head':>10} {'base':>10}  head/base")
for title, size, args, stdin in cases:
    times = {label: [] for label, _ in binaries}
    for round in range(runs + 3):
        for label, binary in binaries:
            argv = [a.replace("{vault}", f"{work}/{label}-vault") for a in args]
            with open(f"{work}/{stdin}", "rb") as input:
                started = time.perf_counter()
                subprocess.run([binary, "--home", f"{work}/{label}-{size}", "--project", "bench", "--now", now, *argv],
                               stdin=input, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
                if round >= 3:  # warm-up rounds are not counted
                    times[label].append(time.perf_counter() - started)
    h, b = statistics.median(times["head"]) * 1000, statistics.median(times["base"]) * 1000
    print(f"{title:<40} {h:8.2f} ms {b:8.2f} ms  {h / b:5.2f}")
with open("/proc/loadavg") as load:
    print(f"medians of {runs} interleaved runs; load average:", " ".join(load.read().split()[:3]))
PY
