#!/usr/bin/env bash
# `brain serve` figures (issue 6): wrk on loopback against GET /api/v2/brain on a 10k-item
# store, with a matching If-None-Match (304 from the generation-keyed cache) and without
# (200 with the cached body); then the RSS of serve on a 100k-item store after it has
# answered the brain document, a session start, a search and /metrics; then a normal
# client's latency while 400 partial-header sockets are held against a server under
# `ulimit -n 256` (issue 11 item 9).
#
#   bench/serve.sh            # needs wrk (apt-get install wrk) and python3; builds release binaries
#   BRAIN_BIN=/path/to/brain bench/serve.sh    # another build (e.g. a baseline) as the server
#
# Stores come from the assembler's generator (crates/brain-core/examples/gen_items.rs,
# seed 7), as in bench/store-and-session.sh. wrk runs on the same 2 cores as the server.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
command -v wrk >/dev/null || { echo "needs wrk (apt-get install wrk)" >&2; exit 1; }
cargo build -q --release -p brain-memory
cargo build -q --release -p brain-core --example gen_items
target="${CARGO_TARGET_DIR:-$root/target}/release"
B="${BRAIN_BIN:-$target/brain}"
work="$(mktemp -d)"
pids=()
cleanup() { for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-32}

for n in 10000 100000; do
  "$target/examples/gen_items" "$n" 7 bench > "$work/items-$n.jsonl"
  "$B" --home "$work/h$n" init >/dev/null
  "$B" --home "$work/h$n" import "$work/items-$n.jsonl" >/dev/null 2>&1
done

# Starts serve on a free port; sets $url and $pid.
start() {
  "$B" --home "$1" --project bench serve --listen 127.0.0.1:0 2>"$work/serve.log" &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 100); do grep -q "listening on" "$work/serve.log" 2>/dev/null && break; sleep 0.05; done
  url="http://$(grep -o 'listening on http://[0-9.:]*' "$work/serve.log" | cut -d/ -f3)"
}

echo "== GET /api/v2/brain, 10k items, wrk -t2 -c$CONNECTIONS -d$DURATION (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
start "$work/h10000"
etag=$(curl -s -D - -o /dev/null "$url/api/v2/brain?project=bench" | tr -d '\r' | awk 'tolower($1)=="etag:" {print $2}')
echo "-- with If-None-Match: $etag (304)"
wrk -t2 -c"$CONNECTIONS" -d"$DURATION" --latency -H "If-None-Match: $etag" "$url/api/v2/brain?project=bench" |
  grep -E "Requests/sec|  50%|  99%|Non-2xx"
echo "-- without If-None-Match (200, $(curl -s "$url/api/v2/brain?project=bench" | wc -c) bytes)"
wrk -t2 -c"$CONNECTIONS" -d"$DURATION" --latency "$url/api/v2/brain?project=bench" | grep -E "Requests/sec|  50%|  99%"
kill -TERM "$pid"; wait "$pid" 2>/dev/null || true

echo "== RSS of serve with a 100k-item store"
start "$work/h100000"
rss() { awk '/VmRSS|VmHWM/ {printf "%s %d MB  ", $1, $2/1024} END {print ""}' "/proc/$pid/status"; }
echo -n "idle:                   "; rss
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}'
for _ in $(seq 21); do
  curl -s -o /dev/null -w "%{time_total}\n" -X POST -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -d "$init" "$url/mcp"
done | sort -n | awk '{t[NR]=$1} END {printf "MCP initialize over /mcp (100k-item store): %.2f ms median of %d (curl, new connection each)\n", t[int((NR+1)/2)]*1000, NR}'
curl -s -o /dev/null -w "brain document: HTTP %{http_code} in %{time_total} s (first assembly)\n" "$url/api/v2/brain?project=bench"
curl -s -o /dev/null "$url/api/v2/session-start?project=bench&task=retry%20logic%20for%20the%20webhook%20worker"
curl -s -o /dev/null "$url/api/v2/search?project=bench&q=retry%20logic"
curl -s -o /dev/null "$url/metrics"
echo -n "after brain, session-start, search, metrics: "; rss

kill -TERM "$pid"; wait "$pid" 2>/dev/null || true

echo "== 400 partial-header sockets held against serve under ulimit -n 256 (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
(ulimit -n 256; exec "$B" --home "$work/h10000" --project bench serve --listen 127.0.0.1:0) 2>"$work/serve.log" &
pid=$!
pids+=("$pid")
for _ in $(seq 100); do grep -q "listening on" "$work/serve.log" 2>/dev/null && break; sleep 0.05; done
url="http://$(grep -o 'listening on http://[0-9.:]*' "$work/serve.log" | cut -d/ -f3)"
hostport="${url#http://}"
# Opens the sockets, sends half a request head on each, and holds them for 20 s.
python3 - "$hostport" <<'PY' &
import socket, sys, time
host, port = sys.argv[1].rsplit(":", 1)
held = []
for _ in range(400):
    s = socket.create_connection((host, int(port)))
    s.sendall(b"GET /api/v2/brain?project=bench HTTP/1.1\r\nHost: " + sys.argv[1].encode() + b"\r\nX-Slow: ")
    held.append(s)
time.sleep(20)
PY
holder=$!
sleep 2
for _ in $(seq 21); do
  curl -s -m 10 -o /dev/null -w "%{http_code} %{time_total}\n" "$url/api/v2/brain?project=bench" || true
done | sort -k2 -n | awk '{t[NR]=$2; ok+=($1==200)} END {printf "a normal client meanwhile: %d of %d answered 200, median %.2f ms, slowest %.2f ms\n", ok, NR, t[int((NR+1)/2)]*1000, t[NR]*1000}'
curl -s "$url/metrics" | grep -E '^brain_http_connections(_closed_total)?[ {]' | sed 's/^/  /'
kill "$holder" 2>/dev/null || true
