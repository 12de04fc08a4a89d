//! Fuzz-style properties of canonical JSON (issue 20): any JSON value has
//! one canonical form and checksum whatever its key order, the canonical
//! text parses back to the same value, and any text given to the finite
//! parser gives a value or a typed error (never a panic, never a NaN).
//! Bounded: fixed case counts in plain `cargo test`.

use kith_core::canon;
use kith_core::ValidationErrorKind;
use proptest::prelude::*;
use serde_json::{Map, Value};

/// Arbitrary JSON values, a few levels deep.
fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1e300f64..1e300).prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((".{0,8}", inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// The same value with every object's keys inserted in reverse order.
fn reversed(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, x) in m.iter().rev() {
                out.insert(k.clone(), reversed(x));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(reversed).collect()),
        other => other.clone(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn canonical_form_ignores_key_order_and_round_trips(v in json()) {
        let text = canon::to_canonical_string(&v);
        prop_assert_eq!(&text, &canon::to_canonical_string(&reversed(&v)));
        prop_assert_eq!(canon::checksum(&v), canon::checksum(&reversed(&v)));
        let back = canon::parse_finite("v", &text).expect("canonical text parses");
        prop_assert_eq!(canon::to_canonical_string(&back), text);
    }

    #[test]
    fn any_text_parses_finite_or_is_refused(text in prop_oneof![
        ".{0,64}",
        "[\\[\\]{}:,\" 0-9a-zNIfe.+-]{0,64}",
        Just("{\"a\": [1, NaN]}".to_string()),
        Just("{\"a\": -Infinity}".to_string()),
        Just("[1e999]".to_string()),
    ]) {
        match canon::parse_finite("metadata", &text) {
            Ok(v) => prop_assert!(canon::ensure_finite("metadata", &v).is_ok()),
            Err(e) => prop_assert!(
                matches!(e.kind, ValidationErrorKind::NonFinite { .. } | ValidationErrorKind::InvalidJson { .. }),
                "{e}"
            ),
        }
    }
}
