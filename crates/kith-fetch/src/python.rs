//! A Python virtual environment with pinned packages, for tests (feature
//! `python-testing`).
//!
//! Some of kith's checks are only worth something when a standard tool
//! makes them: `openapi-spec-validator` on the OpenAPI document, the
//! official MCP Python SDK against the MCP server. [`PythonEnv::python`]
//! hands those tests an interpreter that has the packages:
//!
//! - `KITH_TEST_PYTHON` set ([`PYTHON_ENV`]): that interpreter, for machines
//!   that cannot reach PyPI; it must import the packages' modules.
//! - Otherwise a virtual environment in kith's cache,
//!   `<cache>/python/<name>-py<X.Y>-<hash>`, made on first use with
//!   `python3 -m venv` and `pip install -r` of the pinned requirements. It is
//!   built through [`crate::install_once`]: racing test processes build it
//!   once, and a folder that looks installed is complete. The folder's name
//!   changes with the requirements and the Python version, so a change of
//!   either makes a new environment instead of reusing a stale one.
//!
//! The environment is built in a temporary sibling and renamed into place.
//! A venv's interpreter finds its packages from its own path, so that works;
//! its console scripts (`bin/pip`, ...) keep the old path in their `#!`
//! line, so only `bin/python` is used (`python -m pip`).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use sha2::{Digest, Sha256};

use crate::{cache_root, install_once, FetchError};

/// The environment variable naming an existing interpreter that has the
/// packages, used instead of provisioning one.
pub const PYTHON_ENV: &str = "KITH_TEST_PYTHON";

/// The interpreter that makes the virtual environment.
const BASE_PYTHON: &str = "python3";

/// The file in an environment recording the requirements it was built
/// from; written last, so it also marks the environment complete.
const MARKER: &str = "kith-requirements.txt";

/// What a test needs from Python.
#[derive(Debug, Clone, Copy)]
pub struct PythonEnv<'a> {
    /// The start of the cache folder's name, naming the pinned packages
    /// (`mcp-2.3.0_openapi-spec-validator-0.9.0`).
    pub name: &'a str,
    /// A pip requirements file's text, every package pinned with `==`.
    pub requirements: &'a str,
    /// Modules that must import for an interpreter to be usable.
    pub imports: &'a [&'a str],
}

/// Why no interpreter could be had.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PythonError {
    /// `KITH_TEST_PYTHON` names an interpreter that cannot be used.
    #[error("{PYTHON_ENV}={} cannot be used: {source}", path.display())]
    Given {
        /// The interpreter named.
        path: PathBuf,
        /// What failed (running it, or importing a module).
        #[source]
        source: FetchError,
    },

    /// The virtual environment could not be made.
    #[error(
        "cannot provision the tests' Python environment {} (it needs python3 with its \
         venv module, e.g. `apt-get install python3-venv`, and pip reaching PyPI; or set \
         {PYTHON_ENV} to a Python that has these packages): {source}",
        dir.display()
    )]
    Provision {
        /// The environment's folder.
        dir: PathBuf,
        /// What failed.
        #[source]
        source: FetchError,
    },
}

impl PythonEnv<'_> {
    /// An interpreter with the packages: `KITH_TEST_PYTHON`, else the
    /// environment in kith's cache, provisioned first if need be (with one
    /// line on stderr saying so).
    pub fn python(&self) -> Result<PathBuf, PythonError> {
        if let Some(given) = std::env::var_os(PYTHON_ENV).filter(|v| !v.is_empty()) {
            let path = PathBuf::from(given);
            return match check_imports(&path, self.imports) {
                Ok(()) => Ok(path),
                Err(source) => Err(PythonError::Given { path, source }),
            };
        }
        let root = cache_root().ok_or(PythonError::Provision {
            dir: PathBuf::from("python"),
            source: FetchError::NoCacheDir,
        })?;
        self.provision(Path::new(BASE_PYTHON), &root.join("python"))
    }

    /// The environment made with `base` under `parent` (provisioned if need
    /// be); its interpreter.
    pub fn provision(&self, base: &Path, parent: &Path) -> Result<PathBuf, PythonError> {
        let failed = |dir: &Path, source| PythonError::Provision {
            dir: dir.to_path_buf(),
            source,
        };
        let version = python_version(base).map_err(|e| failed(parent, e))?;
        let dir = parent.join(self.folder_name(&version));
        let is_installed = |d: &Path| {
            venv_python(d).exists()
                && fs::read_to_string(d.join(MARKER)).is_ok_and(|r| r == self.requirements)
        };
        install_once(&dir, &is_installed, &mut |partial| {
            eprintln!(
                "kith tests: installing Python packages ({}) from PyPI into {} (first run only)",
                self.name,
                dir.display()
            );
            self.build(base, partial)
        })
        .map_err(|e| failed(&dir, e))?;
        Ok(venv_python(&dir))
    }

    /// `<name>-py<X.Y>-<first 12 hex digits of the requirements' SHA-256>`.
    fn folder_name(&self, version: &str) -> String {
        let digest = Sha256::digest(self.requirements.as_bytes());
        let hex: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
        format!("{}-py{version}-{hex}", self.name)
    }

    /// Makes the environment in `dir`: venv, pip, an import check, then the
    /// marker.
    fn build(&self, base: &Path, dir: &Path) -> Result<(), FetchError> {
        run(Command::new(base).arg("-m").arg("venv").arg(dir))?;
        let requirements = dir.join("requirements.txt");
        fs::write(&requirements, self.requirements)
            .map_err(|e| FetchError::io("cannot write", &requirements, e))?;
        run(Command::new(venv_python(dir))
            .args(["-m", "pip", "install", "--disable-pip-version-check"])
            .args(["--no-input", "--quiet", "--requirement"])
            .arg(&requirements))?;
        check_imports(&venv_python(dir), self.imports)?;
        let marker = dir.join(MARKER);
        fs::write(&marker, self.requirements)
            .map_err(|e| FetchError::io("cannot write", &marker, e))
    }
}

/// The interpreter inside a virtual environment.
pub fn venv_python(dir: &Path) -> PathBuf {
    if cfg!(windows) {
        dir.join("Scripts").join("python.exe")
    } else {
        dir.join("bin").join("python")
    }
}

/// `X.Y` of the interpreter `python`.
fn python_version(python: &Path) -> Result<String, FetchError> {
    let out = run(
        Command::new(python).args(["-c", "import sys; print('%d.%d' % sys.version_info[:2])"])
    )?;
    Ok(out.trim().to_string())
}

/// Fails unless `python` imports every module of `imports`.
fn check_imports(python: &Path, imports: &[&str]) -> Result<(), FetchError> {
    let script = format!("import {}", imports.join(", "));
    run(Command::new(python).arg("-c").arg(script)).map(drop)
}

/// Runs a command to its end; its stdout, or a [`FetchError::Command`] with
/// the exit status and the end of its output.
fn run(command: &mut Command) -> Result<String, FetchError> {
    let line = format!(
        "{} {}",
        command.get_program().to_string_lossy(),
        command
            .get_args()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ")
    );
    let failed = |reason: String| FetchError::Command {
        command: line.clone(),
        reason,
    };
    let out = command
        .stdin(Stdio::null())
        // Never write bytecode next to the sources a test runs.
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .map_err(|e| failed(e.to_string()))?;
    if !out.status.success() {
        let mut text = String::from_utf8_lossy(&out.stderr).into_owned();
        text.push_str(&String::from_utf8_lossy(&out.stdout));
        // pip's reason is at the end; its whole log would drown it.
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = lines[lines.len().saturating_sub(15)..].join("\n");
        return Err(failed(format!("{}:\n{tail}", out.status)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("kith-python-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Needs nothing from PyPI: no requirement, a standard-library import.
    const OFFLINE: PythonEnv<'static> = PythonEnv {
        name: "offline-test",
        requirements: "# nothing to install\n",
        imports: &["json"],
    };

    #[test]
    fn racing_provisions_build_one_environment_that_works() {
        let dir = scratch("race");
        let pythons: Vec<PathBuf> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..3)
                .map(|_| s.spawn(|| OFFLINE.provision(Path::new(BASE_PYTHON), &dir)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap().unwrap())
                .collect()
        });
        assert!(pythons.windows(2).all(|w| w[0] == w[1]), "{pythons:?}");
        // One environment, no partial folder left, and it runs.
        let entries: Vec<String> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !n.ends_with(".lock"))
            .collect();
        assert_eq!(entries.len(), 1, "{entries:?}");
        assert!(entries[0].starts_with("offline-test-py3."), "{entries:?}");
        check_imports(&pythons[0], &["json"]).unwrap();
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_missing_interpreter_or_module_is_one_clear_error() {
        let dir = scratch("missing");
        let err = OFFLINE
            .provision(Path::new("/nonexistent/python3"), &dir)
            .unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, PythonError::Provision { .. }), "{text}");
        assert!(text.contains("`/nonexistent/python3 -c"), "{text}");
        assert!(text.contains("KITH_TEST_PYTHON"), "{text}");

        let wants_missing_module = PythonEnv {
            imports: &["kith_no_such_module"],
            ..OFFLINE
        };
        let err = wants_missing_module
            .provision(Path::new(BASE_PYTHON), &dir)
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("No module named 'kith_no_such_module'"),
            "{err}"
        );
        // Nothing that looks installed is left behind.
        let left: Vec<String> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !n.ends_with(".lock"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
        let _ = fs::remove_dir_all(&dir);
    }
}
