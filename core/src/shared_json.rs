//! [`SharedJson`]: a JSON value kept as its text and shared, for the parts of a tool (schemas,
//! annotations, `_meta`) that every listing hands out and that hosts mostly pass on as they
//! are (to an LLM API, a binding, a served client).
//!
//! Why: a pool keeps thousands of tools, and a listing of them all is asked for on every turn
//! of an agent and every page of a host. Parsed into `serde_json::Value`, each schema costs
//! about ten times its text in memory, and each listing a parse or a deep copy of it; as
//! shared text it costs one reference count per listing, and is written out unchanged.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// A JSON value as shared, immutable text: cloned by reference, serialized as it is, parsed
/// only by whoever reads into it ([`SharedJson::to_value`], [`SharedJson::parse`]).
#[derive(Clone)]
pub struct SharedJson(Arc<RawValue>);

impl SharedJson {
    /// The value's JSON text (compact, as it was written).
    pub fn get(&self) -> &str {
        self.0.get()
    }

    /// The value, parsed.
    pub fn to_value(&self) -> serde_json::Value {
        // The text was written by serde_json from a value (or checked by it when read), so
        // it parses back.
        serde_json::from_str(self.0.get()).expect("shared JSON text parses")
    }

    /// Reads the value into `T`.
    pub fn parse<T: serde::de::DeserializeOwned>(&self) -> serde_json::Result<T> {
        serde_json::from_str(self.0.get())
    }

    /// The text of anything serde can write (a value, a map, rmcp's schema objects).
    pub fn of<T: Serialize + ?Sized>(value: &T) -> SharedJson {
        SharedJson(Arc::from(
            serde_json::value::to_raw_value(value)
                // Plain data with string keys, as every caller has: writing cannot fail.
                .expect("a value serializes to JSON"),
        ))
    }
}

impl Default for SharedJson {
    /// `null`, as `serde_json::Value`'s default.
    fn default() -> Self {
        SharedJson::of(&serde_json::Value::Null)
    }
}

impl From<serde_json::Value> for SharedJson {
    fn from(value: serde_json::Value) -> Self {
        SharedJson::of(&value)
    }
}

impl From<&serde_json::Value> for SharedJson {
    fn from(value: &serde_json::Value) -> Self {
        SharedJson::of(value)
    }
}

impl std::fmt::Debug for SharedJson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.get())
    }
}

impl std::fmt::Display for SharedJson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.get())
    }
}

/// Equal when the values are: texts written by serde_json from equal values are equal, and
/// other texts are compared parsed.
impl PartialEq for SharedJson {
    fn eq(&self, other: &SharedJson) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
            || self.0.get() == other.0.get()
            || self.to_value() == other.to_value()
    }
}

impl PartialEq<serde_json::Value> for SharedJson {
    fn eq(&self, other: &serde_json::Value) -> bool {
        self.to_value() == *other
    }
}

impl Serialize for SharedJson {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// Through `serde_json::Value`, so it reads from any deserializer (raw text needs
/// serde_json's own).
impl<'de> Deserialize<'de> for SharedJson {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<SharedJson, D::Error> {
        serde_json::Value::deserialize(d).map(SharedJson::from)
    }
}

/// The schema of any JSON value, as `serde_json::Value`'s: the mirrored types of the bindings
/// see no difference.
impl schemars::JsonSchema for SharedJson {
    fn inline_schema() -> bool {
        <serde_json::Value as schemars::JsonSchema>::inline_schema()
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        <serde_json::Value as schemars::JsonSchema>::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        <serde_json::Value as schemars::JsonSchema>::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shared_json_is_written_as_it_is_and_read_back_as_the_value() {
        let v = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        let shared = SharedJson::from(&v);
        assert_eq!(shared.get(), serde_json::to_string(&v).unwrap());
        assert_eq!(shared.to_value(), v);
        assert_eq!(serde_json::to_value(&shared).unwrap(), v);
        let back: SharedJson = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(back, shared);
        assert_eq!(shared, v);
        assert_eq!(SharedJson::default().get(), "null");
        let copy = shared.clone();
        assert!(Arc::ptr_eq(&copy.0, &shared.0), "a clone shares the text");
    }

    #[test]
    fn its_schema_is_any_values() {
        let ours = schemars::schema_for!(SharedJson);
        let values = schemars::schema_for!(serde_json::Value);
        assert_eq!(
            serde_json::to_value(ours).unwrap(),
            serde_json::to_value(values).unwrap()
        );
    }
}
