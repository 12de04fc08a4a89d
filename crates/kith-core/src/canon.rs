//! Canonical JSON and SHA-256 checksums.
//!
//! Canonical form (documented in docs/internals/formats.md): UTF-8, no insignificant
//! whitespace, object keys sorted by their UTF-8 bytes, strings escaped as
//! `serde_json` escapes them (non-ASCII kept as is), numbers in `serde_json`'s
//! shortest round-trip form. NaN and Infinity cannot occur: they are not JSON,
//! and [`parse_finite`] rejects them with the path where they stood.
//!
//! The writer sorts keys itself rather than relying on `serde_json`'s map
//! order, so enabling `serde_json/preserve_order` anywhere in a build can never
//! change a checksum.

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::validate::{ValidationError, ValidationErrorKind};

/// Writes `value` in canonical form.
pub fn to_canonical_string(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(key, out);
                out.push(':');
                write_canonical(item, out);
            }
            out.push('}');
        }
    }
}

fn write_string(s: &str, out: &mut String) {
    // serde_json's string escaping is the documented form; serialising a &str
    // cannot fail.
    out.push_str(&serde_json::to_string(s).expect("a &str always serialises"));
}

/// Lower-case hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut hex = String::with_capacity(64);
    for byte in digest {
        hex.push(char::from_digit(u32::from(byte >> 4), 16).unwrap_or('0'));
        hex.push(char::from_digit(u32::from(byte & 0xf), 16).unwrap_or('0'));
    }
    hex
}

/// SHA-256 (lower-case hex) of the canonical form of `value`.
pub fn checksum(value: &Value) -> String {
    sha256_hex(to_canonical_string(value).as_bytes())
}

/// Parses JSON text, rejecting NaN, Infinity and numbers too large for an f64
/// with a [`ValidationError`] that names where they stood (`metadata.score`).
///
/// `field` is the name of the whole value ("metadata"). Other syntax errors
/// are reported as [`ValidationErrorKind::InvalidJson`].
pub fn parse_finite(field: &str, text: &str) -> Result<Value, ValidationError> {
    if let Some((path, token)) = find_non_finite(text) {
        let field = if path.is_empty() {
            field.to_string()
        } else {
            format!("{field}{path}")
        };
        return Err(ValidationError::new(
            field,
            ValidationErrorKind::NonFinite { value: token },
        ));
    }
    serde_json::from_str(text).map_err(|err| {
        ValidationError::new(
            field,
            ValidationErrorKind::InvalidJson {
                reason: err.to_string(),
            },
        )
    })
}

/// One open container while scanning: the path segment of the value being
/// read inside it.
enum Frame {
    Object { key: Option<String> },
    Array { index: usize },
}

/// Scans JSON-ish text for a non-finite number outside strings and returns the
/// path to it (`.a.b[2]`) and the offending token. Syntax it does not
/// understand is left for the real parser to report.
pub fn find_non_finite(text: &str) -> Option<(String, String)> {
    let bytes = text.as_bytes();
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    // Inside an object, a string is a key when it follows '{' or ','.
    let mut expecting_key = false;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                if expecting_key {
                    let raw = text.get(start..i.min(text.len())).unwrap_or("");
                    let key = serde_json::from_str::<String>(&format!("\"{raw}\""))
                        .unwrap_or_else(|_| raw.to_string());
                    if let Some(Frame::Object { key: slot }) = stack.last_mut() {
                        *slot = Some(key);
                    }
                    expecting_key = false;
                }
                i += 1;
                continue;
            }
            b'{' => {
                stack.push(Frame::Object { key: None });
                expecting_key = true;
            }
            b'[' => stack.push(Frame::Array { index: 0 }),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Array { index }) => *index += 1,
                Some(Frame::Object { .. }) => expecting_key = true,
                None => {}
            },
            b'N' | b'I' | b'-' | b'0'..=b'9' => {
                let start = i;
                while i < bytes.len()
                    && (bytes[i].is_ascii_alphanumeric() || matches!(bytes[i], b'-' | b'+' | b'.'))
                {
                    i += 1;
                }
                let token = &text[start..i];
                let non_finite = matches!(token, "NaN" | "-NaN" | "Infinity" | "-Infinity")
                    || (token.starts_with(|ch: char| ch == '-' || ch.is_ascii_digit())
                        && token.parse::<f64>().is_ok_and(|v| !v.is_finite()));
                if non_finite {
                    return Some((path_of(&stack), token.to_string()));
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

fn path_of(stack: &[Frame]) -> String {
    let mut path = String::new();
    for frame in stack {
        match frame {
            Frame::Object { key: Some(key) } => {
                path.push('.');
                path.push_str(key);
            }
            Frame::Object { key: None } => {}
            Frame::Array { index } => path.push_str(&format!("[{index}]")),
        }
    }
    path
}

/// Checks that every number in an already parsed value is finite. Values built
/// through `serde_json` cannot hold NaN, but a value deserialised from another
/// format could carry an f64 that serde_json later refuses to print; this makes
/// the rule explicit at the boundary.
pub fn ensure_finite(field: &str, value: &Value) -> Result<(), ValidationError> {
    fn walk(path: &mut String, value: &Value) -> Option<String> {
        match value {
            Value::Number(n) => match n.as_f64() {
                Some(f) if !f.is_finite() => Some(path.clone()),
                _ => None,
            },
            Value::Array(items) => items.iter().enumerate().find_map(|(i, item)| {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                let found = walk(path, item);
                path.truncate(len);
                found
            }),
            Value::Object(map) => map.iter().find_map(|(k, item)| {
                let len = path.len();
                path.push('.');
                path.push_str(k);
                let found = walk(path, item);
                path.truncate(len);
                found
            }),
            _ => None,
        }
    }
    let mut path = field.to_string();
    match walk(&mut path, value) {
        Some(at) => Err(ValidationError::new(
            at,
            ValidationErrorKind::NonFinite {
                value: "a non-finite number".into(),
            },
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_are_sorted_at_every_depth() {
        let v = json!({"b": 1, "a": {"z": [1, {"y": 2, "x": 3}], "c": null}, "é": "ü"});
        assert_eq!(
            to_canonical_string(&v),
            r#"{"a":{"c":null,"z":[1,{"x":3,"y":2}]},"b":1,"é":"ü"}"#
        );
    }

    #[test]
    fn checksum_ignores_key_order() {
        // Build the same object with keys inserted in many different orders.
        let keys = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"];
        let mut expected = None;
        let mut rng = crate::rng::Rng::new(0x9e37_79b9_7f4a_7c15);
        for _ in 0..50 {
            let mut order: Vec<usize> = (0..keys.len()).collect();
            for i in (1..order.len()).rev() {
                order.swap(i, rng.below(i + 1));
            }
            let mut map = serde_json::Map::new();
            for &i in &order {
                map.insert(keys[i].to_string(), json!({"n": i, "s": keys[i]}));
            }
            let sum = checksum(&Value::Object(map));
            match &expected {
                None => expected = Some(sum),
                Some(first) => assert_eq!(first, &sum),
            }
        }
    }

    #[test]
    fn checksum_changes_with_content() {
        assert_ne!(checksum(&json!({"a": 1})), checksum(&json!({"a": 2})));
        assert_ne!(checksum(&json!({"a": "1"})), checksum(&json!({"a": 1})));
    }

    #[test]
    fn sha256_matches_known_vector() {
        // FIPS 180-2 test vector for "abc".
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn non_finite_numbers_are_rejected_with_their_path() {
        let cases = [
            (r#"{"score": NaN}"#, "metadata.score", "NaN"),
            (
                r#"{"a": {"b": [1, Infinity]}}"#,
                "metadata.a.b[1]",
                "Infinity",
            ),
            (r#"{"x": -Infinity}"#, "metadata.x", "-Infinity"),
            (r#"{"big": 1e999}"#, "metadata.big", "1e999"),
            (
                r#"{"s": "NaN is fine in a string", "n": NaN}"#,
                "metadata.n",
                "NaN",
            ),
        ];
        for (text, field, token) in cases {
            let err = parse_finite("metadata", text).unwrap_err();
            assert_eq!(err.field, field, "{text}");
            assert_eq!(
                err.kind,
                ValidationErrorKind::NonFinite {
                    value: token.to_string()
                }
            );
            assert_eq!(
                err.to_string(),
                format!("{field} is {token}; JSON numbers must be finite")
            );
        }
    }

    #[test]
    fn finite_json_parses() {
        let v = parse_finite("metadata", r#"{"s": "Infinity", "n": -1.5e3, "k\"ey": 1}"#).unwrap();
        assert_eq!(v["n"], json!(-1500.0));
        assert!(find_non_finite(r#"{"s": "say \"NaN\""}"#).is_none());
    }

    #[test]
    fn invalid_json_is_a_typed_error() {
        let err = parse_finite("metadata", "{\"a\": }").unwrap_err();
        assert!(matches!(err.kind, ValidationErrorKind::InvalidJson { .. }));
    }
}
