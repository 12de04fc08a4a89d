//! Issue 20, the defects the attack run found in the `kith` binary: an
//! export line stripped of its checksum (item 4), an import crossing owners
//! (item 5), and extraction failures hidden behind exit status 0 (item 9).
//! Each runs the real binary on a temporary pack.

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;

use common::TestPack;

/// An export of two messages by maya, as JSON lines.
fn exported(t: &TestPack) -> Vec<serde_json::Value> {
    let file = t.path("in.jsonl");
    std::fs::write(&file, common::jsonl("a", 2)).unwrap();
    t.ok(&["import", file.to_str().unwrap()]);
    t.ok(&["export"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn write_lines(t: &TestPack, name: &str, lines: &[serde_json::Value]) -> String {
    let path = t.path(name);
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn an_event_id_without_its_checksum_is_refused_and_nothing_is_written() {
    let source = TestPack::new();
    let mut lines = exported(&source);
    // The attack: change the content, delete the checksum, keep the id.
    lines[1]["content"] = "Something the user never said.".into();
    lines[1].as_object_mut().unwrap().remove("checksum");
    let target = TestPack::new();
    let file = write_lines(&target, "tampered.jsonl", &lines);
    let err = target.fails(&["import", &file]);
    assert!(
        err.starts_with("error: line 2: checksum is missing; a line that names an event_id"),
        "{err}"
    );
    assert_eq!(target.json(&["stats"])["events"], 0);
}

#[test]
fn an_import_refuses_another_owners_lines_unless_all_owners() {
    let source = TestPack::new();
    let lines = exported(&source);
    assert!(lines.iter().all(|l| l["owner_id"] == "maya"));
    let target = TestPack::new();
    let file = write_lines(&target, "maya.jsonl", &lines);
    // `kith --owner bob import` of maya's lines: refused, nothing written.
    let out = target
        .cmd(&["import", &file])
        .args(["--owner", "bob"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with(
            "error: line 1: owner_id is \"maya\", but this import is for owner \"bob\""
        ),
        "{err}"
    );
    assert!(err.contains("--all-owners"), "{err}");
    assert_eq!(
        target.json(&["stats", "--all-owners"])["events"],
        0,
        "nothing was written for any owner"
    );
    // Asked for explicitly, each line goes to the owner it names.
    let out = target
        .cmd(&["import", &file, "--all-owners"])
        .args(["--owner", "bob"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(target.json(&["stats"])["events"], 2, "maya's");
    let bob = target
        .cmd(&["--json", "stats"])
        .args(["--owner", "bob"])
        .output()
        .unwrap();
    let bob: serde_json::Value = serde_json::from_slice(&bob.stdout).unwrap();
    assert_eq!(bob["events"], 0);
    // With --extract, every owner's admitted work is extracted, not only
    // --owner's.
    let fresh = TestPack::new();
    let out = fresh
        .cmd(&["--json", "import", "--extract", "--all-owners", &file])
        .args(["--owner", "bob"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Acknowledgement lines, then the report: the last JSON value.
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let report = serde_json::Deserializer::from_str(&text)
        .into_iter::<serde_json::Value>()
        .last()
        .unwrap()
        .unwrap();
    assert_eq!(report["extraction"]["completed"], 2, "{report}");
    // The import's own owner still imports without the flag.
    let same = TestPack::new();
    let file = write_lines(&same, "maya.jsonl", &lines);
    same.ok(&["import", &file]);
    assert_eq!(same.json(&["stats"])["events"], 2);
}

/// An "LLM endpoint" that answers every request 400: every extraction
/// fails at once (400 is not retried).
fn refusing_endpoint() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 65536];
            let _ = stream.read(&mut buf);
            let body = r#"{"error":{"message":"refused by the test"}}"#;
            let _ = write!(
                stream,
                "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\n\
                 content-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    format!("http://{addr}/v1")
}

#[test]
fn failed_extractions_exit_3_and_keep_the_messages() {
    let t = TestPack::new();
    let llm = refusing_endpoint();
    let with_llm = |args: &[&str]| {
        t.cmd(args)
            .env("KITH_LLM_BASE_URL", &llm)
            .env("KITH_LLM_MODEL", "test")
            .output()
            .unwrap()
    };
    let out = with_llm(&["ingest", "I moved to Lisbon.", "--source-id", "one"]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("extraction failed for 1 message(s)"), "{err}");

    let file = t.path("two.jsonl");
    std::fs::write(&file, common::jsonl("b", 2)).unwrap();
    let out = with_llm(&["import", "--extract", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("2 failed"));

    let out = with_llm(&["process", "--retry-failed"]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("3 failed"));
    assert_eq!(t.json(&["stats"])["events"], 3, "every message is kept");

    // With the offline extractor the same work succeeds: exit 0.
    let out = t
        .cmd(&["process", "--retry-failed"])
        .env_remove("KITH_LLM_BASE_URL")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = t
        .cmd(&["ingest", "I moved to Porto.", "--source-id", "two"])
        .env_remove("KITH_LLM_BASE_URL")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

/// A directory whose contents cannot be written: a read-only tmpfs mount
/// when running as root (which ignores permission bits), else permission
/// bits. Undone on drop.
struct ReadOnlyDir {
    path: std::path::PathBuf,
    mounted: bool,
}

impl ReadOnlyDir {
    /// Copies `pack` into `parent/ro/pack` and makes it read-only storage.
    fn with_copy_of(pack: &std::path::Path, parent: &std::path::Path) -> ReadOnlyDir {
        let path = parent.join("ro");
        std::fs::create_dir_all(&path).unwrap();
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        if root {
            let ok = std::process::Command::new("mount")
                .args(["-t", "tmpfs", "-o", "size=64m", "tmpfs"])
                .arg(&path)
                .status()
                .unwrap()
                .success();
            assert!(ok, "mounting a tmpfs as root failed");
        }
        let copy = path.join("pack");
        std::fs::create_dir_all(&copy).unwrap();
        for entry in std::fs::read_dir(pack).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), copy.join(entry.file_name())).unwrap();
        }
        if root {
            let ok = std::process::Command::new("mount")
                .args(["-o", "remount,ro"])
                .arg(&path)
                .status()
                .unwrap()
                .success();
            assert!(ok, "remounting read-only failed");
        } else {
            for p in [
                copy.join("kith.sqlite"),
                copy.join("manifest.json"),
                copy.clone(),
            ] {
                let mut perms = std::fs::metadata(&p).unwrap().permissions();
                perms.set_readonly(true);
                std::fs::set_permissions(&p, perms).unwrap();
            }
        }
        ReadOnlyDir {
            path,
            mounted: root,
        }
    }

    fn pack(&self) -> std::path::PathBuf {
        self.path.join("pack")
    }
}

impl Drop for ReadOnlyDir {
    fn drop(&mut self) {
        if self.mounted {
            let _ = std::process::Command::new("umount")
                .arg(&self.path)
                .status();
        } else {
            let copy = self.pack();
            for p in [
                copy.clone(),
                copy.join("kith.sqlite"),
                copy.join("manifest.json"),
            ] {
                if let Ok(m) = std::fs::metadata(&p) {
                    let mut perms = m.permissions();
                    #[allow(clippy::permissions_set_readonly_false)]
                    perms.set_readonly(false);
                    let _ = std::fs::set_permissions(&p, perms);
                }
            }
        }
    }
}

/// Issue 20 item 10: read commands read a pack on read-only storage; a
/// write names the database and the file system's reason.
#[test]
fn a_pack_on_read_only_storage_can_be_read() {
    let t = TestPack::new();
    let file = t.path("in.jsonl");
    std::fs::write(&file, common::jsonl("a", 5)).unwrap();
    t.ok(&["import", file.to_str().unwrap()]);
    let export = t.ok(&["export"]);
    let ro = ReadOnlyDir::with_copy_of(&t.pack, t.tmp.path());
    let pack = ro.pack();
    let run = |args: &[&str]| common::kith_cmd(&pack, args).output().unwrap();

    let stats = run(&["--json", "stats"]);
    assert!(
        stats.status.success(),
        "{}",
        String::from_utf8_lossy(&stats.stderr)
    );
    let stats: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(stats["events"], 5);
    let out = run(&["export"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), export);
    // doctor checks it read-only, saying what it could not check.
    let out = run(&["doctor", "--deep"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("healthy: 5 events verified"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not checked: the full-text index"));
    for args in [
        &["search", "message"][..],
        &["events", "list"],
        &["nodes", "list"],
    ] {
        let out = run(args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    // A write is refused with the database's path and the reason.
    let out = run(&["store", "One more."]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let db = pack.join("kith.sqlite");
    assert!(err.contains(&db.display().to_string()), "{err}");
    assert!(
        err.contains("Read-only file system") || err.contains("ermission denied"),
        "{err}"
    );
    // Nothing appeared beside the database.
    assert_eq!(names(&pack), names(&t.pack));
}

fn names(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
