#!/usr/bin/env bash
# brain's tick beside the reference engine's (agentibrain-kernel, services/brain-ops/
# brain_keeper.py), interleaved on fresh copies of one generated vault (issue 15).
#
#   REFERENCE=/path/to/agentibrain-kernel bench/vault-reference.sh [ARCS] [RUNS]
#
# ARCS defaults to 10000, RUNS to 5. REFERENCE is a checkout (or a bare git directory) of
# github.com/the-cloud-clockwork/agentibrain-kernel; it is read, never copied into this
# repository. Needs python3 and GNU time (/usr/bin/time) for the maximum RSS.
#
# The reference reads the wall clock, so the vault is generated with --now at the start of
# the run and brain gets the same --now; both run within minutes of it (heat moves in hours).
# Every run copies the pristine vault twice (one copy each), and the order of the two engines
# alternates from run to run. First tick: the copy as generated. Steady tick: the same copy
# after two more ticks (brain: files dated past the 2 s racy window first). A run that fails
# is reported and left out (the reference's second tick on a generated vault can fail: it
# reads a pointer note its first tick moved).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
gen=${GEN_VAULT:-$here/../shared/bench/gen_vault.py}
n=${1:-10000}
runs=${2:-5}
dir=${BENCH_DIR:-/tmp/brain-bench-reference}
: "${REFERENCE:?set REFERENCE to a checkout or git directory of agentibrain-kernel}"

# BRAIN_BIN: a release binary already built from this tree (else it is built here).
if [ -n "${BRAIN_BIN:-}" ]; then
    brain=$BRAIN_BIN
else
    export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$here/target}
    cargo build --release -q -p brain --manifest-path "$here/Cargo.toml"
    brain="$CARGO_TARGET_DIR/release/brain"
fi

rm -rf "$dir" && mkdir -p "$dir/ref"
if [ -d "$REFERENCE/services/brain-ops" ]; then
    cp -r "$REFERENCE/services/brain-ops" "$dir/ref/"
else
    git --git-dir="$REFERENCE" archive HEAD services/brain-ops | tar -x -C "$dir/ref" --strip-components=1
fi
keeper="$dir/ref/brain-ops/brain_keeper.py"

now=$(date -u +%Y-%m-%dT%H:%M:%S)
pristine="$dir/pristine"
python3 "$gen" vault --out "$pristine" --n "$n" --seed 7 --now "${now}+00:00" >/dev/null
find "$pristine" -type f -exec touch -d '1 day ago' {} +
files=$(find "$pristine" -name '*.md' | wc -l)
echo "machine: $(nproc) cores, $(uname -r); vault: $n arcs, $files markdown files, --now ${now}Z"

# "<seconds> <max RSS KB>" of one command (its output discarded); nothing when it failed
# (the last line of its stderr goes to ours).
measure() { if /usr/bin/time -f '%e %M' -o "$dir/time" "$@" >/dev/null 2>"$dir/stderr"; then
    tail -1 "$dir/time"; else echo "failed: $* ($(tail -1 "$dir/stderr"))" >&2; fi; }
ref_tick() { measure python3 "$keeper" --vault "$1" --brain-feed "$1/brain-feed"; }
brain_tick() { measure "$brain" --home "$2" --now "${now}Z" tick --no-ai --vault "$1"; }

median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }

: >"$dir/ref-first" ; : >"$dir/brain-first"; : >"$dir/ref-steady"; : >"$dir/brain-steady"
for run in $(seq 1 "$runs"); do
    rm -rf "$dir/r" "$dir/b" "$dir/home"
    cp -a "$pristine" "$dir/r"
    cp -a "$pristine" "$dir/b"
    "$brain" --home "$dir/home" init >/dev/null
    sync
    if [ $((run % 2)) -eq 1 ]; then
        ref_tick "$dir/r" >>"$dir/ref-first"; sync
        brain_tick "$dir/b" "$dir/home" >>"$dir/brain-first"
    else
        brain_tick "$dir/b" "$dir/home" >>"$dir/brain-first"; sync
        ref_tick "$dir/r" >>"$dir/ref-first"
    fi
    # Settle both copies, then one steady tick each (interleaved the same way).
    ref_tick "$dir/r" >/dev/null
    sleep 3
    brain_tick "$dir/b" "$dir/home" >/dev/null
    sleep 3
    brain_tick "$dir/b" "$dir/home" >/dev/null
    if [ $((run % 2)) -eq 1 ]; then
        ref_tick "$dir/r" >>"$dir/ref-steady"
        brain_tick "$dir/b" "$dir/home" >>"$dir/brain-steady"
    else
        brain_tick "$dir/b" "$dir/home" >>"$dir/brain-steady"
        ref_tick "$dir/r" >>"$dir/ref-steady"
    fi
    echo "run $run: first ref $(tail -1 "$dir/ref-first") brain $(tail -1 "$dir/brain-first");" \
        "steady ref $(tail -1 "$dir/ref-steady") brain $(tail -1 "$dir/brain-steady") (s, KB);" \
        "load $(cut -d' ' -f1-3 /proc/loadavg)"
done

report() {
    local what=$1 ref=$2 ours=$3
    local rt bt rm bm
    if [ ! -s "$ref" ] || [ ! -s "$ours" ]; then echo "$what: no successful run of both"; return; fi
    rt=$(cut -d' ' -f1 "$ref" | median); bt=$(cut -d' ' -f1 "$ours" | median)
    rm=$(cut -d' ' -f2 "$ref" | sort -g | tail -1); bm=$(cut -d' ' -f2 "$ours" | sort -g | tail -1)
    awk -v w="$what" -v rt="$rt" -v bt="$bt" -v rm="$rm" -v bm="$bm" 'BEGIN {
        printf "%-12s reference %.3f s (max RSS %d MB)  brain %.3f s (max RSS %d MB)  ratio %.1fx\n",
            w, rt, rm / 1024, bt, bm / 1024, (bt > 0 ? rt / bt : 0) }'
}
echo "medians of $runs runs:"
report "first tick" "$dir/ref-first" "$dir/brain-first"
report "steady tick" "$dir/ref-steady" "$dir/brain-steady"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
