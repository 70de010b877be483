#!/usr/bin/env bash
# Fleet figures (issue 14), PostgreSQL beside SQLite on the same data: `brain migrate` of a
# 100k-item home into PostgreSQL (its rate); GET /api/v2/brain with a matching If-None-Match
# through two PostgreSQL replicas together (one wrk per replica, at the same time) and through
# one SQLite server; acknowledged writes per second (POST /api/v2/items, wrk with a Lua script
# making every title unique); on 100k items: the first brain document of a fresh server, the
# session start's median over HTTP and the RSS per server.
#
#   bench/fleet.sh      # needs wrk (apt-get install wrk), psql and a PostgreSQL server
#   BRAIN_BENCH_PG=postgres://postgres@127.0.0.1:5432 bench/fleet.sh   # the server (this default)
#   BRAIN_BENCH_DB=brain_bench bench/fleet.sh   # the database (this default; created when
#                                               # missing), one schema per store size
#
# Stores come from the assembler's generator (crates/brain-core/examples/gen_items.rs, seed
# 7), as in bench/serve.sh. wrk, the servers and PostgreSQL share the machine's cores.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
command -v wrk >/dev/null || { echo "needs wrk (apt-get install wrk)" >&2; exit 1; }
command -v psql >/dev/null || { echo "needs psql (apt-get install postgresql-client)" >&2; exit 1; }
PG="${BRAIN_BENCH_PG:-postgres://postgres@127.0.0.1:5432}"
DB="${BRAIN_BENCH_DB:-brain_bench}"
psql "$PG/postgres" -qtAc 'select 1' >/dev/null || { echo "cannot reach PostgreSQL at $PG" >&2; exit 1; }
if [ "$(psql "$PG/postgres" -qtAc "SELECT 1 FROM pg_database WHERE datname = '$DB'")" != 1 ]; then
  psql "$PG/postgres" -qc "CREATE DATABASE $DB"
fi
cargo build -q --release -p brain-memory
cargo build -q --release -p brain-core --example gen_items
target="${CARGO_TARGET_DIR:-$root/target}/release"
B="${BRAIN_BIN:-$target/brain}"
work="$(mktemp -d)"
pids=()
schemas=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for schema in "${schemas[@]}"; do psql "$PG/$DB" -qc "DROP SCHEMA IF EXISTS $schema CASCADE" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
DURATION=${DURATION:-10s}
load() { cut -d' ' -f1-3 /proc/loadavg; }

# A fresh schema of the bench database; its URL is "$(store_url NAME)".
fresh_schema() {
  psql "$PG/$DB" -qc "DROP SCHEMA IF EXISTS $1 CASCADE"
  schemas+=("$1")
}
store_url() { echo "$PG/$DB?options=-c%20search_path%3D$1"; }

for n in 10000 100000; do
  "$target/examples/gen_items" "$n" 7 bench > "$work/items-$n.jsonl"
  "$B" --home "$work/h$n" init >/dev/null
  "$B" --home "$work/h$n" import "$work/items-$n.jsonl" >/dev/null 2>&1
done

# The replicas' own homes (their config; the items are in PostgreSQL).
for replica in r1 r2 r3; do "$B" --home "$work/$replica" init >/dev/null; done

echo "== brain migrate --to postgres (load average: $(load))"
for n in 10000 100000; do
  fresh_schema "fleet_$n"
  started=$(date +%s.%N)
  "$B" --home "$work/h$n" migrate --to "$(store_url "fleet_$n")" >/dev/null 2>&1
  ended=$(date +%s.%N)
  awk -v n="$n" -v s="$started" -v e="$ended" 'BEGIN {printf "%d items: %.2f s, %.0f items/s\n", n, e-s, n/(e-s)}'
done

# Starts a server (sets $url, $pid); $1 = home, then extra arguments (--database URL).
start() {
  local home="$1"; shift
  local log="$work/serve-$RANDOM.log"
  "$B" --home "$home" --project bench serve --listen 127.0.0.1:0 "$@" 2>"$log" &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 200); do grep -q "listening on" "$log" 2>/dev/null && break; sleep 0.05; done
  local address
  address="$(grep -o 'listening on http://[0-9.:]*' "$log" | cut -d/ -f3 || true)"
  if [ -z "$address" ]; then
    echo "brain serve did not start ($home $*):" >&2
    cat "$log" >&2
    exit 1
  fi
  url="http://$address"
}
stop() { kill -TERM "$@" 2>/dev/null || true; wait "$@" 2>/dev/null || true; }
etag_of() { curl -s -D - -o /dev/null "$1/api/v2/brain?project=bench" | tr -d '\r' | awk 'tolower($1)=="etag:" {print $2}'; }
rate() { grep -o 'Requests/sec: *[0-9.]*' | awk '{print $2}'; }

cat > "$work/post.lua" <<'LUA'
local n = 0
request = function()
  n = n + 1
  local body = string.format('{"title":"fleet write %d-%d","content":"written under wrk"}', math.random(1, 1e9), n)
  return wrk.format("POST", "/api/v2/items?project=bench", {["Content-Type"] = "application/json"}, body)
end
LUA

echo "== 10k items, GET /api/v2/brain with If-None-Match (304), $DURATION (load average: $(load))"
# SQLite: one server, wrk -t2 -c32.
start "$work/h10000"; s1=$pid; u1=$url
sqlite304=$(wrk -t2 -c32 -d"$DURATION" -H "If-None-Match: $(etag_of "$u1")" "$u1/api/v2/brain?project=bench" | rate)
echo "sqlite, one server:        $sqlite304 req/s"
sqlite_writes=$(wrk -t2 -c8 -d"$DURATION" -s "$work/post.lua" "$u1" | rate)
echo "sqlite, writes:            $sqlite_writes acknowledged writes/s (POST, 8 connections)"
stop "$s1"
# PostgreSQL: two replicas (each its own home, one database), one wrk each at the same time.
start "$work/r1" --database "$(store_url fleet_10000)"; p1=$pid; u1=$url
start "$work/r2" --database "$(store_url fleet_10000)"; p2=$pid; u2=$url
e1=$(etag_of "$u1"); e2=$(etag_of "$u2")
[ "$e1" = "$e2" ] || echo "note: the replicas' ETags differ ($e1 vs $e2)"
# One wrk per replica at the same time; prints the two rates. $1, $2: each one's arguments.
both() {
  wrk -t1 -d"$DURATION" $1 > "$work/w1" &
  local a=$!
  wrk -t1 -d"$DURATION" $2 > "$work/w2" &
  local b=$!
  wait "$a" "$b"
  echo "$(rate < "$work/w1") $(rate < "$work/w2")"
}
read -r r1 r2 < <(both "-c16 -H If-None-Match:$e1 $u1/api/v2/brain?project=bench" "-c16 -H If-None-Match:$e2 $u2/api/v2/brain?project=bench")
awk -v a="$r1" -v b="$r2" 'BEGIN {printf "postgres, two replicas:    %.0f req/s together (%.0f + %.0f)\n", a+b, a, b}'
read -r r1 r2 < <(both "-c4 -s $work/post.lua $u1" "-c4 -s $work/post.lua $u2")
awk -v a="$r1" -v b="$r2" 'BEGIN {printf "postgres, writes:          %.0f acknowledged writes/s together (POST, 4 connections per replica)\n", a+b}'
grep -h "Non-2xx" "$work/w1" "$work/w2" || true
stop "$p1" "$p2"

echo "== 100k items: first brain document, session start over HTTP, RSS (load average: $(load))"
rss() { awk '/VmHWM/ {printf "%d MB", $2/1024}' "/proc/$1/status"; }
# The median of 21 session starts: with the same task each time ($2 = same), or each with a
# task of its own ($2 = distinct: no two alike, so no recall is reused between them).
areas=(auth storage api cli hooks vault search dashboard mcp tokens config ci deploy billing frontend backend sync cache metrics docs logging)
tags=(perf security sqlite postgres ux refactor regression flaky migration testing windows)
session_p50() {
  for i in $(seq 0 20); do
    local task="retry%20logic%20for%20the%20webhook%20worker"
    [ "$2" = distinct ] && task="${areas[$i]}%20${tags[$((i % ${#tags[@]}))]}%20fix%20for%20the%20worker"
    curl -s -o /dev/null -w "%{time_total}\n" "$1/api/v2/session-start?project=bench&task=$task"
  done | sort -n | awk '{t[NR]=$1} END {printf "%.2f ms", t[int((NR+1)/2)]*1000}'
}
for backend in sqlite postgres; do
  if [ "$backend" = sqlite ]; then start "$work/h100000"; else start "$work/r3" --database "$(store_url fleet_100000)"; fi
  first=$(curl -s -o /dev/null -w "%{time_total}" "$url/api/v2/brain?project=bench")
  p50=$(session_p50 "$url" same)
  distinct=$(session_p50 "$url" distinct)
  curl -s -o /dev/null "$url/api/v2/search?project=bench&q=retry%20logic"
  printf "%-9s first brain document %.0f ms, session start p50 %s (same task), %s (21 distinct tasks), max RSS %s\n" \
    "$backend:" "$(awk -v t="$first" 'BEGIN {print t*1000}')" "$p50" "$distinct" "$(rss "$pid")"
  stop "$pid"
done
