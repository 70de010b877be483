#!/usr/bin/env bash
# Build figures of this tree against another commit (the "before"), same machine, same run:
#
#   bench/build.sh BASE_COMMIT [VAULT_FILE_BASE VAULT_FILE_HEAD] [CLI_FILE]
#
# Checks both commits out into throw-away worktrees, each with its own cold target
# directory, and times, alternating base and head: a clean `cargo build --release
# --workspace`, a clean `cargo test --workspace --no-run` (the debug build of every test),
# and the debug rebuild of the binary after touching one file of the vault keeper and one
# of the CLI. Prints each figure and the load average; writes nothing in this tree.
set -euo pipefail
base="${1:?usage: bench/build.sh BASE_COMMIT [VAULT_FILE_BASE VAULT_FILE_HEAD] [CLI_FILE]}"
vault_base="${2:-crates/brain/src/vault/scan.rs}"
vault_head="${3:-crates/brain-vault/src/scan.rs}"
cli_file="${4:-crates/brain/src/cli/commands/list.rs}"
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
cleanup() {
  git -C "$root" worktree remove --force "$work/base" 2>/dev/null || true
  git -C "$root" worktree remove --force "$work/head" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
git -C "$root" worktree add --detach -q "$work/base" "$base"
git -C "$root" worktree add --detach -q "$work/head" HEAD
seconds() { # DIR COMMAND...: wall seconds of COMMAND run in DIR with DIR's own target
  local dir="$1"; shift
  local start end
  start=$(date +%s.%N)
  (cd "$dir" && CARGO_TARGET_DIR="$dir/target" "$@" >/dev/null 2>&1)
  end=$(date +%s.%N)
  python3 -c "print(f'{$end - $start:.1f}')"
}
report() { printf '%-44s base %7s s   head %7s s   load %s\n' "$1" "$2" "$3" "$(cut -d' ' -f1-3 /proc/loadavg)"; }
echo "base $(git -C "$root" rev-parse --short "$base"), head $(git -C "$root" rev-parse --short HEAD), $(nproc) cores"
b=$(seconds "$work/base" cargo build --release --workspace); h=$(seconds "$work/head" cargo build --release --workspace)
report "clean release build (--workspace)" "$b" "$h"
b=$(seconds "$work/base" cargo test --workspace --no-run); h=$(seconds "$work/head" cargo test --workspace --no-run)
report "clean test build (cargo test --no-run)" "$b" "$h"
# Rebuilds: the debug binary exists after the test build; a comment line changes the file.
for pass in 1 2; do
  echo "// touched $pass" >> "$work/base/$vault_base"; echo "// touched $pass" >> "$work/head/$vault_head"
  b=$(seconds "$work/base" cargo build --bin brain); h=$(seconds "$work/head" cargo build --bin brain)
  report "rebuild after touching the vault keeper ($pass)" "$b" "$h"
  echo "// touched $pass" >> "$work/base/$cli_file"; echo "// touched $pass" >> "$work/head/$cli_file"
  b=$(seconds "$work/base" cargo build --bin brain); h=$(seconds "$work/head" cargo build --bin brain)
  report "rebuild after touching the CLI ($pass)" "$b" "$h"
done
