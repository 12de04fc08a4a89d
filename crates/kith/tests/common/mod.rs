//! Helpers shared by the facade's end-to-end tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use kith::{EventInput, Memory, OwnerId};

/// A fresh pack in a temporary directory (kept alive by the returned guard).
pub fn pack() -> (tempfile::TempDir, PathBuf, Memory) {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().join("test.kith");
    let memory = Memory::init(&dir).expect("init pack");
    (tmp, dir, memory)
}

/// A user message of `owner`.
pub fn msg(owner: &str, content: &str) -> EventInput {
    EventInput {
        owner_id: Some(owner.into()),
        ..EventInput::new("user", content)
    }
}

/// Everything observable about an owner's memory: the export text and the
/// counts. Two equal snapshots mean nothing changed.
pub fn snapshot(memory: &Memory, owner: &str) -> (String, kith::Stats, kith::Stats) {
    let mut out = Vec::new();
    memory
        .export_jsonl(None, &mut out)
        .expect("export succeeds");
    let owner = OwnerId::new(owner).expect("owner");
    (
        String::from_utf8(out).expect("utf-8"),
        memory.stats(Some(&owner)).expect("stats"),
        memory.stats(None).expect("stats"),
    )
}

/// Bytes of every file in a directory, sorted by name.
pub fn dir_bytes(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| {
            let e = e.expect("entry");
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap_or_default(),
            )
        })
        .collect();
    files.sort();
    files
}
