#!/bin/sh
# brain's installer: downloads the release archive for this machine, checks its SHA-256
# against the release's SHA256SUMS, and installs the `brain` binary into ~/.local/bin (or
# DIR/bin with --prefix DIR, or DIR with --bin-dir DIR). Nothing is installed when the
# checksum does not match.
#
#   curl -fsSL https://example.invalid/brain/releases/download/v0.2.0/install.sh | sh
#   curl -fsSL …/install.sh | sh -s -- --prefix /usr/local --version 0.2.0
#
# Environment: BRAIN_VERSION, BRAIN_INSTALL_BASE_URL (where the archives and SHA256SUMS
# are), BRAIN_INSTALL_DIR (the bin folder), BRAIN_TARGET (a Rust target triple).
set -eu

# The release this script installs, and where releases live (the workspace's `version` and
# `repository`; a test keeps them equal to Cargo.toml).
VERSION="0.2.0"
REPOSITORY="https://example.invalid/brain"

version="${BRAIN_VERSION:-$VERSION}"
base_url="${BRAIN_INSTALL_BASE_URL:-}"
bin_dir="${BRAIN_INSTALL_DIR:-}"
target="${BRAIN_TARGET:-}"

say() { printf '%s\n' "$*" >&2; }
fail() { say "error: $*"; exit 1; }

usage() {
  say "usage: install.sh [--prefix DIR | --bin-dir DIR] [--version V] [--base-url URL] [--target TRIPLE]"
  say "installs brain into ~/.local/bin by default (DIR/bin with --prefix)"
}

while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) [ $# -ge 2 ] || fail "--prefix needs a folder"; bin_dir="$2/bin"; shift 2 ;;
    --bin-dir) [ $# -ge 2 ] || fail "--bin-dir needs a folder"; bin_dir="$2"; shift 2 ;;
    --version) [ $# -ge 2 ] || fail "--version needs a version"; version="${2#v}"; shift 2 ;;
    --base-url) [ $# -ge 2 ] || fail "--base-url needs a URL"; base_url="$2"; shift 2 ;;
    --target) [ $# -ge 2 ] || fail "--target needs a target triple"; target="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage; fail "unknown argument: $1" ;;
  esac
done

[ -n "$base_url" ] || base_url="$REPOSITORY/releases/download/v$version"
if [ -z "$bin_dir" ]; then
  [ -n "${HOME:-}" ] || fail "HOME is not set; pass --prefix DIR or --bin-dir DIR"
  bin_dir="$HOME/.local/bin"
fi

if [ -z "$target" ]; then
  os="$(uname -s)"
  arch="$(uname -m)"
  case "$arch" in
    x86_64|amd64) arch=x86_64 ;;
    aarch64|arm64) arch=aarch64 ;;
    *) fail "no brain release for the $arch processor (build from source: cargo install --locked brain-memory)" ;;
  esac
  case "$os" in
    Linux) target="$arch-unknown-linux-gnu" ;;
    Darwin)
      # A shell under Rosetta reports x86_64 on Apple silicon: the native build is better.
      if [ "$arch" = x86_64 ] && [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || echo 0)" = 1 ]; then
        arch=aarch64
      fi
      target="$arch-apple-darwin" ;;
    *) fail "no brain release for $os (build from source: cargo install --locked brain-memory)" ;;
  esac
fi

archive="brain-$version-$target.tar.gz"

download() { # URL FILE
  if command -v curl >/dev/null 2>&1; then
    curl --proto '=https,http' -fsSL --retry 2 -o "$2" "$1"
  elif command -v wget >/dev/null 2>&1; then
    wget -q -O "$2" "$1"
  else
    fail "neither curl nor wget is installed"
  fi
}

sha256() { # FILE
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d ' ' -f 1
  elif command -v openssl >/dev/null 2>&1; then
    openssl dgst -sha256 "$1" | sed 's/^.*= //'
  else
    fail "no SHA-256 tool (sha256sum, shasum or openssl) to check the download with"
  fi
}

tmp="$(mktemp -d 2>/dev/null || mktemp -d -t brain-install)"
trap 'rm -rf "$tmp"' EXIT INT TERM

say "downloading $base_url/$archive"
download "$base_url/$archive" "$tmp/$archive" || fail "could not download $base_url/$archive"
download "$base_url/SHA256SUMS" "$tmp/SHA256SUMS" || fail "could not download $base_url/SHA256SUMS"

expected="$(awk -v name="$archive" '$2 == name || $2 == "*" name { print $1; exit }' "$tmp/SHA256SUMS")"
[ -n "$expected" ] || fail "SHA256SUMS lists no $archive; nothing was installed"
actual="$(sha256 "$tmp/$archive")"
if [ "$actual" != "$expected" ]; then
  fail "checksum mismatch for $archive: expected $expected, got $actual; nothing was installed"
fi
say "checksum verified (sha256 $actual)"

tar -xzf "$tmp/$archive" -C "$tmp" || fail "could not unpack $archive"
binary="$tmp/brain-$version-$target/brain"
[ -f "$binary" ] || fail "$archive holds no brain-$version-$target/brain"

mkdir -p "$bin_dir" || fail "cannot create $bin_dir"
# Copied next to its place, then renamed over it: a running brain is never half replaced.
cp "$binary" "$bin_dir/.brain.install.$$" || fail "cannot write to $bin_dir"
chmod 755 "$bin_dir/.brain.install.$$"
mv -f "$bin_dir/.brain.install.$$" "$bin_dir/brain" || fail "cannot install $bin_dir/brain"
say "installed $("$bin_dir/brain" --version 2>/dev/null || echo brain) to $bin_dir/brain"

case ":${PATH:-}:" in
  *":$bin_dir:"*) say "next: brain setup   (in a repository: wires your agents, imports their memory files)" ;;
  *)
    say "note: $bin_dir is not on your PATH. Add it, e.g. to ~/.profile or your shell's rc file:"
    say "  export PATH=\"$bin_dir:\$PATH\""
    say "then: brain setup" ;;
esac
