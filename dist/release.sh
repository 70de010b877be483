#!/usr/bin/env bash
# brain's release artifacts, made by this one script (ARCHITECTURE.md says why not cargo-dist):
#
#   dist/release.sh build [--target TRIPLE]   the stripped binary (cargo profile `dist`), checked
#                                             against the size bound, archived as
#                                             brain-VERSION-TARGET.tar.gz with its .sha256, and
#                                             SHA256SUMS over every archive in the output folder
#   dist/release.sh npm                       the npm packages: one per archive in the output
#                                             folder (the binary) and the launcher, each packed
#                                             with `npm pack`
#   dist/release.sh formula                   the Homebrew formula from SHA256SUMS (needs all
#                                             four platforms' archives listed there)
#   dist/release.sh crates                    `cargo package --workspace` (every published crate
#                                             builds from its packaged source)
#
# Options: --out DIR (default dist/out), --target TRIPLE (default: this machine's).
# Platforms: x86_64-unknown-linux-gnu, aarch64-unknown-linux-gnu, aarch64-apple-darwin,
# x86_64-apple-darwin; .github/workflows/release.yml builds each on its own runner, then runs
# `npm` and `formula` over all four archives. Here (Linux x86_64) `build` and `npm` make this
# machine's artifacts, which .ci/run installs and runs (crates/brain/tests/it/release.rs).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

# The published names: the crate `brain` and the npm package `brain` are other projects'.
CRATE="brain-memory"
NPM="brain-memory"
# The binary must stay small enough to download on every install (issue 31).
MAX_BINARY_BYTES=$((35 * 1000 * 1000))
TARGETS="x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu aarch64-apple-darwin x86_64-apple-darwin"

command="${1:-}"
[ $# -gt 0 ] && shift
out="$root/dist/out"
target=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --target) target="$2"; shift 2 ;;
    *) echo "error: unknown argument $1" >&2; exit 1 ;;
  esac
done
mkdir -p "$out"
out="$(cd "$out" && pwd)"

# The workspace's version and repository ([workspace.package], the first of each).
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)"
repository="$(sed -n 's/^repository = "\(.*\)"$/\1/p' Cargo.toml | head -1)"
[ -n "$version" ] && [ -n "$repository" ] || { echo "error: no version or repository in Cargo.toml" >&2; exit 1; }

sha256() {
  if command -v sha256sum >/dev/null; then sha256sum "$1" | cut -d ' ' -f 1; else shasum -a 256 "$1" | cut -d ' ' -f 1; fi
}

# npm's names for a target's system and processor.
npm_platform() {
  case "$1" in
    x86_64-unknown-linux-gnu) echo "linux x64" ;;
    aarch64-unknown-linux-gnu) echo "linux arm64" ;;
    aarch64-apple-darwin) echo "darwin arm64" ;;
    x86_64-apple-darwin) echo "darwin x64" ;;
    *) echo "error: no npm platform for $1" >&2; return 1 ;;
  esac
}

build() {
  [ -n "$target" ] || target="$(rustc -vV | sed -n 's/^host: //p')"
  npm_platform "$target" >/dev/null
  echo "== cargo build --profile dist --target $target (a clean build takes minutes)" >&2
  cargo build --locked --profile dist --target "$target" -p "$CRATE" --bin brain
  local target_dir="${CARGO_TARGET_DIR:-$root/target}"
  local binary="$target_dir/$target/dist/brain"
  local bytes
  bytes="$(wc -c < "$binary" | tr -d ' ')"
  echo "binary: $binary, $bytes bytes (at most $MAX_BINARY_BYTES)" >&2
  if [ "$bytes" -gt "$MAX_BINARY_BYTES" ]; then
    echo "error: the binary is $bytes bytes, over the $MAX_BINARY_BYTES bound" >&2
    exit 1
  fi
  local name="brain-$version-$target"
  local stage
  stage="$(mktemp -d)"
  mkdir "$stage/$name"
  cp "$binary" "$stage/$name/brain"
  cp README.md CHANGELOG.md "$stage/$name/"
  # The same bytes from the same inputs: sorted names, no owners, the commit's time.
  local epoch="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}"
  if tar --version 2>/dev/null | grep -q GNU; then
    tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" -C "$stage" -cf - "$name" | gzip -9n > "$out/$name.tar.gz"
  else
    tar -C "$stage" -cf - "$name" | gzip -9n > "$out/$name.tar.gz"
  fi
  rm -rf "$stage"
  echo "$(sha256 "$out/$name.tar.gz")  $name.tar.gz" > "$out/$name.tar.gz.sha256"
  cat "$out"/brain-"$version"-*.tar.gz.sha256 | sort -k 2 > "$out/SHA256SUMS"
  cp dist/install.sh "$out/install.sh"
  echo "wrote $out/$name.tar.gz ($(wc -c < "$out/$name.tar.gz" | tr -d ' ') bytes), SHA256SUMS, install.sh" >&2
}

npm_packages() {
  local launcher="dist/npm/launcher"
  local stated
  stated="$(node -p "require('./$launcher/package.json').version")"
  if [ "$stated" != "$version" ]; then
    echo "error: $launcher/package.json says version $stated, the workspace $version" >&2
    exit 1
  fi
  rm -rf "$out/npm"
  mkdir -p "$out/npm"
  local found=0
  for archive in "$out"/brain-"$version"-*.tar.gz; do
    [ -e "$archive" ] || continue
    local name target_of platform os cpu dir
    name="$(basename "$archive" .tar.gz)"
    target_of="${name#brain-"$version"-}"
    platform="$(npm_platform "$target_of")"
    os="${platform% *}"
    cpu="${platform#* }"
    dir="$out/npm/$NPM-$os-$cpu"
    mkdir -p "$dir/bin"
    tar -xzf "$archive" -C "$dir/bin" --strip-components 1 "$name/brain"
    chmod 755 "$dir/bin/brain"
    cat > "$dir/package.json" <<JSON
{
  "name": "$NPM-$os-$cpu",
  "version": "$version",
  "description": "The brain binary for $os $cpu (installed by the $NPM package)",
  "license": "MIT OR Apache-2.0",
  "repository": "$repository",
  "os": ["$os"],
  "cpu": ["$cpu"],
  "files": ["bin/brain"],
  "preferUnplugged": true
}
JSON
    printf '# %s\n\nThe `brain` binary for %s %s, installed by the [%s](https://www.npmjs.com/package/%s) package.\n' \
      "$NPM-$os-$cpu" "$os" "$cpu" "$NPM" "$NPM" > "$dir/README.md"
    (cd "$dir" && npm pack --silent --pack-destination "$out/npm" >/dev/null)
    found=$((found + 1))
  done
  [ "$found" -gt 0 ] || { echo "error: no brain-$version-*.tar.gz in $out: run build first" >&2; exit 1; }
  cp -R "$launcher" "$out/npm/$NPM"
  cp README.md "$out/npm/$NPM/README.md"
  (cd "$out/npm/$NPM" && npm pack --silent --pack-destination "$out/npm" >/dev/null)
  echo "packed: $(cd "$out/npm" && ls ./*.tgz | tr '\n' ' ')" >&2
}

formula() {
  local sums="$out/SHA256SUMS"
  [ -f "$sums" ] || { echo "error: no $sums: run build first" >&2; exit 1; }
  local text
  text="$(cat dist/homebrew/formula.rb.in)"
  for each in $TARGETS; do
    local sum key
    sum="$(awk -v name="brain-$version-$each.tar.gz" '$2 == name { print $1 }' "$sums")"
    [ -n "$sum" ] || { echo "error: $sums lists no brain-$version-$each.tar.gz (the formula needs every platform)" >&2; exit 1; }
    key="$(echo "$each" | tr 'a-z-' 'A-Z_')"
    text="${text//@SHA256_${key}@/$sum}"
  done
  text="${text//@VERSION@/$version}"
  text="${text//@REPOSITORY@/$repository}"
  printf '%s\n' "$text" > "$out/$NPM.rb"
  echo "wrote $out/$NPM.rb" >&2
}

crates() {
  # Every published crate packaged and built from its packaged source (path dependencies are
  # resolved among the packaged crates).
  cargo package --workspace --locked
}

case "$command" in
  build) build ;;
  npm) npm_packages ;;
  formula) formula ;;
  crates) crates ;;
  *) sed -n '2,20p' "$0" >&2; exit 1 ;;
esac
