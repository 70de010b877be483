#!/usr/bin/env node
// brain's npm launcher: runs the brain binary of this platform's package (an optional
// dependency npm installs only on its platform) with the same arguments, stdio, signals and
// exit status. The hooks and MCP entries `brain setup` writes name that binary itself, so
// no agent hook pays for Node's start-up.
"use strict";

const { spawn } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const NAME = require("../package.json").name;
const PLATFORMS = {
  "linux x64": "linux-x64",
  "linux arm64": "linux-arm64",
  "darwin arm64": "darwin-arm64",
  "darwin x64": "darwin-x64",
};

function fail(message) {
  process.stderr.write(`${NAME}: ${message}\n`);
  process.exit(1);
}

function binaryPath() {
  const platform = PLATFORMS[`${process.platform} ${process.arch}`];
  if (!platform) {
    fail(
      `no brain binary is published for ${process.platform} ${process.arch}; ` +
        "build it from source: cargo install --locked brain-memory",
    );
  }
  const pkg = `${NAME}-${platform}`;
  let manifest;
  try {
    manifest = require.resolve(`${pkg}/package.json`);
  } catch {
    fail(
      `the package ${pkg}, which carries the brain binary for this machine, is not installed ` +
        "(was it installed with --omit=optional or --no-optional?); reinstall without that flag",
    );
  }
  const binary = path.join(path.dirname(manifest), "bin", "brain");
  try {
    // A tarball unpacked without modes (some registries and mirrors) leaves it unexecutable.
    fs.accessSync(binary, fs.constants.X_OK);
  } catch {
    try {
      fs.chmodSync(binary, 0o755);
    } catch (error) {
      fail(`cannot run ${binary}: ${error.message}`);
    }
  }
  return binary;
}

const child = spawn(binaryPath(), process.argv.slice(2), { stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("error", (error) => fail(`cannot start brain: ${error.message}`));
child.on("exit", (code, signal) => {
  if (signal) {
    // The same death as the child's, so a caller sees what happened.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
