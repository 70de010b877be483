#!/usr/bin/env bash
# Hygiene benchmark (issue 16): the deterministic plan of `brain hygiene` (MinHash + LSH
# near-duplicates, shared dedup hints, stale and low-confidence items) over N generated items
# with planted near-duplicate pairs: wall time (median of RUNS dry runs, whole process),
# the plan's own time, peak RSS, and how many planted pairs the plan found.
#
#   bench/hygiene.sh [ITEMS...]            # default: 10000 100000
#
# Needs python3. Builds the release binary (BRAIN_BIN=PATH uses that one instead).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
dir=${BENCH_DIR:-/tmp/brain-bench-hygiene}
runs=${RUNS:-5}
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 100000)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$here/target}
if [ -z "${BRAIN_BIN:-}" ]; then cargo build --release -q -p brain-memory --manifest-path "$here/Cargo.toml"; fi
brain=${BRAIN_BIN:-$CARGO_TARGET_DIR/release/brain}
now="2026-11-21T10:00:00Z"
mkdir -p "$dir"
echo "machine: $(nproc) cores, $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"

for n in "${sizes[@]}"; do
    home="$dir/home-$n"
    rm -rf "$home"
    "$brain" --home "$home" init >/dev/null
    # N items of 30 words drawn from 400 (varied, unrelated), 1 in 200 followed by a near copy
    # (one word appended), 1 in 500 sharing a dedup hint with the previous one.
    python3 - "$n" >"$dir/items-$n.jsonl" <<'PY'
import json, random, sys
n = int(sys.argv[1]); rng = random.Random(16)
words = ["w%03d" % i for i in range(400)]
made = 0; i = 0
while made < n:
    text = " ".join(rng.choice(words) for _ in range(30))
    item = {"kind": "lesson", "title": "Item %d %s" % (i, text[:20]), "content": text, "confidence": 0.9,
            "created_at": "2026-11-01T00:00:00Z", "updated_at": "2026-11-01T00:00:00Z", "review_due_at": "2026-12-30T00:00:00Z"}
    if i % 500 == 499:
        item["dedup_hint"] = "lesson:bench:%d" % (i // 500)
    print(json.dumps(item)); made += 1
    if i % 200 == 0 and made < n:
        near = dict(item, content=text + " again", updated_at="2026-11-02T00:00:00Z", title="Item %d %s" % (i, text[:20]))
        near.pop("dedup_hint", None)
        print(json.dumps(near)); made += 1
    if i % 500 == 499 and made < n:
        twin = {"kind": "lesson", "title": "Other %d" % i, "content": " ".join(rng.choice(words) for _ in range(30)),
                "dedup_hint": "lesson:bench:%d" % (i // 500), "confidence": 0.9,
                "updated_at": "2026-11-03T00:00:00Z", "review_due_at": "2026-12-30T00:00:00Z"}
        print(json.dumps(twin)); made += 1
    i += 1
PY
    planted=$(grep -c ' again"' "$dir/items-$n.jsonl")
    "$brain" --home "$home" --now "$now" import "$dir/items-$n.jsonl" >/dev/null
    echo "== $n items ($planted planted near-duplicate pairs)"
    python3 - "$runs" "$brain" "$home" "$now" <<'PY'
import json, resource, statistics, subprocess, sys, time
runs, brain, home, now = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
walls, plans = [], []
for _ in range(runs):
    t = time.perf_counter()
    out = subprocess.run([brain, "--home", home, "--now", now, "hygiene", "--no-ai", "--json", "--limit", "100000"],
                         capture_output=True, check=True).stdout
    walls.append((time.perf_counter() - t) * 1000)
    report = json.loads(out); plans.append(report["plan_ms"])
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print("hygiene dry run: %.0f ms wall (median of %d; min %.0f), plan %.0f ms, peak RSS %.0f MB; %d items, %d actions: %s" % (
    statistics.median(walls), runs, min(walls), statistics.median(plans), rss, report["items"], report["found"],
    ", ".join("%d %s" % (v, k) for k, v in report["rules"].items())))
PY
done
