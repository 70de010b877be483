#!/usr/bin/env bash
# Proof that no planted secret survives capture (issue 7): N generated sessions plus the
# fixtures with planted secrets (crates/brain/tests/data/transcripts), `brain capture`, the
# stop hook on a planted transcript, then a grep of the whole home (contents and file names)
# for every planted secret. Exit 1 on any leak.
#
#   bench/capture-secrets.sh [SESSIONS]     # default 1000
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
fixtures="$here/crates/brain/tests/data/transcripts"
now="2026-11-21T10:00:00Z"
n=${1:-1000}
dir=$(mktemp -d /tmp/brain-secrets-XXXXXX)

export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$here/target}
cargo build --release -q -p brain-memory --manifest-path "$here/Cargo.toml"
brain="$CARGO_TARGET_DIR/release/brain"

python3 "$here/../shared/bench/gen_vault.py" transcripts --out "$dir/projects" --sessions "$n" --seed 7 \
    --now "$now" >/dev/null
cp -r "$fixtures/projects/." "$dir/projects/"
python3 -c "import sys; sys.path.insert(0, sys.argv[1]); import make_fixtures; print('\n'.join(make_fixtures.PLANTED))" \
    "$fixtures" >"$dir/planted.txt"
echo "input: $(find "$dir/projects" -name '*.jsonl' | wc -l) transcripts, $(du -sh "$dir/projects" | cut -f1);" \
    "planted secrets found in it: $(grep -rohF -f "$dir/planted.txt" "$dir/projects" | wc -l)"

home="$dir/home"
"$brain" --home "$home" init >/dev/null
"$brain" --home "$home" --now "$now" capture --projects-dir "$dir/projects" >/dev/null
printf '{"session_id":"api-one","transcript_path":"%s","cwd":"/w/api"}' "$dir/projects/-w-api/api-one.jsonl" |
    "$brain" --home "$home" --now "$now" hook stop
"$brain" --home "$home" --now "$now" extract --json --projects-dir "$dir/projects" >"$home/extract-stdout.json"

files=$(find "$home" -type f | wc -l)
arcs=$(find "$home/vault/clusters" -name '*.md' | wc -l)
if grep -rlF -f "$dir/planted.txt" "$home" || find "$home" | grep -F -f "$dir/planted.txt"; then
    echo "LEAK: a planted secret is under $home" >&2
    exit 1
fi
echo "ok: no planted secret in the $files files (contents and names) under $home ($arcs arcs)"
echo "redaction markers written: $(grep -roh 'REDACTED:[a-z-]*' "$home" | sort | uniq -c | tr '\n' ' ')"
