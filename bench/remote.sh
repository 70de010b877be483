#!/usr/bin/env bash
# Whole-process figures for remote mode (`--remote URL` / BRAIN_URL): the session-start hook
# and the CLI against a local `brain serve` on a 10k-item store, next to the same commands
# on the local store, and the hook's fail-open time with the server down.
# Usage: bench/remote.sh   (needs hyperfine; RUNS=N to change the 50 runs)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
command -v hyperfine >/dev/null || { echo "needs hyperfine (apt-get install hyperfine)" >&2; exit 1; }
cargo build -q --release -p brain-memory
cargo build -q --release -p brain-core --example gen_items
target="${CARGO_TARGET_DIR:-$root/target}/release"
runs="${RUNS:-50}"
work="$(mktemp -d)"
B="$target/brain"
"$target/examples/gen_items" 10000 7 bench > "$work/items.jsonl"
"$B" --home "$work/server" init >/dev/null
"$B" --home "$work/server" import "$work/items.jsonl" >/dev/null
mkdir -p "$work/client"   # the remote client's home: logs only, no store
"$B" --home "$work/server" --project bench serve --listen 127.0.0.1:0 2> "$work/serve.log" &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do grep -q 'listening on' "$work/serve.log" && break; sleep 0.05; done
url="$(grep -o 'http://[0-9.:]*' "$work/serve.log" | head -1)"
down="http://127.0.0.1:$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
echo '{"session_id":"bench","cwd":"/tmp","source":"startup"}' > "$work/hook.json"
median() { python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results']; [print(f\"{x['median']*1000:8.2f} ms median ({x['min']*1000:.2f}-{x['max']*1000:.2f})  {x['command']}\") for x in r]" "$1"; }
local_cmd="$B --home $work/server --project bench"
remote_cmd="$B --home $work/client --project bench --remote $url"
hyperfine --warmup 5 --runs "$runs" --export-json "$work/hook.json.out" \
  "$local_cmd hook session-start < $work/hook.json" \
  "$remote_cmd hook session-start < $work/hook.json" \
  "$B --home $work/client --project bench --remote $down hook session-start < $work/hook.json" >/dev/null
hyperfine -N --warmup 5 --runs "$runs" --export-json "$work/cli.json.out" \
  "$local_cmd session-start --format text --task 'retry logic for the webhook worker'" \
  "$remote_cmd session-start --format text --task 'retry logic for the webhook worker'" \
  "$local_cmd brain --json" \
  "$remote_cmd brain --json" \
  "$local_cmd search retry logic --json" \
  "$remote_cmd search retry logic --json" >/dev/null
median "$work/hook.json.out"
median "$work/cli.json.out"
# Same bytes either way (the hook, on the same clock: `--now` is forwarded).
NOW=2026-11-21T10:00:00Z
cmp <($local_cmd --now $NOW hook session-start < "$work/hook.json") \
    <($remote_cmd --now $NOW hook session-start < "$work/hook.json") && echo "hook output: identical local and remote"
tail -n 1 "$work/client/logs/hooks.log"
