//! Model location order and load errors. One test only: it changes
//! environment variables, which are shared by the whole test process.

use std::fs;
use std::path::{Path, PathBuf};

use kith_embed::{EmbedError, MiniLm};

fn fake_model(dir: &Path) {
    fs::create_dir_all(dir).unwrap();
    for f in ["model.safetensors", "config.json", "vocab.txt"] {
        fs::write(dir.join(f), b"x").unwrap();
    }
}

#[test]
fn locate_order_and_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_path_buf();
    let explicit = root.join("explicit");
    let from_env = root.join("env");
    let cache = root.join("cache");
    let default = cache.join("kith/models/all-MiniLM-L6-v2");
    let missing = root.join("missing");
    fake_model(&explicit);
    fake_model(&from_env);
    // KITH_CACHE_DIR, when set, moves every kith cache and wins over XDG.
    let kith_cache = root.join("kith-cache");
    std::env::set_var("KITH_CACHE_DIR", &kith_cache);
    std::env::set_var("XDG_CACHE_HOME", &cache);
    assert_eq!(
        MiniLm::default_dir(),
        Some(kith_cache.join("models/all-MiniLM-L6-v2"))
    );
    std::env::remove_var("KITH_CACHE_DIR");
    std::env::set_var("KITH_EMBEDDING_MODEL_DIR", &from_env);

    assert_eq!(MiniLm::default_dir(), Some(default.clone()));
    assert_eq!(MiniLm::locate(Some(&explicit)).unwrap(), explicit);
    assert_eq!(MiniLm::locate(Some(&missing)).unwrap(), from_env);
    assert_eq!(MiniLm::locate(None).unwrap(), from_env);

    std::env::remove_var("KITH_EMBEDDING_MODEL_DIR");
    match MiniLm::locate(Some(&missing)) {
        Err(EmbedError::ModelMissing { searched }) => {
            assert_eq!(searched, vec![missing.clone(), default.clone()])
        }
        other => panic!("expected ModelMissing, got {other:?}"),
    }
    // A directory missing one file is not installed.
    fs::create_dir_all(&default).unwrap();
    fs::write(default.join("vocab.txt"), b"x").unwrap();
    assert!(MiniLm::locate(None).is_err());
    fake_model(&default);
    assert_eq!(MiniLm::locate(None).unwrap(), default);

    // The flattened-unzip mistake: 1_Pooling/config.json over config.json.
    let flattened: PathBuf = root.join("flattened");
    fake_model(&flattened);
    fs::write(
        flattened.join("config.json"),
        br#"{"word_embedding_dimension": 384, "pooling_mode_mean_tokens": true}"#,
    )
    .unwrap();
    let err = MiniLm::load(&flattened).unwrap_err().to_string();
    assert!(
        err.contains("config.json") && err.contains("1_Pooling"),
        "{err}"
    );

    // Truncated weights name the file and the problem.
    let truncated = root.join("truncated");
    fake_model(&truncated);
    write_default_config(&truncated.join("config.json"));
    let err = MiniLm::load(&truncated).unwrap_err().to_string();
    assert!(err.contains("model.safetensors"), "{err}");
}

/// A real BERT config, written to `path` here so this test needs no model.
fn write_default_config(path: &Path) {
    fs::write(
        path,
        br#"{"hidden_act": "gelu", "hidden_size": 384, "intermediate_size": 1536,
            "layer_norm_eps": 1e-12, "max_position_embeddings": 512,
            "num_attention_heads": 12, "num_hidden_layers": 6,
            "position_embedding_type": "absolute", "type_vocab_size": 2, "vocab_size": 30522}"#,
    )
    .unwrap();
}
