#!/usr/bin/env bash
# Builds the fuzz targets and runs each one (libFuzzer through cargo fuzz), on the stable
# toolchain: RUSTC_BOOTSTRAP=1 applies to this build only (cargo fuzz passes -Z flags).
#
#   fuzz/run.sh                      # every target, 10 seconds each (what .ci/run does)
#   fuzz/run.sh --seconds 60 redact_planted
#   fuzz/run.sh --runs 1000000       # the recorded runs of docs/RELIABILITY.md
#
# Inputs libFuzzer finds are kept in fuzz/corpus/<target> (not committed); the committed
# seeds are fuzz/seeds/<target>. A crash, a panic, a time-out (> 10 s per input) or an input
# needing more than 2 GB fails the run; the input is written to fuzz/artifacts/<target>/.
# Prints one line per target: executions, executions per second, coverage, corpus size.
set -euo pipefail
cd "$(dirname "$0")"

limit=(-max_total_time=10)
targets=()
while (($#)); do
    case "$1" in
        --seconds) limit=(-max_total_time="$2"); shift 2 ;;
        --runs) limit=(-runs="$2"); shift 2 ;;
        *) targets+=("$1"); shift ;;
    esac
done
if ((${#targets[@]} == 0)); then
    targets=(vault_parse import_line hook_input transcript_lines redact_planted)
fi

if ! command -v cargo-fuzz >/dev/null; then
    cargo install cargo-fuzz --locked
fi
# No sanitizer: the workspace forbids unsafe code, so AddressSanitizer would only watch
# dependencies, at half the speed; panics, time-outs and memory blow-ups are what we hunt.
export RUSTC_BOOTSTRAP=1
started=$(date +%s)
cargo fuzz build --sanitizer none
echo "fuzz build: $(($(date +%s) - started)) s"

status=0
for target in "${targets[@]}"; do
    mkdir -p "corpus/$target"
    case "$target" in
        vault_parse | transcript_lines) max_len=16384 ;;
        *) max_len=4096 ;;
    esac
    log=$(mktemp)
    if cargo fuzz run --sanitizer none "$target" "corpus/$target" "seeds/$target" -- \
        "${limit[@]}" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1; then
        runs=$(grep -oP '^stat::number_of_executed_units:\s*\K[0-9]+' "$log" || echo "?")
        speed=$(grep -oP '^stat::average_exec_per_sec:\s*\K[0-9]+' "$log" || echo "?")
        done_line=$(grep -E '^#[0-9]+\s+DONE' "$log" | tail -1 || true)
        cov=$(grep -oP 'cov: \K[0-9]+' <<<"$done_line" || echo "?")
        corpus=$(grep -oP 'corp: \K[0-9]+/[0-9]+[a-zA-Z]+' <<<"$done_line" || echo "?")
        echo "$target: ok, $runs executions, $speed exec/s, coverage $cov edges, corpus $corpus"
    else
        echo "$target: FAILED" >&2
        grep -E 'panicked|ERROR|SUMMARY|Test unit written' -A3 "$log" >&2 || tail -20 "$log" >&2
        status=1
    fi
    rm -f "$log"
done
rm -f /dev/shm/brain-fuzz-transcript-* 2>/dev/null || true
exit $status
