//! Issue 18 item 4: the Dockerfile, its entrypoint and docker-compose.yml,
//! checked as far as a machine without a Docker daemon allows.
//!
//! No image is built here. What is checked instead: the build stage runs
//! the same `cargo build --release --locked -p kith-cli` as everywhere
//! else, on a Rust at least as new as the one testing this; every file the
//! build needs is inside what the Dockerfile copies; the binary needs no
//! library beyond glibc's, which the slim Debian image has; the image's
//! command is one `kith serve` accepts; the entrypoint script, run for real
//! with this binary, makes a pack or a PostgreSQL memory on first start,
//! serves it, keeps it on the next start and stops on SIGTERM; and the
//! compose file wires kith to its PostgreSQL service.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// One Dockerfile instruction: its keyword (upper case), its arguments, and
/// the index of the stage it is in.
#[derive(Debug)]
struct Instruction {
    keyword: String,
    args: String,
    stage: usize,
}

/// The Dockerfile's instructions, continuation lines joined and comments
/// dropped.
fn dockerfile() -> Vec<Instruction> {
    let text = std::fs::read_to_string(root().join("Dockerfile")).unwrap();
    let mut logical = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if current.is_empty() && (trimmed.is_empty() || trimmed.starts_with('#')) {
            continue;
        }
        match trimmed.strip_suffix('\\') {
            Some(part) => {
                current.push_str(part.trim());
                current.push(' ');
            }
            None => {
                current.push_str(trimmed);
                logical.push(std::mem::take(&mut current));
            }
        }
    }
    let mut stage = 0;
    let mut out = Vec::new();
    for line in logical {
        let (keyword, args) = line.split_once(' ').unwrap_or((&line, ""));
        let keyword = keyword.to_ascii_uppercase();
        if keyword == "FROM" && !out.is_empty() {
            stage += 1;
        }
        out.push(Instruction {
            keyword,
            args: args.trim().to_string(),
            stage,
        });
    }
    out
}

/// The arguments of the stage's instructions with `keyword`.
fn args_of<'a>(all: &'a [Instruction], stage: usize, keyword: &str) -> Vec<&'a str> {
    all.iter()
        .filter(|i| i.stage == stage && i.keyword == keyword)
        .map(|i| i.args.as_str())
        .collect()
}

/// `(major, minor)` of a version such as `1.95` or `1.95.0`.
fn major_minor(version: &str) -> (u32, u32) {
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap());
    (parts.next().unwrap(), parts.next().unwrap())
}

#[test]
fn the_build_stage_builds_what_the_workspace_builds() {
    let all = dockerfile();
    let from = args_of(&all, 0, "FROM");
    assert_eq!(from.len(), 1);
    // `rust:1.95-bookworm AS build`
    let image = from[0].split_whitespace().next().unwrap();
    let tag = image
        .strip_prefix("rust:")
        .expect("the build stage is a rust image");
    let (version, distro) = tag.split_once('-').expect("rust:X.Y-DISTRO");
    assert_eq!(distro, "bookworm", "build on the runtime image's Debian");
    assert!(from[0].ends_with(" AS build"), "{}", from[0]);
    let rustc = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
        .arg("--version")
        .output()
        .expect("rustc runs");
    let here = String::from_utf8(rustc.stdout).unwrap();
    let here = here.split_whitespace().nth(1).unwrap().to_string();
    assert!(
        major_minor(version) >= major_minor(&here),
        "the Dockerfile builds with Rust {version}, older than the {here} this is tested with: \
         raise FROM rust:{version}"
    );

    let workdir = args_of(&all, 0, "WORKDIR");
    assert_eq!(workdir, ["/src"]);
    assert_eq!(
        args_of(&all, 0, "RUN"),
        ["cargo build --release --locked -p kith-cli"],
        "the image must build as the docs and CI do"
    );
    // That package makes the binary the runtime stage copies.
    let cli = std::fs::read_to_string(root().join("crates/kith-cli/Cargo.toml")).unwrap();
    assert!(cli.contains("name = \"kith-cli\"") && cli.contains("[[bin]]\nname = \"kith\""));
    assert_eq!(
        args_of(&all, 1, "COPY")[0],
        "--from=build /src/target/release/kith /usr/local/bin/kith"
    );

    // Every COPY source exists and is not left out of the build context.
    let ignored: Vec<String> = std::fs::read_to_string(root().join(".dockerignore"))
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect();
    let mut copied = Vec::new();
    for copy in all.iter().filter(|i| i.keyword == "COPY") {
        if copy.args.starts_with("--from=") {
            continue;
        }
        let words: Vec<&str> = copy.args.split_whitespace().collect();
        for source in &words[..words.len() - 1] {
            let source = source.trim_start_matches("./");
            assert!(root().join(source).exists(), "COPY {source}: no such file");
            let top = source.split('/').next().unwrap();
            assert!(
                !ignored.iter().any(|i| i == top || i == source),
                "COPY {source} is excluded by .dockerignore"
            );
            copied.push(source.to_string());
        }
    }
    let inside_copied = |path: &str| {
        copied
            .iter()
            .any(|c| path == c || path.starts_with(&format!("{}/", c.trim_end_matches('/'))))
    };
    for needed in ["Cargo.toml", "Cargo.lock"] {
        assert!(inside_copied(needed), "{needed} is not copied");
    }
    // Every workspace member, and every file a crate's source includes.
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let members: Vec<&str> = manifest
        .lines()
        .map(str::trim)
        .filter_map(|l| l.strip_prefix('"')?.strip_suffix("\","))
        .collect();
    assert!(members.len() >= 9, "{members:?}");
    for member in members {
        assert!(
            inside_copied(member),
            "workspace member {member} is not copied"
        );
    }
    for (file, included) in includes(&root().join("crates")) {
        let rel = included
            .strip_prefix(root().canonicalize().unwrap())
            .unwrap_or_else(|_| panic!("{file:?} includes {included:?}, outside the repository"));
        assert!(
            inside_copied(&rel.to_string_lossy()),
            "{file:?} includes {rel:?}, which the Dockerfile does not copy"
        );
    }
}

/// `(file, included file)` for every `include_str!`/`include_bytes!` in the
/// crates' `src/` folders (tests are not built by the image).
fn includes(dir: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !["tests", "target", "benches", "examples"].contains(&name.as_str()) {
                out.extend(includes(&path));
            }
            continue;
        }
        if !name.ends_with(".rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for marker in ["include_str!(\"", "include_bytes!(\""] {
            for (at, _) in text.match_indices(marker) {
                let rest = &text[at + marker.len()..];
                let literal = &rest[..rest.find('"').unwrap()];
                let target = path.parent().unwrap().join(literal);
                let target = target
                    .canonicalize()
                    .unwrap_or_else(|e| panic!("{path:?} includes {literal}: {e}"));
                out.push((path.clone(), target));
            }
        }
    }
    out
}

#[test]
fn the_runtime_stage_runs_kith_serve_as_a_user_with_what_it_needs() {
    let all = dockerfile();
    assert_eq!(args_of(&all, 1, "FROM"), ["debian:bookworm-slim"]);
    let user = args_of(&all, 1, "USER");
    assert_eq!(user, ["kith"], "not root");
    assert!(args_of(&all, 1, "RUN")[0].contains("useradd --system"));
    assert_eq!(args_of(&all, 1, "VOLUME"), ["[\"/data\"]"]);
    let env = args_of(&all, 1, "ENV").join(" ");
    for setting in ["KITH_PACK=/data/", "KITH_CACHE_DIR=/data/"] {
        assert!(env.contains(setting), "{env}");
    }
    let entrypoint: Vec<String> =
        serde_json::from_str(args_of(&all, 1, "ENTRYPOINT")[0]).expect("exec form");
    assert_eq!(entrypoint, ["/usr/local/bin/kith-entrypoint"]);
    assert!(
        args_of(&all, 1, "COPY").contains(&"docker/entrypoint.sh /usr/local/bin/kith-entrypoint")
    );

    // The command's flags, and the one the entrypoint adds, are `kith
    // serve`'s; `init`'s flag the entrypoint uses is `init`'s.
    let cmd: Vec<String> = serde_json::from_str(args_of(&all, 1, "CMD")[0]).expect("exec form");
    assert_eq!(cmd[0], "serve");
    let help = |sub: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_kith"))
            .args([sub, "--help"])
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let serve_help = help("serve");
    let script = std::fs::read_to_string(root().join("docker/entrypoint.sh")).unwrap();
    let mut flags: Vec<&str> = cmd
        .iter()
        .map(String::as_str)
        .filter(|a| a.starts_with("--"))
        .collect();
    flags.push("--keys-file");
    assert!(script.contains("--keys-file \"$KITH_KEYS_FILE\""));
    for flag in flags {
        assert!(
            serve_help.contains(flag),
            "`kith serve` has no {flag}:\n{serve_help}"
        );
    }
    assert!(script.contains("kith init --embeddings \"$embeddings\""));
    assert!(help("init").contains("--embeddings"));

    // The binary built on this Debian (the runtime image's release) loads
    // only glibc's libraries, which debian:bookworm-slim has.
    let ldd = Command::new("ldd")
        .arg(env!("CARGO_BIN_EXE_kith"))
        .output()
        .expect("ldd runs");
    let libs = String::from_utf8(ldd.stdout).unwrap();
    let glibc = [
        "linux-vdso",
        "libc.so",
        "libm.so",
        "libgcc_s.so",
        "ld-linux",
        "libpthread",
        "libdl",
        "librt",
    ];
    for line in libs.lines().map(str::trim).filter(|l| !l.is_empty()) {
        assert!(
            glibc.iter().any(|g| line.contains(g)),
            "kith needs {line}, which debian:bookworm-slim may lack"
        );
    }
}

/// The entrypoint script run with this binary: its child and base URL.
struct Entrypoint {
    child: Child,
    url: String,
    /// The script's and the server's stderr.
    _log: tempfile::NamedTempFile,
}

impl Entrypoint {
    fn start(env: &[(&str, &str)]) -> Entrypoint {
        let bin_dir = Path::new(env!("CARGO_BIN_EXE_kith")).parent().unwrap();
        let path = format!(
            "{}:{}",
            bin_dir.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let log = tempfile::NamedTempFile::new().unwrap();
        let mut command = Command::new("sh");
        command
            .arg(root().join("docker/entrypoint.sh"))
            .args(["serve", "--bind", "127.0.0.1:0"])
            .env("PATH", path)
            .stdout(Stdio::piped())
            .stderr(log.reopen().unwrap());
        for var in [
            "KITH_DATABASE_URL",
            "KITH_API_KEYS",
            "KITH_OWNER",
            "KITH_LOG",
        ] {
            command.env_remove(var);
        }
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command.spawn().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| {
                let _ = child.wait();
                let stderr = std::fs::read_to_string(log.path()).unwrap_or_default();
                panic!("the entrypoint did not start a server: {line:?}\n{stderr}")
            })
            .trim_end_matches('/')
            .to_string();
        Entrypoint {
            child,
            url,
            _log: log,
        }
    }

    /// `METHOD path` with `key`; the status and JSON body.
    fn call(&self, method: &str, path: &str, key: &str, body: Option<Value>) -> (u16, Value) {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .proxy(None)
            .build()
            .new_agent();
        let url = format!("{}{path}", self.url);
        let auth = format!("Bearer {key}");
        let mut response = match body {
            Some(body) => agent
                .post(&url)
                .header("Authorization", &auth)
                .header("Content-Type", "application/json")
                .send(body.to_string())
                .unwrap(),
            None => {
                assert_eq!(method, "GET");
                agent
                    .get(&url)
                    .header("Authorization", &auth)
                    .call()
                    .unwrap()
            }
        };
        let text = response.body_mut().read_to_string().unwrap();
        (
            response.status().as_u16(),
            serde_json::from_str(&text).unwrap_or(Value::Null),
        )
    }

    /// SIGTERM, as `docker stop` sends it: kith is the script's process
    /// (`exec`), so it gets it and exits 0.
    #[cfg(unix)]
    fn stop(mut self) {
        // SAFETY: signalling our own child.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "kith exited {status:?} on SIGTERM");
                return;
            }
            assert!(Instant::now() < deadline, "kith ignored SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Entrypoint {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const KEY: &str = "entrypoint-key-0123456789abcdef";

/// Starts the entrypoint twice on the same memory (`env`): the first start
/// makes it and serves it; the second keeps what the first stored.
#[cfg(unix)]
fn first_and_second_start(env: &[(&str, &str)]) {
    let first = Entrypoint::start(env);
    let (status, receipt) = first.call(
        "POST",
        "/v1/events",
        KEY,
        Some(serde_json::json!({"content": "I moved to Lisbon in September."})),
    );
    assert_eq!(status, 201, "{receipt}");
    first.stop();
    let second = Entrypoint::start(env);
    let (status, stats) = second.call("GET", "/v1/stats", KEY, None);
    assert_eq!(status, 200, "{stats}");
    assert_eq!(
        stats["events"], 1,
        "the second start lost or remade the memory: {stats}"
    );
    let event = format!("/v1/events/{}", receipt["event_id"].as_str().unwrap());
    assert_eq!(second.call("GET", &event, KEY, None).0, 200);
    second.stop();
}

#[cfg(unix)]
#[test]
fn the_entrypoint_makes_a_pack_on_first_start_and_keeps_it() {
    let tmp = tempfile::tempdir().unwrap();
    let pack = tmp.path().join("memory.kith");
    let keys = tmp.path().join("keys");
    std::fs::write(&keys, format!("{KEY} alice\n")).unwrap();
    first_and_second_start(&[
        ("KITH_PACK", pack.to_str().unwrap()),
        ("KITH_EMBEDDINGS", "none"),
        ("KITH_KEYS_FILE", keys.to_str().unwrap()),
    ]);
    assert!(pack.join("manifest.json").is_file());
}

#[cfg(unix)]
#[test]
fn the_entrypoint_makes_a_postgres_memory_on_first_start_and_keeps_it() {
    let db = kith_store::postgres::testing::test_database();
    let tmp = tempfile::tempdir().unwrap();
    let keys = format!("{KEY}:alice");
    first_and_second_start(&[
        ("KITH_DATABASE_URL", db.url()),
        // Never used: the memory is in the database.
        (
            "KITH_PACK",
            tmp.path().join("unused.kith").to_str().unwrap(),
        ),
        ("KITH_EMBEDDINGS", "none"),
        ("KITH_API_KEYS", &keys),
    ]);
    assert!(!tmp.path().join("unused.kith").exists());
}

#[test]
fn the_compose_file_wires_kith_to_postgres_with_pgvector() {
    let compose = root().join("docker-compose.yml");
    let run = common::python::run_script("yaml_to_json.py", &[compose.to_str().unwrap()]);
    assert!(
        run.success,
        "docker-compose.yml does not parse:\n{}",
        run.output
    );
    let doc: Value = serde_json::from_str(&run.output).unwrap();
    let db = &doc["services"]["db"];
    let kith = &doc["services"]["kith"];
    assert!(
        db["image"]
            .as_str()
            .unwrap()
            .starts_with("pgvector/pgvector:pg16"),
        "{db}"
    );
    assert_eq!(kith["build"], ".", "kith is built from this Dockerfile");
    assert_eq!(kith["depends_on"]["db"]["condition"], "service_healthy");
    let url = kith["environment"]["KITH_DATABASE_URL"].as_str().unwrap();
    let (user, database) = (
        db["environment"]["POSTGRES_USER"].as_str().unwrap(),
        db["environment"]["POSTGRES_DB"].as_str().unwrap(),
    );
    assert!(url.starts_with(&format!("postgres://{user}:")), "{url}");
    assert!(url.ends_with(&format!("@db:5432/{database}")), "{url}");
    assert!(kith["environment"]["KITH_API_KEYS"].is_string());
    assert!(
        kith["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v.as_str().unwrap().ends_with(":/data")),
        "the memory's volume is not mounted at the image's /data"
    );
}
