#!/usr/bin/env bash
# The main job on the embedded default: a fresh SQLite home holding the example project
# (examples/demo: 33 memory items and two skills of a fictional `acme-api` service), then
# what an agent gets when a session starts, within its token budget. The budget report goes
# to stderr. Nothing outside a temp dir is written.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# Cargo's progress goes to stderr (a first build takes minutes); stdout is the demo's output.
echo "building brain (debug; the first build takes a few minutes)…" >&2
cargo build --manifest-path "$root/Cargo.toml" -p brain-memory
target="${CARGO_TARGET_DIR:-$root/target}"
home="$(mktemp -d)"
trap 'rm -rf "$home"' EXIT
brain() { "$target/debug/brain" --home "$home" --now 2026-11-21T10:00:00Z "$@"; }
cd "$root/examples/demo" # its .brain.toml names the project: acme-api
brain init >/dev/null
brain import items.jsonl >&2
cp -R skills "$home/skills"
brain session-start --format text --task "${1:-fix the webhook signature bug}"
