#!/usr/bin/env bash
# brain's tick beside the reference engine's (agentibrain-kernel, services/brain-ops/
# brain_keeper.py), interleaved on fresh copies of one generated vault (issue 15).
#
#   REFERENCE=/path/to/agentibrain-kernel bench/vault-reference.sh [ARCS] [RUNS]
#
# BASELINE_BIN=<another brain binary> adds a third copy per run ticked by it (before/after
# figures from the same run).
#
# ARCS defaults to 10000, RUNS to 5, STEADY (steady ticks per engine and run) to 5.
# REFERENCE is a checkout (or a bare git directory) of
# github.com/the-cloud-clockwork/agentibrain-kernel; it is read, never copied into this
# repository. Needs python3 and GNU time (/usr/bin/time) for the maximum RSS.
#
# The reference reads the wall clock, so the vault is generated with --now at the start of
# the run and brain gets the same --now; both run within minutes of it (heat moves in hours).
# Every run copies the pristine vault once per engine (in folders of its own), and the order
# of the engines rotates from run to run. First tick: the copy as generated. Steady tick:
# the same copy after two more ticks (brain: files dated past the 2 s racy window first),
# timed STEADY times in rounds (a brain steady tick is ~0.1 s: one sample swung ±40%).
# Copies are deleted when the script ends, not between runs: on ext4 without a journal (this
# machine's disk) a new inode is not taken from those freed in the last minute or more while
# others are free, and that check walks the free inodes of the folder's block group one by
# one, so thousands of files deleted just before a run slow down every file the run creates
# (brain's first tick stages ~10k; see docs/BENCHMARKS.md). A run that fails
# is reported and left out (the reference's second tick on a generated vault can fail: it
# reads a pointer note its first tick moved).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
gen=${GEN_VAULT:-$here/../shared/bench/gen_vault.py}
n=${1:-10000}
runs=${2:-5}
steady=${STEADY:-5}
dir=${BENCH_DIR:-/tmp/brain-bench-reference}
: "${REFERENCE:?set REFERENCE to a checkout or git directory of agentibrain-kernel}"

# BRAIN_BIN: a release binary already built from this tree (else it is built here).
if [ -n "${BRAIN_BIN:-}" ]; then
    brain=$BRAIN_BIN
else
    export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$here/target}
    cargo build --release -q -p brain-memory --manifest-path "$here/Cargo.toml"
    brain="$CARGO_TARGET_DIR/release/brain"
fi

rm -rf "$dir" && mkdir -p "$dir/ref"
trap 'rm -rf "$dir"' EXIT
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
# (the last line of its stderr goes to ours). The wall time is read to the microsecond around
# GNU time (whose own %e has 10 ms steps, too coarse for a steady tick of brain's).
measure() { local start end
    start=$(date +%s%N)
    if /usr/bin/time -f '%M' -o "$dir/time" "$@" >/dev/null 2>"$dir/stderr"; then
        end=$(date +%s%N)
        echo "$(( (end - start) / 1000 ))e-6 $(tail -1 "$dir/time")" | awk '{printf "%.4f %s\n", $1, $2}'
    else echo "failed: $* ($(tail -1 "$dir/stderr"))" >&2; fi; }
ref_tick() { measure python3 "$keeper" --vault "$1" --brain-feed "$1/brain-feed"; }
brain_tick() { measure "$brain" --home "$2" --now "${now}Z" tick --no-ai --vault "$1"; }

median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }

# The engines of a run: the reference, brain and, with BASELINE_BIN, an earlier brain build
# (before/after in the same run). Their order rotates from run to run.
engines="ref brain"
[ -n "${BASELINE_BIN:-}" ] && engines="ref brain base"
for engine in $engines; do : >"$dir/$engine-first"; : >"$dir/$engine-steady"; done
# tick ENGINE VAULT HOME
tick() { case $1 in
    ref) ref_tick "$2" ;;
    brain) brain_tick "$2" "$3" ;;
    base) measure "$BASELINE_BIN" --home "$3" --now "${now}Z" tick --no-ai --vault "$2" ;;
esac; }
rotate() { local n=$1; shift; local all=("$@"); local k=$(( n % ${#all[@]} ));
    echo "${all[@]:k}" "${all[@]:0:k}"; }
for run in $(seq 1 "$runs"); do
    mkdir -p "$dir/run$run"
    for engine in $engines; do
        cp -a "$pristine" "$dir/run$run/$engine"
        # Each brain build makes its own home (a newer build's schema is refused by an older one).
        case $engine in
            brain) "$brain" --home "$dir/run$run/$engine-home" init >/dev/null ;;
            base) "$BASELINE_BIN" --home "$dir/run$run/$engine-home" init >/dev/null ;;
        esac
    done
    sync
    order=$(rotate $((run - 1)) $engines)
    for engine in $order; do
        tick "$engine" "$dir/run$run/$engine" "$dir/run$run/$engine-home" >>"$dir/$engine-first"; sync
    done
    # Settle every copy (brain: files dated past the 2 s racy window first), then STEADY
    # rounds of one steady tick each, in the same order (the run's figure is their median).
    for engine in $order; do tick "$engine" "$dir/run$run/$engine" "$dir/run$run/$engine-home" >/dev/null; done
    sleep 3
    for engine in $order; do
        [ "$engine" = ref ] || tick "$engine" "$dir/run$run/$engine" "$dir/run$run/$engine-home" >/dev/null
    done
    sleep 3
    for engine in $engines; do : >"$dir/$engine-round"; done
    for _ in $(seq 1 "$steady"); do
        for engine in $order; do
            tick "$engine" "$dir/run$run/$engine" "$dir/run$run/$engine-home" >>"$dir/$engine-round"
        done
    done
    for engine in $engines; do
        [ -s "$dir/$engine-round" ] || continue
        echo "$(cut -d' ' -f1 "$dir/$engine-round" | median) $(cut -d' ' -f2 "$dir/$engine-round" | sort -g | tail -1)" \
            >>"$dir/$engine-steady"
    done
    line="run $run ($order):"
    for engine in $engines; do
        line="$line $engine first $(tail -1 "$dir/$engine-first"), steady $(tail -1 "$dir/$engine-steady");"
    done
    echo "$line (s, KB) load $(cut -d' ' -f1-3 /proc/loadavg)"
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
if [ -n "${BASELINE_BIN:-}" ]; then
    echo "baseline ($BASELINE_BIN) beside the reference:"
    report "first tick" "$dir/ref-first" "$dir/base-first"
    report "steady tick" "$dir/ref-steady" "$dir/base-steady"
fi
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
