#!/usr/bin/env bash
# Whether two brain binaries answer the same, byte for byte (a refactor's check):
#
#   bench/same-output.sh BASE_BIN HEAD_BIN
#
# Runs the same deterministic commands (`--now` pinned) with each binary in its own
# throw-away home — the demo project's items and skills, a generated vault of 200 arcs and
# the demo transcripts — over the CLI (JSON and text), the hooks of every host, MCP over
# stdio and the HTTP API, and diffs what each printed. Figures that measure time (`ms`,
# `latency_ms`) and paths of the throw-away folders are masked. Exits 1 on any difference.
set -euo pipefail
base="$(realpath "${1:?usage: bench/same-output.sh BASE_BIN HEAD_BIN}")"
head="$(realpath "${2:?usage: bench/same-output.sh BASE_BIN HEAD_BIN}")"
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
NOW=2026-11-21T10:00:00Z
gen_vault="${GEN_VAULT:-$root/../shared/bench/gen_vault.py}"
python3 "$gen_vault" vault --out "$work/vault-src" --n 200 --seed 7 >/dev/null
mask() { # masks time figures and the run's folder
  python3 -c '
import re, sys
text = sys.stdin.read().replace(sys.argv[1], "<WORK>")
text = re.sub(r"(\"(?:ms|latency_ms|waited_ms|plan_ms|scan_ms)\"\s*:\s*)[0-9.e+-]+", r"\1<ms>", text)
text = re.sub(r"\b[0-9]+(\.[0-9]+)? ?ms\b", "<ms>", text)
sys.stdout.write(text)' "$1"
}
run_all() { # NAME BIN
  local name="$1" bin="$2" dir="$work/$1"
  mkdir -p "$dir/out"
  cp -R "$work/vault-src" "$dir/vault"
  # Dated a day back, as the generator's clock: a scan hashes again what changed in its last
  # 2 s, which would make the two runs' counts depend on when they ran.
  find "$dir/vault" -type f -exec touch -d '2026-11-20 10:00' {} +
  local home="$dir/home"
  b() { (cd "$root/examples/demo" && "$bin" --home "$home" --now "$NOW" "$@"); }
  {
    b init
    b import items.jsonl
    cp -R "$root/examples/demo/skills" "$home/skills"
    b list --json
    b list
    b search webhook --json
    b search "retry backoff" --limit 3
    b session-start --format text --task "fix the webhook signature bug"
    b session-start --format json --task "deploy the api" --top 3
    b brain
    b status --json || true
    b doctor --json || true
    for host in claude-code codex gemini cursor; do
      echo '{"session_id":"3f2a9c1e-7b4d-4e0a-9f6b-1c2d3e4f5a6b","cwd":"'"$root/examples/demo"'","prompt":"fix the webhook signature"}' \
        | b hook session-start --agent "$host"
      echo '{"session_id":"3f2a9c1e-7b4d-4e0a-9f6b-1c2d3e4f5a6b","cwd":"'"$root/examples/demo"'","prompt":"fix the webhook signature"}' \
        | b hook user-prompt-submit --agent "$host"
    done
    b vault init --vault "$dir/vault"
    b vault scan --vault "$dir/vault" --json
    b tick --vault "$dir/vault" --json --no-ai
    b tick --vault "$dir/vault" --json --no-ai
    printf '%s\n' \
      '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
      '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
      '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' \
      '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"brain_search","arguments":{"query":"webhook"}}}' \
      '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"brain_session_start","arguments":{"task":"fix the webhook"}}}' \
      | b mcp
  } > "$dir/out/all.txt" 2>&1 || true
  # The HTTP API: a server on a free loopback port, a few reads, then SIGTERM.
  local port
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  (cd "$root/examples/demo" && exec "$bin" --home "$home" --now "$NOW" serve --listen "127.0.0.1:$port" >/dev/null 2>&1) &
  local server=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
  for path in /healthz /openapi.json "/api/v2/items?limit=5" "/api/v2/search?q=webhook" \
      "/api/v2/session-start?task=fix+the+webhook" /api/v2/brain /api/v2/signals /api/v2/arcs /nope; do
    echo "== GET $path"
    curl -s -D - "http://127.0.0.1:$port$path" | grep -iv '^date:'
    echo
  done > "$dir/out/http.txt" 2>&1
  kill -TERM "$server"; wait "$server" 2>/dev/null || true
  # The vault as the ticks left it.
  (cd "$dir/vault" && find . -type f | sort | while read -r f; do echo "== $f"; cat "$f"; done) > "$dir/out/vault.txt"
}
run_all base "$base"
run_all head "$head"
status=0
for file in all.txt http.txt vault.txt; do
  if ! diff <(mask "$work/base" < "$work/base/out/$file" | sed "s#$work/base#<DIR>#g") \
            <(mask "$work/head" < "$work/head/out/$file" | sed "s#$work/head#<DIR>#g") > "$work/diff-$file"; then
    echo "DIFFERENT: $file"; head -40 "$work/diff-$file"; status=1
  else
    echo "same: $file ($(wc -l < "$work/base/out/$file") lines)"
  fi
done
exit $status
