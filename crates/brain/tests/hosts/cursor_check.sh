#!/usr/bin/env bash
# Checks brain's Cursor hooks against the real Cursor agent CLI (`cursor-agent`), on a machine
# that has it. NOT run by .ci/run, and never run by us: Cursor's CLI is installed from
# cursor.com (`curl https://cursor.com/install | bash`), not from npm, and the CI machine
# reaches only npm, PyPI, crates.io and Debian; it also needs a Cursor account
# (CURSOR_API_KEY) and has no base-URL setting for a fake model server. brain's Cursor hooks
# are tested instead with documented payloads (crates/brain/tests/it/hosts.rs).
#
#   CURSOR_API_KEY=… crates/brain/tests/hosts/cursor_check.sh [path/to/brain]
#
# What it checks: `brain hook install --agent cursor --scope project` writes
# .cursor/hooks.json and .cursor/rules/brain.mdc; one `cursor-agent --print` run accepts them
# and runs brain's hooks (a session state appears in the brain home, hooks.log stays empty).
set -euo pipefail
brain="${1:-$(command -v brain)}"
command -v cursor-agent >/dev/null || { echo "cursor-agent is not installed (https://cursor.com/cli)" >&2; exit 1; }
[ -n "${CURSOR_API_KEY:-}" ] || { echo "CURSOR_API_KEY is required (a Cursor account)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
home="$work/brain home"
mkdir -p "$work/project"
cd "$work/project"
git init -q .
"$brain" --home "$home" init >/dev/null
"$brain" --home "$home" remember --title "Cursor check marker" --content "brain reached Cursor" >/dev/null
"$brain" --home "$home" hook install --agent cursor --scope project
test -f .cursor/hooks.json && test -f .cursor/rules/brain.mdc
grep -q "Cursor check marker" .cursor/rules/brain.mdc
cursor-agent --print --output-format text "In one line: what does the project memory say about the Cursor check marker?" | tee "$work/answer.txt"
sessions="$(ls "$home/hooks/sessions" 2>/dev/null | wc -l)"
[ "$sessions" -ge 1 ] || { echo "FAIL: no brain hook ran (no session state in $home/hooks/sessions)" >&2; exit 1; }
if [ -s "$home/logs/hooks.log" ]; then
  echo "FAIL: brain's hooks logged failures:" >&2
  cat "$home/logs/hooks.log" >&2
  exit 1
fi
grep -qi "reached cursor\|marker" "$work/answer.txt" || echo "note: the answer does not quote the memory (the model may paraphrase)"
echo "ok: Cursor accepted brain's hooks and ran them ($sessions session state(s))"
