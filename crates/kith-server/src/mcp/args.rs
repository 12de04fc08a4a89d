//! Tool arguments that never fail to arrive: a deserialisation error
//! becomes the tool's own refusal (`invalid_input: …`, `isError: true`),
//! which the model reads and corrects, instead of a JSON-RPC error that a
//! client may hide from it.

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};

/// A tool's arguments as `T`, or why they are not one. Its JSON Schema is
/// `T`'s, so `tools/list` shows the real input schema.
pub struct Args<T>(Result<T, String>);

impl<T> Args<T> {
    /// The arguments, or the `invalid_input: …` refusal.
    pub fn get(self) -> Result<T, String> {
        self.0
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Args<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Anything JSON is accepted here; whether it is a `T` is decided
        // below, where the error can name the field.
        let value = serde_json::Value::deserialize(deserializer)?;
        Ok(Args(serde_path_to_error::deserialize(value).map_err(
            |err| {
                let path = err.path().to_string();
                let inner = err.into_inner().to_string();
                // serde names an unknown field itself; the path would
                // say it twice.
                if path.is_empty() || path == "." || inner.starts_with("unknown field") {
                    format!("invalid_input: {inner}")
                } else {
                    format!("invalid_input: {path}: {inner}")
                }
            },
        )))
    }
}

impl<T: JsonSchema> JsonSchema for Args<T> {
    fn schema_name() -> Cow<'static, str> {
        T::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(generator)
    }
}
