//! Runs the real `kith` binary against temporary packs.
#![allow(dead_code)]

pub mod python;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A temporary directory with a pack path inside it.
pub struct TestPack {
    pub tmp: tempfile::TempDir,
    pub pack: PathBuf,
}

impl TestPack {
    /// A directory with an initialised pack.
    pub fn new() -> TestPack {
        let tmp = tempfile::tempdir().expect("temp dir");
        let pack = tmp.path().join("t.kith");
        let t = TestPack { tmp, pack };
        t.ok(&["init", "--embeddings", "none"]);
        t
    }

    /// A file path inside the temporary directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }

    /// `kith --pack PACK --owner maya ARGS…`.
    pub fn cmd(&self, args: &[&str]) -> Command {
        kith_cmd(&self.pack, args)
    }

    /// Runs and returns the output, whatever the exit code.
    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().expect("kith runs")
    }

    /// Runs, asserts success, returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "kith {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8 stdout")
    }

    /// Runs, asserts failure, returns stderr.
    pub fn fails(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(!out.status.success(), "kith {args:?} should fail");
        String::from_utf8(out.stderr).expect("utf-8 stderr")
    }

    /// Runs with `--json` and parses stdout.
    pub fn json(&self, args: &[&str]) -> serde_json::Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        serde_json::from_str(&self.ok(&all)).expect("JSON output")
    }
}

/// `kith --pack PACK --owner maya ARGS…` with logging quiet.
pub fn kith_cmd(pack: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_kith"));
    c.arg("--pack")
        .arg(pack)
        .args(["--owner", "maya"])
        .args(args);
    c.env_remove("KITH_PACK")
        .env_remove("KITH_OWNER")
        .env_remove("KITH_LOG");
    c
}

/// `n` JSONL messages with source ids `{prefix}-{i}`.
pub fn jsonl(prefix: &str, n: usize) -> String {
    (0..n)
        .map(|i| {
            serde_json::json!({
                "content": format!("{prefix} message {i}: I moved to city {} last week.", i % 97),
                "role": if i % 2 == 0 { "user" } else { "assistant" },
                "session_id": format!("{prefix}-s{}", i / 100),
                "source_id": format!("{prefix}-{i}"),
                "event_time": "2025-05-01T10:00:00+02:00",
            })
            .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Event ids in the pack (via `kith export`).
pub fn exported_ids(t: &TestPack) -> Vec<String> {
    t.ok(&["export"])
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("export line is JSON");
            v["event_id"].as_str().expect("event_id").to_string()
        })
        .collect()
}

/// Random kill delays, seeded from the clock, so every run kills at
/// different moments.
pub struct KillTimer(kith::rng::Rng);

impl KillTimer {
    /// Seeded from the clock.
    pub fn new() -> Self {
        KillTimer(kith::rng::Rng::from_clock())
    }

    /// A delay between `min_ms` and `min_ms + spread_ms`.
    pub fn next(&mut self, min_ms: u64, spread_ms: u64) -> std::time::Duration {
        std::time::Duration::from_millis(min_ms + self.0.next_u64() % spread_ms)
    }
}

/// Runs `kith ARGS…` (which must print `{"committed": [ids]}` lines), sends
/// it SIGKILL after `delay` unless it finished, and returns the event ids it
/// acknowledged and whether it was killed.
pub fn run_and_kill(
    t: &TestPack,
    args: &[&str],
    delay: std::time::Duration,
) -> (Vec<String>, bool) {
    use std::io::{BufRead, BufReader};
    let mut child = t
        .cmd(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("kith starts");
    let stdout = child.stdout.take().expect("piped stdout");
    let reader = std::thread::spawn(move || {
        let mut acked = Vec::new();
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) {
                if let Some(ids) = v["committed"].as_array() {
                    acked.extend(ids.iter().filter_map(|i| i.as_str().map(String::from)));
                }
            }
        }
        acked
    });
    std::thread::sleep(delay);
    let killed = child.try_wait().expect("wait").is_none();
    if killed {
        child.kill().expect("SIGKILL");
    }
    child.wait().expect("reap");
    (reader.join().expect("reader"), killed)
}
