#!/usr/bin/env bash
# Whole-process figures for `brain sync` against a local `brain serve` (SQLite behind it):
#  1. a first sync of 10k new items (push from A), and the same 10k pulled by a fresh B;
#  2. an incremental sync with 10 changes in a 100k-item home (goal: <= 100 ms on loopback);
#  3. the session-start hook median with and without [sync] configured (must be unchanged:
#     the hook never syncs).
# Usage: bench/sync.sh   (needs hyperfine and sqlite3; RUNS=N to change the 30 runs;
#        NO_BUILD=1 to use target/release as it is)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
command -v hyperfine >/dev/null || { echo "needs hyperfine (apt-get install hyperfine)" >&2; exit 1; }
if [ -z "${NO_BUILD:-}" ]; then
  cargo build -q --release -p brain-memory
  cargo build -q --release -p brain-core --example gen_items
fi
target="${CARGO_TARGET_DIR:-$root/target}/release"
runs="${RUNS:-30}"
work="$(mktemp -d)"
B="$target/brain"
export BRAIN_TOKEN=bench-sync-token-0123456789
"$B" --home "$work/server" init >/dev/null
printf '[[serve.tokens]]\nname = "bench"\ntoken = "%s"\nwrite = ["*"]\n' "$BRAIN_TOKEN" > "$work/server/config.toml"
"$B" --home "$work/server" --project bench serve --listen 127.0.0.1:0 2> "$work/serve.log" &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do grep -q 'listening on' "$work/serve.log" && break; sleep 0.05; done
url="$(grep -o 'http://[0-9.:]*' "$work/serve.log" | head -1)"
home() { "$B" --home "$work/$1" init >/dev/null; printf '[sync]\nurl = "%s"\nscopes = ["*"]\n[remote]\ntimeout_ms = 60000\n' "$url" > "$work/$1/config.toml"; }
ms() { python3 -c "import sys,time; print(f'{(time.time()-float(sys.argv[1]))*1000:8.1f} ms  {sys.argv[2]}')" "$@"; }

echo "== 1. first sync of 10k new items"
"$target/examples/gen_items" 10000 7 bench > "$work/10k.jsonl"
home a; "$B" --home "$work/a" import "$work/10k.jsonl" >/dev/null
t=$(date +%s.%N); "$B" --home "$work/a" sync --json > "$work/a.json"; ms "$t" "push 10k (A → server)"
home b
t=$(date +%s.%N); "$B" --home "$work/b" sync --json > "$work/b.json"; ms "$t" "pull 10k (server → fresh B)"
python3 -c "import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); print(f'         pushed {a[\"pushed\"]}, pulled {b[\"pulled\"]}')" "$work/a.json" "$work/b.json"

echo "== 2. incremental sync: 10 changes in a 100k-item home"
# The state right after the first sync of a 100k-item home, set up directly (a first sync of
# 100k items through the server is part 1 ten times over): the server and the home import
# the same items; the home's log is then marked acknowledged at the server's versions and
# its pull cursor set to the server's last change.
"$target/examples/gen_items" 100000 11 bench > "$work/100k.jsonl"
"$B" --home "$work/server" import "$work/100k.jsonl" >/dev/null
home big; "$B" --home "$work/big" import "$work/100k.jsonl" >/dev/null
last=$(sqlite3 "$work/server/brain.db" "SELECT max(seq) FROM changes")
sqlite3 "$work/big/brain.db" "UPDATE changes SET pending = 0; INSERT INTO sync_base (item_id, version) SELECT item_id, version FROM changes; INSERT INTO sync_cursors (name, value) VALUES ('pull:$url', $last);"
t=$(date +%s.%N); "$B" --home "$work/big" sync --json > "$work/inc0.json"; ms "$t" "sync with nothing to move (100k home)"
cat "$work/inc0.json"; echo
for round in 1 2 3; do
  for i in $(seq 10); do
    "$B" --home "$work/big" --project bench remember --title "change $round $i" --content "one of ten changes" >/dev/null
  done
  t=$(date +%s.%N); "$B" --home "$work/big" sync --json > "$work/inc.json"; ms "$t" "incremental sync pushing 10 local changes (100k home), round $round"
  cat "$work/inc.json"; echo
  for i in $(seq 10); do
    "$B" --home "$work/a" --project bench remember --title "remote $round $i" --content "pulled change" >/dev/null
  done
  "$B" --home "$work/a" sync >/dev/null
  t=$(date +%s.%N); "$B" --home "$work/big" sync --json > "$work/pull.json"; ms "$t" "incremental sync pulling 10 server changes (100k home), round $round"
  cat "$work/pull.json"; echo
done
# Repeated runs: each prepared by 10 fresh changes (local ones for the push, ones synced by A
# for the pull), so every measured sync moves exactly 10 changes.
printf '#!/bin/sh\nfor i in 1 2 3 4 5 6 7 8 9 10; do "%s" --home "%s" --project bench remember --title "change $$ $i $(date +%%s%%N)" --content "one of ten changes" >/dev/null; done\n' "$B" "$work/big" > "$work/ten-local.sh"
printf '#!/bin/sh\nfor i in 1 2 3 4 5 6 7 8 9 10; do "%s" --home "%s" --project bench remember --title "remote $$ $i $(date +%%s%%N)" --content "pulled change" >/dev/null; done\n"%s" --home "%s" sync >/dev/null\n' "$B" "$work/a" "$B" "$work/a" > "$work/ten-remote.sh"
chmod +x "$work/ten-local.sh" "$work/ten-remote.sh"
hyperfine -N --runs "$runs" --prepare "$work/ten-local.sh" --export-json "$work/push10.json" "$B --home $work/big sync" >/dev/null
hyperfine -N --runs "$runs" --prepare "$work/ten-remote.sh" --export-json "$work/pull10.json" "$B --home $work/big sync" >/dev/null
for f in push10 pull10; do
  python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results'][0]; print(f\"{r['median']*1000:8.1f} ms median ({r['min']*1000:.1f}-{r['max']*1000:.1f})  incremental sync, 10 changes ({sys.argv[2]}), 100k home\")" "$work/$f.json" "$f"
done
hyperfine -N --warmup 3 --runs "$runs" --export-json "$work/steady.json" "$B --home $work/big sync" >/dev/null
python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results'][0]; print(f\"{r['median']*1000:8.1f} ms median ({r['min']*1000:.1f}-{r['max']*1000:.1f})  sync with nothing to move (100k home)\")" "$work/steady.json"

echo "== 3. session-start hook, with and without [sync] (the same home, copied)"
echo '{"session_id":"bench","cwd":"/tmp","source":"startup"}' > "$work/hook.json"
"$B" --home "$work/plain" init >/dev/null; "$B" --home "$work/plain" import "$work/10k.jsonl" >/dev/null
cp -r "$work/plain" "$work/synced"
printf '[sync]\nurl = "%s"\n' "$url" > "$work/synced/config.toml"
hyperfine --warmup 5 --runs "$runs" --export-json "$work/hook.out" \
  "$B --home $work/plain --project bench hook session-start < $work/hook.json" \
  "$B --home $work/synced --project bench hook session-start < $work/hook.json" >/dev/null
python3 -c "import json,sys; [print(f\"{x['median']*1000:8.2f} ms median ({x['min']*1000:.2f}-{x['max']*1000:.2f})  {x['command'].split('--home ')[1].split()[0].rsplit('/',1)[1]}\") for x in json.load(open(sys.argv[1]))['results']]" "$work/hook.out"
echo "(plain: no [sync]; synced: [sync] url set; otherwise the same home)"
