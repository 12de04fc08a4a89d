//! Bad input gets a typed, readable error and changes nothing.
//!
//! Each case runs against a pack that already holds memories, and compares
//! everything observable (export text, counts) before and after.

mod common;

use common::{msg, pack, snapshot};
use kith::{ErrorKind, EventInput, ImportOptions, Memory, OwnerId};

fn seeded() -> (tempfile::TempDir, std::path::PathBuf, Memory) {
    let (tmp, dir, memory) = pack();
    memory
        .store_batch(vec![
            msg("maya", "I live in Leeds."),
            msg("maya", "I prefer green tea."),
        ])
        .unwrap();
    (tmp, dir, memory)
}

/// Runs `bad` and checks it fails with `kind`, a message containing
/// `message`, and leaves the pack unchanged.
fn refused(memory: &Memory, bad: impl FnOnce(&Memory) -> Result<(), kith::Error>, message: &str) {
    let before = snapshot(memory, "maya");
    let err = bad(memory).expect_err("bad input must be refused");
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
    assert!(
        err.to_string().contains(message),
        "{err:?} lacks {message:?}"
    );
    assert_eq!(
        snapshot(memory, "maya"),
        before,
        "pack changed after: {err}"
    );
}

fn import(memory: &Memory, text: &str) -> Result<(), kith::Error> {
    let options = ImportOptions {
        owner: Some(OwnerId::new("maya").unwrap()),
        ..ImportOptions::default()
    };
    memory.import_jsonl(text, &options, |_| {}).map(|_| ())
}

#[test]
fn nan_metadata() {
    let (_t, _d, memory) = seeded();
    refused(
        &memory,
        |m| {
            import(
                m,
                "{\"content\":\"ok\",\"role\":\"user\"}\n{\"content\":\"x\",\"role\":\"user\",\"metadata\":{\"score\":NaN}}\n",
            )
        },
        "line 2: metadata.score is NaN; JSON numbers must be finite",
    );
    refused(
        &memory,
        |m| {
            import(
                m,
                "{\"content\":\"x\",\"role\":\"user\",\"metadata\":{\"a\":[1,Infinity]}}",
            )
        },
        "line 1: metadata.a[1] is Infinity",
    );
}

#[test]
fn naive_timestamp() {
    let (_t, _d, memory) = seeded();
    refused(
        &memory,
        |m| {
            m.store(EventInput {
                event_time: Some("2025-03-04T19:02:00".into()),
                ..msg("maya", "hello")
            })
            .map(|_| ())
        },
        "event_time is \"2025-03-04T19:02:00\", which has no UTC offset",
    );
}

#[test]
fn empty_content() {
    let (_t, _d, memory) = seeded();
    refused(
        &memory,
        |m| m.store(msg("maya", "   ")).map(|_| ()),
        "content is empty",
    );
}

#[test]
fn unknown_role() {
    let (_t, _d, memory) = seeded();
    refused(
        &memory,
        |m| {
            m.store(EventInput {
                owner_id: Some("maya".into()),
                ..EventInput::new("robot", "beep")
            })
            .map(|_| ())
        },
        "role is \"robot\"; expected one of user participant assistant tool system",
    );
}

#[test]
fn malformed_jsonl_line_writes_nothing_of_the_import() {
    let (_t, _d, memory) = seeded();
    let text = "{\"content\":\"first\",\"role\":\"user\"}\n\
                {\"content\":\"second\",\"role\":\"user\"}\n\
                {\"content\": \"third\", \"role\": \n";
    refused(
        &memory,
        |m| import(m, text),
        "line 3: line is not valid JSON",
    );
    refused(
        &memory,
        |m| {
            import(
                m,
                "{\"content\":\"x\",\"role\":\"user\",\"colour\":\"red\"}",
            )
        },
        "unknown field `colour`",
    );
}

#[test]
fn oversize_message() {
    let (_t, _d, memory) = seeded();
    let big = "x".repeat(kith_core::validate::MAX_CONTENT_BYTES + 1);
    refused(
        &memory,
        |m| m.store(msg("maya", &big)).map(|_| ()),
        "content is 65537 bytes long; the limit is 65536 bytes",
    );
}

#[test]
fn bad_ids_and_metadata() {
    let (_t, _d, memory) = seeded();
    refused(
        &memory,
        |m| m.store(msg("maya alice", "hi")).map(|_| ()),
        "owner_id contains ' '",
    );
    refused(
        &memory,
        |m| {
            m.store(EventInput {
                metadata: Some(serde_json::json!({"kith_internal": 1})),
                ..msg("maya", "hi")
            })
            .map(|_| ())
        },
        "reserved key",
    );
    refused(
        &memory,
        |m| m.store(EventInput::new("user", "no owner")).map(|_| ()),
        "owner_id is empty",
    );
}

#[test]
fn a_bad_item_in_a_batch_writes_none_of_it() {
    let (_t, _d, memory) = seeded();
    refused(
        &memory,
        |m| {
            m.store_batch(vec![msg("maya", "good one"), msg("maya", "")])
                .map(|_| ())
        },
        "content is empty",
    );
}

#[test]
fn unknown_pack_format_is_refused_without_touching_the_pack() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("p.kith");
    {
        let memory = Memory::init(&dir).unwrap();
        memory.store(msg("maya", "hello")).unwrap();
    }
    let manifest = dir.join("manifest.json");
    let original = std::fs::read_to_string(&manifest).unwrap();

    let cases = [
        (
            original.replace("\"format_version\": 1", "\"format_version\": 7"),
            ErrorKind::Unsupported,
            "pack format 7 is newer than this kith (reads 1–1)",
        ),
        (
            original.replace("\"kith-pack\"", "\"other-pack\""),
            ErrorKind::Unsupported,
            "its format is \"other-pack\", not \"kith-pack\"",
        ),
        (
            "not json at all".to_string(),
            ErrorKind::Unsupported,
            "not JSON",
        ),
    ];
    for (text, kind, message) in cases {
        std::fs::write(&manifest, &text).unwrap();
        let before = common::dir_bytes(&dir);
        let err = Memory::open(&dir).err().expect("must refuse");
        assert_eq!(err.kind(), kind, "{err}");
        assert!(err.to_string().contains(message), "{err}");
        assert_eq!(common::dir_bytes(&dir), before, "pack touched: {err}");
    }
    std::fs::remove_file(&manifest).unwrap();
    let err = Memory::open(&dir).err().unwrap();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(err.to_string().contains("is not a kith pack"), "{err}");
}

#[test]
fn init_refuses_a_non_empty_directory() {
    let (_t, dir, _memory) = seeded();
    let err = Memory::init(&dir).err().unwrap();
    assert_eq!(err.kind(), ErrorKind::Conflict);
    assert!(err.to_string().contains("already exists and is not empty"));
}
