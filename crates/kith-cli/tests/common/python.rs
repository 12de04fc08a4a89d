//! The tests' Python (`kith_fetch::python`) and the scripts of
//! `tests/python/` run with it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use kith_fetch::python::PythonEnv;
use serde_json::Value;

/// The packages the scripts import, pinned.
const ENV: PythonEnv<'static> = PythonEnv {
    name: "kith-tests-mcp-2.3.0_openapi-spec-validator-0.9.0",
    requirements: include_str!("../python/requirements.txt"),
    imports: &["mcp", "openapi_spec_validator", "yaml"],
};

/// A script that has not finished by then is hung (a server that never
/// answers): it is killed and the test fails, rather than CI waiting for
/// its own limit. Not a speed check: the scripts take seconds.
const HANG_LIMIT: Duration = Duration::from_secs(300);

/// The interpreter, provisioned once per test process.
pub fn python() -> &'static Path {
    static PYTHON: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match PYTHON.get_or_init(|| ENV.python().map_err(|e| e.to_string())) {
        Ok(path) => path,
        Err(e) => panic!("{e}"),
    }
}

/// What a script did: whether it exited 0, and its stdout then stderr.
pub struct Run {
    pub success: bool,
    pub output: String,
}

/// Runs `tests/python/SCRIPT ARGS…` with the tests' Python.
pub fn run_script(script: &str, args: &[&str]) -> Run {
    let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python");
    let logs = tempfile::tempdir().unwrap();
    let (out_path, err_path) = (logs.path().join("out"), logs.path().join("err"));
    let mut command = Command::new(python());
    command
        .arg(scripts.join(script))
        .args(args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PYTHONUNBUFFERED", "1");
    // Every server here is on loopback; a proxy from the environment would
    // only get in the way.
    for var in [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ] {
        command.env_remove(var);
    }
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {} {script}: {e}", python().display()));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > HANG_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut output = std::fs::read_to_string(&out_path).unwrap_or_default();
    output.push_str(&std::fs::read_to_string(&err_path).unwrap_or_default());
    if status.is_none() {
        output.push_str(&format!("\n(killed: still running after {HANG_LIMIT:?})"));
    }
    Run {
        success: status.is_some_and(|s| s.success()),
        output,
    }
}

/// Runs a script that must succeed; its output.
pub fn script_passes(script: &str, args: &[&str]) -> String {
    let run = run_script(script, args);
    assert!(run.success, "{script} {args:?} failed:\n{}", run.output);
    // Shown with --nocapture: what the tool saw.
    eprintln!("{script}:\n{}", run.output);
    run.output
}

/// The JSON after `ok: ` on a script's last such line.
pub fn summary(output: &str) -> Value {
    let line = output
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("ok: "))
        .unwrap_or_else(|| panic!("no `ok:` line in:\n{output}"));
    serde_json::from_str(line).unwrap()
}
