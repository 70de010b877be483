#!/bin/bash
# offline.sh NAME PORT cmd... — runs cmd in a fresh network namespace (no network but
# loopback) with the fake model server on 127.0.0.1:PORT; request logs in logs/NAME.model.log
# and logs/NAME.bodies.jsonl (appended).
R=/work/research30
NAME=$1; PORT=$2; shift 2
# The one fake model server, shared with brain's host tests.
export FM=${FAKE_MODEL:-$(cd "$(dirname "$0")/../../.." && pwd)/crates/brain/tests/hosts/fake_model.py}
exec unshare -rn bash -c '
R=$0; NAME=$1; PORT=$2; shift 3
ip link set lo up
python3 "$FM" --port $PORT --log $R/logs/$NAME.model.log --bodies $R/logs/$NAME.bodies.jsonl --forever > $R/logs/$NAME.server.out 2>&1 &
SRV=$!
for i in $(seq 50); do grep -q listening $R/logs/$NAME.server.out 2>/dev/null && break; sleep 0.1; done
"$@"; rc=$?
kill $SRV
exit $rc
' "$R" "$NAME" "$PORT" -- "$@"
