#!/usr/bin/env bash
# AI tick benchmark (issue 16): the prompt's size and build time, the overhead of phases 2–5
# with a fake OpenAI-compatible server on loopback that answers instantly, and the token count
# per tick for the default caps, on generated vaults.
#
#   bench/ai-tick.sh [ARCS...]              # default: 1000 10000
#
# TOKENIZER=o200k|cl100k|heuristic sets the tokenizer of the timed runs (BRAIN_TOKENIZER; by
# default the config's, heuristic). BRAIN_BIN_BEFORE=PATH times that binary too, interleaved
# with BRAIN_BIN run by run (for before/after figures in one run).
#
# Needs python3 (../shared/bench/gen_vault.py; the fake server is python's http.server);
# hyperfine when installed (else the wall times are medians of interleaved runs timed by
# python). Builds the release binary (BRAIN_BIN=PATH uses that one instead). The fake answers
# every request at once with a valid
# document (no edges, merges or signal changes; an intent and a health score), so phases 4–5
# write intent.md, the AI health line, the diff's AI section and the audit record.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
gen=${GEN_VAULT:-$here/../shared/bench/gen_vault.py}
now="2026-11-21T10:00:00Z"
dir=${BENCH_DIR:-/tmp/brain-bench-ai}
runs=${RUNS:-20}
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000)

export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$here/target}
if [ -z "${BRAIN_BIN:-}" ]; then cargo build --release -q -p brain-memory --manifest-path "$here/Cargo.toml"; fi
brain=${BRAIN_BIN:-$CARGO_TARGET_DIR/release/brain}
mkdir -p "$dir"

# The fake server: prints its port, answers every POST at once.
cat >"$dir/fake.py" <<'PY'
import http.server, json, sys
ANSWER = json.dumps({"edges": [], "merges": [], "signals": [], "intent": "Benchmarking the tick.",
                     "health": {"score": 7, "reason": "fake"}})
class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        request = json.loads(body)
        prompt = sum(len(m.get("content", "")) for m in request.get("messages", []))
        reply = json.dumps({"choices": [{"message": {"role": "assistant", "content": ANSWER}, "finish_reason": "stop"}],
                            "usage": {"prompt_tokens": prompt // 4, "completion_tokens": len(ANSWER) // 4}}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
PY
coproc FAKE { python3 "$dir/fake.py"; }
trap 'kill $FAKE_PID 2>/dev/null || true' EXIT
read -r port <&"${FAKE[0]}"
echo "machine: $(nproc) cores, $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg); fake LLM on 127.0.0.1:$port"

for n in "${sizes[@]}"; do
    pristine="$dir/vault-$n"
    if [ ! -d "$pristine" ]; then
        python3 "$gen" vault --out "$pristine" --n "$n" --seed 7 --now "${now%Z}+00:00" >/dev/null
        find "$pristine" -type f -exec touch -d '2026-11-20 10:00' {} +
    fi
    home="$dir/home-$n"
    vault="$dir/work-$n"
    rm -rf "$home" "$vault"
    cp -r "$pristine" "$vault"
    "$brain" --home "$home" init >/dev/null
    printf '[ai]\nprovider = "openai"\nbase_url = "http://127.0.0.1:%s"\nmodel = "fake"\n' "$port" >"$home/config.toml"
    # Steady state first (the first ticks rewrite heat and graduate; see bench/vault.sh).
    for _ in 1 2 3; do "$brain" --home "$home" --now "$now" tick --no-ai --vault "$vault" >/dev/null; sleep 2; done
    echo "== $n arcs"
    for tokenizer in heuristic o200k; do
        BRAIN_TOKENIZER=$tokenizer "$brain" --home "$home" --now "$now" tick --vault "$vault" --json | python3 -c '
import json, sys
r = json.load(sys.stdin); ai = r["ai"]; p = ai["prompt"]
phases = {x["name"]: x["ms"] for x in r["phases"]}
steps = ", ".join("%s %.1f" % (s["name"], s["ms"]) for s in r["phases"][1]["steps"])
print("%-9s prompt %d tokens of %d (%d chars; %d of %d arcs, %d signals), built in %.1f ms (%s); phases 2-5: prompt %.1f, reason %.1f, apply %.1f, verify %.1f ms (sum %.1f); tokens in %d, out %d" % (
    sys.argv[1], p["tokens"], p["max_tokens"], p["chars"], p["arcs_shown"], p["arcs_total"], p["signals_shown"], p["build_ms"], steps,
    phases["prompt"], phases["reason"], phases["apply"], phases["verify"],
    phases["prompt"] + phases["reason"] + phases["apply"] + phases["verify"], ai["tokens_in"], ai["tokens_out"]))
' "$tokenizer"
    done
    if [ -n "${TOKENIZER:-}" ]; then export BRAIN_TOKENIZER=$TOKENIZER; fi
    if command -v hyperfine >/dev/null && [ -z "${BRAIN_BIN_BEFORE:-}" ]; then
        hyperfine --warmup 3 --runs "$runs" --style basic -N \
            -n "tick --no-ai ($n)" "$brain --home $home --now $now tick --no-ai --vault $vault" \
            -n "tick with the fake LLM ($n)" "$brain --home $home --now $now tick --vault $vault"
    else
        # No hyperfine (or two binaries): the commands interleaved, medians of wall time and of
        # phases 2-5.
        python3 - "$runs" "$home" "$now" "$vault" "$brain" ${BRAIN_BIN_BEFORE:+"$BRAIN_BIN_BEFORE"} <<'PYTIME'
import json, os, statistics, subprocess, sys, time
runs, home, now, vault, *bins = int(sys.argv[1]), *sys.argv[2:]
names = ["after", "before"] if len(bins) == 2 else [""]
walls = {(b, m): [] for b in names for m in ("no-ai", "ai")}; overhead = {b: [] for b in names}
for i in range(runs + 2):
    pairs = list(zip(names, bins))
    for name, brain in (pairs if i % 2 == 0 else pairs[::-1]):
        base = [brain, "--home", home, "--now", now, "tick", "--vault", vault, "--json"]
        for mode, extra in (("no-ai", ["--no-ai"]), ("ai", [])):
            t = time.perf_counter(); out = subprocess.run(base + extra, capture_output=True, check=True).stdout
            wall = (time.perf_counter() - t) * 1000
            if i < 2: continue
            walls[(name, mode)].append(wall)
            if mode == "ai":
                phases = json.loads(out)["phases"]
                overhead[name].append(sum(p["ms"] for p in phases[1:]))
med = statistics.median
tokenizer = os.environ.get("BRAIN_TOKENIZER", "config's")
for name, brain in zip(names, bins):
    o = overhead[name]
    print("%s%s tokenizer: tick --no-ai %.1f ms, with the fake LLM %.1f ms (medians of %d interleaved runs); phases 2-5 median %.1f ms (min %.1f, max %.1f)" % (
        name + " (" + brain + "), " if name else "", tokenizer, med(walls[(name, "no-ai")]), med(walls[(name, "ai")]), runs, med(o), min(o), max(o)))
if len(names) == 2:
    print("phases 2-5, before / after: %.2fx (ratio of medians)" % (med(overhead["before"]) / med(overhead["after"])))
PYTIME
    fi
done
