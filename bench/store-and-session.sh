#!/usr/bin/env bash
# Whole-process figures for the store, the brain document and session start (issues 2-4).
# Builds release binaries, generates 10k and 100k deterministic items (the assembler's
# generator, `crates/brain-core/examples/gen_items.rs`), imports them into throw-away homes
# and times the commands with hyperfine, printing medians. Usage: bench/store-and-session.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
command -v hyperfine >/dev/null || { echo "needs hyperfine (apt-get install hyperfine)" >&2; exit 1; }
cargo build -q --release -p brain-memory
cargo build -q --release -p brain-core --example gen_items
target="${CARGO_TARGET_DIR:-$root/target}/release"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
B="$target/brain"
NOW=2026-11-21T10:00:00Z
for n in 10000 100000; do
  "$target/examples/gen_items" "$n" 7 bench > "$work/items-$n.jsonl"
  "$B" --home "$work/h$n" init >/dev/null
  /usr/bin/time -f "import $n items (whole process): %e s wall, %M KB max RSS" \
    "$B" --home "$work/h$n" import "$work/items-$n.jsonl" >/dev/null
done
# A UUID, as every host sends (another id costs the redactor's compilation: safe_session_token).
echo '{"session_id":"3f2a9c1e-7b4d-4e0a-9f6b-1c2d3e4f5a6b","cwd":"/tmp"}' > "$work/hook.json"
median() { python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results']; [print(f\"{x['median']*1000:8.2f} ms median  {x['command']}\") for x in r]" "$1"; }
hyperfine -N --warmup 5 --runs 50 --export-json "$work/a.json" \
  "$B --home $work/h100000 --project bench list --limit 20" \
  "$B --home $work/h100000 --project bench search retry logic" \
  "$B --home $work/h10000 --project bench brain --now $NOW" \
  "$B --home $work/h100000 --project bench brain --now $NOW" \
  "$B --home $work/h100000 --project bench context --profile claude-md --now $NOW" \
  "$B --home $work/h10000 --project bench session-start --now $NOW --task 'retry logic for the webhook worker'" \
  "$B --home $work/h100000 --project bench session-start --now $NOW --task 'retry logic for the webhook worker'" >/dev/null
hyperfine --warmup 5 --runs 50 --export-json "$work/b.json" \
  "$B --home $work/h10000 --project bench hook session-start < $work/hook.json" >/dev/null
median "$work/a.json"
median "$work/b.json"
for n in 10000 100000; do
  /usr/bin/time -f "brain brain, $n items (whole process): %e s wall, %M KB max RSS" \
    "$B" --home "$work/h$n" --project bench brain --now "$NOW" >/dev/null
done
# The hook payload on 10k items: never over max_chars (9500) nor the token budget (3000).
"$B" --home "$work/h10000" --project bench hook session-start < "$work/hook.json" | python3 -c "
import json,sys; c=json.load(sys.stdin)['hookSpecificOutput']['additionalContext']
print(f'hook payload: {len(c)} characters (cap 9500), ~{-(-len(c)//4)} tokens (heuristic; budget 3000)')"
