//! The release artifacts of `dist/release.sh`: the archive installed through `install.sh`
//! served from a loopback server (checksum verified, a corrupted archive refused), and the
//! npm packages installed offline from their tarballs (`npx brain-memory --version`,
//! `brain-memory session-start`). That test needs a release build and is ignored here:
//! `.ci/run` builds the artifacts and runs it with `BRAIN_TEST_DIST_DIR`. The versions and
//! names every artifact states are checked against the workspace always.

use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// The npm package and crate of the binary (`dist/release.sh`'s `NPM` and `CRATE`).
const PUBLISHED: &str = "brain-memory";
/// The bound on the stripped binary (issue 31).
const MAX_BINARY_BYTES: u64 = 35 * 1000 * 1000;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn workspace_package() -> (String, String) {
    let manifest: toml::Table = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap().parse().unwrap();
    let package = &manifest["workspace"]["package"];
    (package["version"].as_str().unwrap().to_string(), package["repository"].as_str().unwrap().to_string())
}

#[test]
fn every_artifact_states_the_workspace_version_and_names() {
    let (version, repository) = workspace_package();
    let install = std::fs::read_to_string(repo().join("dist/install.sh")).unwrap();
    assert!(install.contains(&format!("\nVERSION=\"{version}\"\n")), "dist/install.sh installs another version");
    assert!(install.contains(&format!("\nREPOSITORY=\"{repository}\"\n")), "dist/install.sh names another repository");
    let release = std::fs::read_to_string(repo().join("dist/release.sh")).unwrap();
    assert!(
        release.contains(&format!("\nCRATE=\"{PUBLISHED}\"\n"))
            && release.contains(&format!("\nNPM=\"{PUBLISHED}\"\n"))
    );
    let crate_manifest: toml::Table =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap().parse().unwrap();
    assert_eq!(crate_manifest["package"]["name"].as_str(), Some(PUBLISHED));
    let launcher: Value =
        serde_json::from_slice(&std::fs::read(repo().join("dist/npm/launcher/package.json")).unwrap()).unwrap();
    assert_eq!(launcher["name"], PUBLISHED);
    assert_eq!(launcher["version"], version.as_str());
    assert_eq!(launcher["repository"], repository.as_str());
    let platforms: Vec<(&String, &Value)> = launcher["optionalDependencies"].as_object().unwrap().iter().collect();
    let names: Vec<&str> = platforms.iter().map(|(name, _)| name.as_str()).collect();
    let expected: Vec<String> =
        ["linux-x64", "linux-arm64", "darwin-arm64", "darwin-x64"].iter().map(|p| format!("{PUBLISHED}-{p}")).collect();
    assert_eq!(names, expected);
    assert!(platforms.iter().all(|(_, pinned)| *pinned == version.as_str()), "{platforms:?}");
    let changelog = std::fs::read_to_string(repo().join("CHANGELOG.md")).unwrap();
    assert!(changelog.contains(&format!("\n## [{version}] — ")), "CHANGELOG.md has no entry for {version}");
}

/// A file server on loopback for `dir` (GET only), answering until the test process ends.
fn serve(dir: PathBuf) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let (head, _) = crate::read_http_request(&stream);
            let name = head.split_whitespace().nth(1).unwrap_or("/").trim_start_matches('/').to_string();
            let file =
                (!name.contains("..") && !name.is_empty()).then(|| std::fs::read(dir.join(&name)).ok()).flatten();
            let _ = match file {
                Some(bytes) => stream
                    .write_all(
                        format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", bytes.len())
                            .as_bytes(),
                    )
                    .and_then(|()| stream.write_all(&bytes)),
                None => stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
            };
        }
    });
    format!("http://127.0.0.1:{port}")
}

fn run(command: &mut Command) -> (Output, String) {
    let output = command.output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output, text)
}

/// `sh install.sh ARGS` as a user whose HOME is `home`, with a plain PATH.
fn install(script: &Path, home: &Path, args: &[&str]) -> (Output, String) {
    run(Command::new("sh")
        .arg(script)
        .args(args)
        .env_clear()
        .env("HOME", home)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin"))
}

#[test]
#[ignore = "needs dist/release.sh's artifacts (a release build): run by .ci/run with BRAIN_TEST_DIST_DIR"]
fn the_archive_installs_through_the_script_and_the_npm_package_runs_offline() {
    let dist =
        PathBuf::from(std::env::var("BRAIN_TEST_DIST_DIR").expect("BRAIN_TEST_DIST_DIR: dist/release.sh's output"));
    let (version, _) = workspace_package();
    let target = "x86_64-unknown-linux-gnu";
    let archive = format!("brain-{version}-{target}.tar.gz");
    assert!(dist.join(&archive).is_file(), "no {archive} in {}", dist.display());
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let script = dist.join("install.sh");
    let base = serve(dist.clone());

    // Into ~/.local/bin by default, checksum verified, with the PATH note.
    let (output, text) = install(&script, &home, &["--base-url", &base]);
    assert!(output.status.success(), "{text}");
    assert!(text.contains("checksum verified (sha256 "), "{text}");
    assert!(text.contains(&format!("note: {}/.local/bin is not on your PATH", home.display())), "{text}");
    let installed = home.join(".local/bin/brain");
    let (output, text) = run(Command::new(&installed).arg("--version"));
    assert!(output.status.success() && text.trim() == format!("brain {version}"), "{text}");
    let bytes = std::fs::metadata(&installed).unwrap().len();
    assert!(bytes <= MAX_BINARY_BYTES, "the binary is {bytes} bytes");
    eprintln!(
        "stripped binary: {bytes} bytes; archive: {} bytes",
        std::fs::metadata(dist.join(&archive)).unwrap().len()
    );

    // Or into a prefix.
    let prefix = work.path().join("prefix");
    let (output, text) = install(&script, &home, &["--base-url", &base, "--prefix", prefix.to_str().unwrap()]);
    assert!(output.status.success() && prefix.join("bin/brain").is_file(), "{text}");

    // A corrupted archive (one byte changed) is refused, and nothing is installed.
    let corrupt = work.path().join("corrupt");
    std::fs::create_dir_all(&corrupt).unwrap();
    for name in ["SHA256SUMS", "install.sh", archive.as_str()] {
        std::fs::copy(dist.join(name), corrupt.join(name)).unwrap();
    }
    let mut bytes = std::fs::read(corrupt.join(&archive)).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x55;
    std::fs::write(corrupt.join(&archive), bytes).unwrap();
    let refused = work.path().join("refused");
    let (output, text) =
        install(&script, &home, &["--base-url", &serve(corrupt), "--prefix", refused.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.contains(&format!("error: checksum mismatch for {archive}: expected ")), "{text}");
    assert!(text.contains("nothing was installed"), "{text}");
    assert!(!refused.exists(), "a refused install created {}", refused.display());

    // npm, offline: the launcher and this platform's package from their tarballs; the
    // registry is a closed port and the cache empty, so nothing can come from elsewhere.
    let npm_dir = dist.join("npm");
    let tarballs = [
        npm_dir.join(format!("{PUBLISHED}-linux-x64-{version}.tgz")),
        npm_dir.join(format!("{PUBLISHED}-{version}.tgz")),
    ];
    for tarball in &tarballs {
        assert!(tarball.is_file(), "no {}", tarball.display());
    }
    let node_tool = |program: &str, args: &[&str], cwd: &Path| {
        let mut command = Command::new(program);
        command
            .args(args)
            .current_dir(cwd)
            .env_clear()
            .env("HOME", &home)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("npm_config_cache", work.path().join("npm-cache"))
            .env("npm_config_registry", "http://127.0.0.1:9/")
            .env("npm_config_update_notifier", "false")
            .env("BRAIN_HOME", work.path().join("brain home"));
        run(&mut command)
    };
    let project = work.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let mut args = vec!["install", "--offline", "--no-audit", "--no-fund"];
    let paths: Vec<String> = tarballs.iter().map(|path| path.display().to_string()).collect();
    args.extend(paths.iter().map(String::as_str));
    let (output, text) = node_tool("npm", &args, &project);
    assert!(output.status.success(), "npm install: {text}");
    let (output, text) = node_tool("npx", &["--offline", PUBLISHED, "--version"], &project);
    assert!(output.status.success() && text.trim() == format!("brain {version}"), "npx {PUBLISHED} --version: {text}");
    let bin = project.join("node_modules/.bin").join(PUBLISHED);
    let brain_home = work.path().join("brain home");
    let (output, text) = run(Command::new(&bin).arg("--home").arg(&brain_home).arg("init").current_dir(&project));
    assert!(output.status.success(), "{text}");
    let (output, text) = run(Command::new(&bin)
        .arg("--home")
        .arg(&brain_home)
        .args(["session-start", "--format", "text"])
        .current_dir(&project)
        .env_clear()
        .env("HOME", &home));
    assert!(output.status.success() && !output.stdout.is_empty(), "{PUBLISHED} session-start: {text}");
    // A failing command's exit status comes through the launcher.
    let (output, _) = run(Command::new(&bin).args(["show", "nope"]).current_dir(&project));
    assert_eq!(output.status.code(), Some(1));

    // npm install -g, into a prefix of its own: `brain` on that prefix's PATH.
    let global = work.path().join("global");
    let mut args = vec!["install", "--global", "--offline", "--no-audit", "--no-fund", "--prefix"];
    let global_text = global.display().to_string();
    args.push(&global_text);
    args.extend(paths.iter().map(String::as_str));
    let (output, text) = node_tool("npm", &args, &project);
    assert!(output.status.success(), "npm install -g: {text}");
    let (output, text) = run(Command::new(global.join("bin/brain")).arg("--version"));
    assert!(output.status.success() && text.trim() == format!("brain {version}"), "{text}");
}

#[test]
fn the_homebrew_formula_names_every_platforms_archive_and_sum() {
    let (version, repository) = workspace_package();
    let out = tempfile::tempdir().unwrap();
    let targets =
        ["x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu", "aarch64-apple-darwin", "x86_64-apple-darwin"];
    let sums: String = targets
        .iter()
        .enumerate()
        .map(|(i, t)| format!("{}  brain-{version}-{t}.tar.gz\n", format!("{i}").repeat(64)))
        .collect();
    std::fs::write(out.path().join("SHA256SUMS"), &sums).unwrap();
    let formula = || {
        Command::new("bash")
            .arg(repo().join("dist/release.sh"))
            .args(["formula", "--out"])
            .arg(out.path())
            .output()
            .unwrap()
    };
    let output = formula();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let text = std::fs::read_to_string(out.path().join(format!("{PUBLISHED}.rb"))).unwrap();
    assert!(text.contains("class BrainMemory < Formula") && text.contains(&format!("version \"{version}\"")));
    for (i, target) in targets.iter().enumerate() {
        let url = format!("url \"{repository}/releases/download/v{version}/brain-{version}-{target}.tar.gz\"");
        let sum = format!("sha256 \"{}\"", format!("{i}").repeat(64));
        let at = text.find(&url).unwrap_or_else(|| panic!("no {url} in {text}"));
        assert!(text[at..].lines().nth(1).unwrap().trim() == sum, "{target}: {text}");
    }
    assert!(!text.lines().filter(|line| !line.trim_start().starts_with('#')).any(|line| line.contains('@')), "{text}");
    // A platform missing from the sums is an error, not a formula without it.
    std::fs::write(out.path().join("SHA256SUMS"), sums.lines().skip(1).collect::<Vec<_>>().join("\n")).unwrap();
    let output = formula();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("lists no brain-"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
