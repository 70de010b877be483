#!/usr/bin/env bash
# Vault benchmark (issue 5): `brain vault scan` (cold and with nothing changed) and the
# steady-state `brain tick --no-ai`, on generated vaults of several sizes; then checks that a
# tick with nothing new changes no vault file except health.jsonl and last-tick-diff.md.
#
#   bench/vault.sh [ARCS...]                # default: 100 1000 10000
#
# Needs python3 (../shared/bench/gen_vault.py) and hyperfine. Builds the release binary.
# Vaults are generated once per size under $BENCH_DIR (default /tmp/brain-bench-vault) with
# --seed 7 and --now pinned, and their files dated a day back (a scan re-hashes files
# modified in the last 2 s: see crates/brain-vault/src/scan.rs). The clock is pinned with
# --now, so heat, and thus the tick's work, is the same on every run.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
gen="$here/../shared/bench/gen_vault.py"
now="2026-11-21T10:00:00Z"
dir=${BENCH_DIR:-/tmp/brain-bench-vault}
runs=${RUNS:-20}
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(100 1000 10000)

export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$here/target}
cargo build --release -q -p brain-memory --manifest-path "$here/Cargo.toml"
brain="$CARGO_TARGET_DIR/release/brain"

# relpath, SHA-256 and mtime of every file under $1.
fingerprint() { (cd "$1" && find . -type f -printf '%p %T@\n' | sort | while read -r path mtime; do
    echo "$path $(sha256sum "$path" | cut -c1-64) $mtime"; done); }

mkdir -p "$dir"
echo "machine: $(nproc) cores, $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
for n in "${sizes[@]}"; do
    pristine="$dir/vault-$n"
    if [ ! -d "$pristine" ]; then
        python3 "$gen" vault --out "$pristine" --n "$n" --seed 7 --now "${now%Z}+00:00" >/dev/null
        find "$pristine" -type f -exec touch -d '2026-11-20 10:00' {} +
    fi
    home="$dir/home-$n"
    vault="$dir/work-$n"
    mb=$(du -sm "$pristine" | cut -f1)
    files=$(find "$pristine" -name '*.md' | wc -l)
    echo "== $n arcs ($files markdown files, ${mb} MB on disk)"
    b() { echo "$brain --home $home --now $now $*"; }

    # Scan: cold (empty index) and with nothing changed.
    rm -rf "$home"
    "$brain" --home "$home" init >/dev/null
    hyperfine --warmup 1 --runs "$runs" --style basic --export-json "$dir/scan-cold-$n.json" \
        --prepare "rm -rf $home && $brain --home $home init >/dev/null && sync" \
        -n "vault scan, cold ($n)" "$(b vault scan --vault "$pristine")"
    "$brain" --home "$home" vault scan --vault "$pristine" >/dev/null
    hyperfine --warmup 3 --runs "$runs" --style basic -N --export-json "$dir/scan-warm-$n.json" \
        -n "vault scan, nothing changed ($n)" "$(b vault scan --vault "$pristine")"

    # Tick: the first one rewrites heat in most arcs, graduates the old ones, writes pointer
    # notes; the files it wrote are hashed once more by the next; from then on it is steady.
    rm -rf "$home" "$vault"
    cp -r "$pristine" "$vault"
    "$brain" --home "$home" init >/dev/null
    /usr/bin/time -f "first tick (writes the vault): %e s wall, %U s user, %S s system" \
        "$brain" --home "$home" --now "$now" tick --no-ai --vault "$vault" >/dev/null
    sleep 3
    "$brain" --home "$home" --now "$now" tick --no-ai --vault "$vault" >/dev/null
    sleep 3
    "$brain" --home "$home" --now "$now" tick --no-ai --vault "$vault" >/dev/null
    hyperfine --warmup 3 --runs "$runs" --style basic -N --export-json "$dir/tick-$n.json" \
        -n "tick --no-ai, steady state ($n)" "$(b tick --no-ai --vault "$vault")"
    "$brain" --home "$home" --now "$now" tick --no-ai --vault "$vault" --json \
        | python3 -c 'import json,sys; r=json.load(sys.stdin); steps=r["phases"][0]["steps"]; print("keeper steps (ms):", ", ".join("%s %.1f" % (s["name"], s["ms"]) for s in steps))'

    # A further tick with nothing new (one second later: heat depends on the clock, so a
    # later clock may legitimately move an arc across a heat boundary): only health.jsonl
    # and last-tick-diff.md may change.
    before=$(fingerprint "$vault")
    "$brain" --home "$home" --now "2026-11-21T10:00:01Z" tick --no-ai --vault "$vault" >/dev/null
    after=$(fingerprint "$vault")
    changed=$(diff <(echo "$before") <(echo "$after") | grep '^>' | cut -d' ' -f2 | tr '\n' ' ' || true)
    echo "further tick changed: ${changed:-nothing}"
done
