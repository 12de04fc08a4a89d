//! Issue 17: the `kith` Python package (`python/`), built and tested as a
//! Python developer gets it.
//!
//! One test, in steps: maturin (pinned, from PyPI) builds the wheel from
//! `python/Cargo.toml` with a target dir of its own (`<target>/python`:
//! this test runs while `cargo test` may hold the workspace's); a fresh
//! virtual environment gets the wheel installed by pip; pytest runs
//! `python/tests` with it — embedded mode, a `kith.Client` of a real
//! `kith serve` (this build's binary), asyncio, errors, the LangGraph and
//! LangChain adapters, `Memory.connect` on a throwaway PostgreSQL
//! (`kith_store::postgres::testing`), and the README's agent example. A failing step
//! fails the test with its output; nothing is skipped.
//!
//! maturin, pytest, LangGraph and LangChain come from the environment of
//! `kith_fetch::python` (`tests/python/package-requirements.txt`, made in
//! kith's cache on first use, or `KITH_TEST_PYTHON`); the fresh
//! environment sees them through a `.pth` file, so only the wheel is
//! installed anew each run.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use kith_fetch::python::{venv_python, PythonEnv};
use kith_store::postgres::testing::test_database;

/// maturin, pytest and the libraries the adapters target, pinned.
const ENV: PythonEnv<'static> = PythonEnv {
    name: "kith-package-maturin-1.16.0_langgraph-1.2.22_langchain-core-1.8.1",
    requirements: include_str!("python/package-requirements.txt"),
    imports: &["maturin", "pytest", "langgraph", "langchain_core"],
};

/// A step still running then is hung: killed, and the test fails. Not a
/// speed check: the first build compiles the engine (minutes on 2 cores).
const BUILD_LIMIT: Duration = Duration::from_secs(45 * 60);
const STEP_LIMIT: Duration = Duration::from_secs(15 * 60);

/// The repository's root.
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `command` to its end (or `limit`): whether it succeeded, and its
/// stdout then stderr.
fn run(command: &mut Command, limit: Duration) -> (bool, String) {
    let logs = tempfile::tempdir().unwrap();
    let (out_path, err_path) = (logs.path().join("out"), logs.path().join("err"));
    command
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .env("PYTHONDONTWRITEBYTECODE", "1");
    // Every server here is on loopback; a proxy would only get in the way.
    for var in ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"] {
        command.env_remove(var).env_remove(var.to_lowercase());
    }
    let line = format!("{command:?}");
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {line}: {e}"));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut output = std::fs::read_to_string(&out_path).unwrap_or_default();
    output.push_str(&std::fs::read_to_string(&err_path).unwrap_or_default());
    if status.is_none() {
        output.push_str(&format!("\n(killed: still running after {limit:?})"));
    }
    eprintln!(
        "{line}: {:.1} s",
        started.elapsed().as_secs_f64() // shown with --nocapture
    );
    (status.is_some_and(|s| s.success()), output)
}

/// Runs a step that must succeed; its output.
fn step(what: &str, command: &mut Command, limit: Duration) -> String {
    let (ok, output) = run(command, limit);
    assert!(ok, "{what} failed:\n{output}");
    output
}

/// `python`'s site-packages directory.
fn site_packages(python: &Path) -> PathBuf {
    let out = step(
        "finding site-packages",
        Command::new(python).args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ]),
        STEP_LIMIT,
    );
    PathBuf::from(out.trim())
}

/// The counts of pytest's closing line (`12 passed, 1 failed in 3.2s`).
fn pytest_count(output: &str, word: &str) -> usize {
    let last = output
        .lines()
        .rev()
        .find(|l| l.contains(" in ") && (l.contains("passed") || l.contains("failed")))
        .unwrap_or("");
    last.split(',')
        .filter_map(|part| {
            let mut words = part.split_whitespace().map(|w| w.trim_matches('='));
            let (n, w) = (words.find(|w| !w.is_empty())?, words.next()?);
            (w == word).then(|| n.parse::<usize>().ok()).flatten()
        })
        .sum()
}

#[test]
fn the_python_package_builds_installs_and_passes_its_tests() {
    let tools = ENV.python().unwrap_or_else(|e| panic!("{e}"));
    let repo = repo();
    let tmp = tempfile::tempdir().unwrap();

    // The wheel, with a target dir apart from the workspace's.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target dir")
        .join("python");
    let wheels = tmp.path().join("wheels");
    step(
        "maturin build",
        Command::new(&tools)
            // Not --locked: python/Cargo.lock follows the engine's
            // dependencies, and a crate the engine gains must not fail the
            // build (cargo adds it, keeping every other version).
            .args(["-m", "maturin", "build", "--auditwheel", "skip"])
            .arg("--manifest-path")
            .arg(repo.join("python/Cargo.toml"))
            .arg("--out")
            .arg(&wheels)
            .arg("--interpreter")
            .arg(&tools)
            .env("CARGO_TARGET_DIR", &target),
        BUILD_LIMIT,
    );
    let wheel: Vec<PathBuf> = std::fs::read_dir(&wheels)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(wheel.len(), 1, "{wheel:?}");
    let name = wheel[0].file_name().unwrap().to_string_lossy().into_owned();
    // One wheel for every CPython from 3.9 on.
    assert!(name.starts_with("kith-0.1.0-cp39-abi3-"), "{name}");

    // A fresh virtual environment with the wheel installed by pip; the
    // pinned tools are reachable through a .pth file.
    let venv = tmp.path().join("venv");
    step(
        "python3 -m venv",
        Command::new("python3").args(["-m", "venv"]).arg(&venv),
        STEP_LIMIT,
    );
    let python = venv_python(&venv);
    std::fs::write(
        site_packages(&python).join("kith-test-tools.pth"),
        format!("{}\n", site_packages(&tools).display()),
    )
    .unwrap();
    step(
        "pip install the wheel",
        Command::new(&python)
            .args(["-m", "pip", "install", "--no-deps", "--no-index"])
            .args(["--disable-pip-version-check", "--quiet"])
            .arg(&wheel[0]),
        STEP_LIMIT,
    );

    // A fresh database on the throwaway PostgreSQL server, for
    // `Memory.connect` (python/tests/test_postgres.py).
    let db = test_database();

    // pytest, from a directory outside the sources, so `import kith` is
    // the installed wheel.
    let (ok, output) = run(
        Command::new(&python)
            .args(["-m", "pytest", "-p", "no:cacheprovider", "-q", "-rfEs"])
            .arg(repo.join("python/tests"))
            .current_dir(tmp.path())
            .env("KITH_BIN", env!("CARGO_BIN_EXE_kith"))
            .env("KITH_TEST_PG_URL", db.url())
            .env_remove("KITH_PACK")
            .env_remove("KITH_OWNER")
            .env("PYTHONUNBUFFERED", "1"),
        STEP_LIMIT,
    );
    eprintln!("pytest:\n{output}");
    assert!(ok, "the package's pytest suite failed:\n{output}");
    let passed = pytest_count(&output, "passed");
    assert!(passed >= 40, "only {passed} passed:\n{output}");
    for word in ["skipped", "xfailed", "failed", "error", "errors"] {
        assert_eq!(pytest_count(&output, word), 0, "{word}:\n{output}");
    }
}

#[test]
fn pytest_counts_are_read_from_the_closing_line() {
    let out = "....\n=== 41 passed, 2 skipped, 1 xfailed in 12.30s ===\n";
    assert_eq!(pytest_count(out, "passed"), 41);
    assert_eq!(pytest_count(out, "skipped"), 2);
    assert_eq!(pytest_count(out, "failed"), 0);
    assert_eq!(pytest_count("3 failed, 5 passed in 1.0s", "failed"), 3);
}
