#!/usr/bin/env bash
# Capture benchmark (issue 7): `brain extract` and `brain cluster` on generated Claude Code
# transcripts, at several sizes, to show the cost per session stays flat.
#
#   bench/capture.sh [SESSIONS...]          # default: 100 1000 3000
#
# Needs python3 (../shared/bench/gen_vault.py) and hyperfine. Builds the release binary.
# Transcripts are generated once per size under $BENCH_DIR (default /tmp/brain-bench-capture)
# with --now pinned, so every run sees the same input. Cold extract: no capture state in the
# home (every transcript read). Warm extract: nothing changed since the last one. Cluster:
# an empty vault (every arc created) and, then, an unchanged one (every arc compared).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
gen="$here/../shared/bench/gen_vault.py"
now="2026-11-21T10:00:00Z"
dir=${BENCH_DIR:-/tmp/brain-bench-capture}
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(100 1000 3000)

export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$here/target}
cargo build --release -q -p brain-memory --manifest-path "$here/Cargo.toml"
brain="$CARGO_TARGET_DIR/release/brain"

mkdir -p "$dir"
for n in "${sizes[@]}"; do
    projects="$dir/projects-$n"
    if [ ! -d "$projects" ]; then
        python3 "$gen" transcripts --out "$projects" --sessions "$n" --seed 7 --now "$now" >/dev/null
    fi
    home="$dir/home-$n"
    rm -rf "$home"
    "$brain" --home "$home" init >/dev/null
    b() { echo "$brain --home $home --now $now $*"; }
    mb=$(du -sm "$projects" | cut -f1)
    echo "== $n sessions (${mb} MB of transcripts)"
    hyperfine --warmup 1 --runs 10 --style basic --export-json "$dir/extract-$n.json" \
        --prepare "rm -rf $home/capture" \
        -n "extract cold ($n)" "$(b extract --projects-dir "$projects") >/dev/null 2>&1"
    hyperfine --warmup 1 --runs 10 --style basic \
        -n "extract warm ($n)" "$(b extract --projects-dir "$projects") >/dev/null 2>&1"
    "$brain" --home "$home" --now "$now" extract --projects-dir "$projects" >/dev/null 2>&1
    hyperfine --warmup 1 --runs 10 --style basic --export-json "$dir/cluster-$n.json" \
        --prepare "rm -rf $home/vault" \
        -n "cluster new ($n)" "$(b cluster) >/dev/null 2>&1"
    hyperfine --warmup 1 --runs 10 --style basic \
        -n "cluster unchanged ($n)" "$(b cluster) >/dev/null 2>&1"
    "$brain" --home "$home" --now "$now" cluster 2>&1 >/dev/null | tail -1
done
