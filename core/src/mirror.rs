//! What the bindings mirror in their own languages (`index.d.ts`, `types.py`, the option list
//! of the C header): the record types with their JSON Schemas, the fields of each event, and
//! every error code. The record types' fields in `index.d.ts` and `types.py` are generated from
//! these schemas (tests/tests/integration/mirrors/, which also fails CI when they drift); each
//! binding's tests compare the rest of its copy with this, so that a field or a code core gains
//! and a binding lacks fails a test instead of reaching users as `undefined` or a missing class.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use crate::error::ErrorKind;

/// The JSON field names a schema's properties give.
fn fields(schema: &Value) -> Vec<String> {
    schema["properties"]
        .as_object()
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

/// The `type` of each variant of an internally tagged enum (the provider kinds).
#[cfg(feature = "agent")]
fn tags<T: JsonSchema>() -> Vec<String> {
    let schema = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default();
    schema["oneOf"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|variant| {
            let tag = &variant["properties"]["type"];
            tag["const"]
                .as_str()
                .or_else(|| tag["enum"][0].as_str())
                .map(str::to_owned)
        })
        .collect()
}

/// Each event's name (its `type`) and its other fields.
fn events() -> Map<String, Value> {
    let schema =
        serde_json::to_value(schemars::schema_for!(crate::events::Event)).unwrap_or_default();
    let mut out = Map::new();
    for variant in schema["oneOf"].as_array().into_iter().flatten() {
        let props = variant["properties"].as_object();
        let Some(name) = props.and_then(|p| p["type"]["const"].as_str()) else {
            continue;
        };
        let fields: Vec<&String> = props
            .into_iter()
            .flat_map(|p| p.keys())
            .filter(|k| *k != "type")
            .collect();
        out.insert(name.to_string(), json!(fields));
    }
    out
}

/// Which way a mirrored type's values cross into a binding, which decides which of its fields
/// may be absent: what a caller passes in may leave out every field core fills in
/// (`#[serde(default)]`); what core hands back leaves out only those it skips when empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Way {
    /// A caller's input, read by core (the deserializing side of the schema).
    In,
    /// Core's output, read by the caller (the serializing side).
    Out,
}

/// One type the bindings mirror: its name there, its way, and where its schema comes from.
pub struct Mirrored {
    /// The type's name in `index.d.ts` and `types.py` (core's own, but for re-exports).
    pub name: &'static str,
    /// Whether a caller writes its values or reads them.
    pub way: Way,
    schema: fn(Way) -> Value,
}

impl Mirrored {
    /// The type's JSON Schema for its way (draft 2020-12, `$defs` for the types it names).
    pub fn schema(&self) -> Value {
        (self.schema)(self.way)
    }

    /// The type's schema as core reads it (`In`: with the defaults it fills in) or writes it.
    pub fn schema_for(&self, way: Way) -> Value {
        (self.schema)(way)
    }
}

/// `T`'s JSON Schema as core reads it (`In`) or writes it (`Out`).
fn schema<T: JsonSchema>(way: Way) -> Value {
    let settings = SchemaSettings::draft2020_12();
    let settings = match way {
        Way::In => settings.for_deserialize(),
        Way::Out => settings.for_serialize(),
    };
    let schema = settings.into_generator().into_root_schema_for::<T>();
    serde_json::to_value(schema).unwrap_or_default()
}

macro_rules! mirrored {
    ($name:literal, $way:ident, $ty:ty) => {
        Mirrored {
            name: $name,
            way: Way::$way,
            schema: schema::<$ty>,
        }
    };
}

/// Every record type the bindings mirror, in the order of `index.d.ts`: the generated parts of
/// `types.py` and `index.d.ts` are written from these schemas, and the bindings' tests check
/// their field names against them.
pub fn types() -> Vec<Mirrored> {
    use crate::config::record as r;
    #[allow(unused_mut)] // without `serve` and `agent`, nothing is pushed
    let mut types = vec![
        mirrored!("PoolOptions", In, crate::pool::PoolOptions),
        mirrored!("AppsOptions", In, crate::pool::AppsOptions),
        mirrored!("ServerConfig", In, r::ServerConfig),
        mirrored!("OAuthSettings", In, crate::auth::OAuthSettings),
        mirrored!("IdpSettings", In, crate::auth::IdpSettings),
        mirrored!("Sandbox", In, crate::config::sandbox::Sandbox),
        mirrored!("Timeouts", In, r::Timeouts),
        mirrored!("ServerRecord", Out, r::ServerRecord),
        mirrored!("Consent", Out, crate::config::consent::Consent),
        mirrored!("ServerInput", In, r::ServerInput),
        mirrored!("ServerPatch", In, r::ServerPatch),
        mirrored!("ImportResult", Out, crate::pool::ImportResult),
        mirrored!("ToolInfo", Out, crate::tools::ToolInfo),
        mirrored!("ServerStatus", Out, crate::pool::ServerStatus),
        mirrored!("SkillInfo", Out, crate::pool::SkillInfo),
        mirrored!("SkillFile", Out, crate::pool::SkillFile),
        mirrored!("LoadedSkill", Out, crate::pool::LoadedSkill),
        mirrored!("SkillFileContents", Out, crate::pool::SkillFileContents),
        mirrored!("AppView", Out, crate::pool::AppView),
        mirrored!("AppCsp", Out, crate::pool::AppCsp),
        mirrored!("AppPermissions", Out, crate::pool::AppPermissions),
        mirrored!("AppBridgeOutput", Out, crate::pool::AppBridgeOutput),
    ];
    #[cfg(feature = "serve")]
    types.extend([
        mirrored!("HttpServeSettings", In, crate::serve::HttpServeSettings),
        mirrored!(
            "OAuthResourceSettings",
            In,
            crate::serve::OAuthResourceSettings
        ),
    ]);
    #[cfg(feature = "agent")]
    types.push(mirrored!(
        "ApprovalRequest",
        Out,
        crate::agent::ApprovalRequest
    ));
    types
}

/// `{"types": {"ServerRecord": [fields], ...}, "events": {"connection:state": [fields],
/// ...}, "errorCodes": [...], "providerTypes": ["openai", ...]}`.
pub fn mirrored() -> Value {
    let types: Map<String, Value> = types()
        .iter()
        // The names a caller may pass: the reading side's, whichever way the type goes.
        .map(|t| (t.name.to_string(), json!(fields(&t.schema_for(Way::In)))))
        .collect();
    #[allow(unused_mut)] // without `agent`, no provider kinds
    let mut mirrored = json!({
        "types": types,
        "events": events(),
        "errorCodes": ErrorKind::ALL.map(ErrorKind::as_str),
    });
    #[cfg(feature = "agent")]
    {
        mirrored["providerTypes"] = json!(tags::<crate::agent::ProviderConfig>());
    }
    mirrored
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mirrored_shapes_name_every_field_event_and_code() {
        let m = mirrored();
        assert_eq!(
            m["providerTypes"],
            json!(["openai", "remote", "anthropic", "ollama"])
        );
        let record = m["types"]["ServerRecord"].as_array().unwrap();
        for f in [
            "id",
            "type",
            "isActive",
            "disabledAutoApproveTools",
            "timeouts",
        ] {
            assert!(record.iter().any(|x| x == f), "{f} in {record:?}");
        }
        let options = m["types"]["PoolOptions"].as_array().unwrap();
        assert!(
            options.iter().any(|x| x == "maxMessageBytes"),
            "{options:?}"
        );
        // Every event core emits is described, and only those.
        let events = m["events"].as_object().unwrap();
        let mut names: Vec<&str> = events.keys().map(String::as_str).collect();
        let mut emitted = crate::events::EVENT_NAMES.to_vec();
        names.sort_unstable();
        emitted.sort_unstable();
        assert_eq!(names, emitted);
        assert_eq!(
            events["connection:state"],
            json!([
                "attempt",
                "error",
                "phase",
                "serverId",
                "serverName",
                "state"
            ])
        );
        assert_eq!(events["servers:changed"], json!([]));
        assert_eq!(
            m["errorCodes"].as_array().unwrap().len(),
            ErrorKind::ALL.len()
        );
    }
}
