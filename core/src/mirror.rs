//! What the bindings mirror by hand in their own languages (`index.d.ts`, `types.py`, the
//! option list of the C header): the fields of each record type, the fields of each event,
//! and every error code, read from the types' JSON Schemas. Each binding's tests compare its
//! copy with this, so that a field or a code core gains and a binding lacks fails a test
//! instead of reaching users as `undefined` or a missing class.

use schemars::JsonSchema;
use serde_json::{Map, Value, json};

use crate::error::ErrorKind;

/// The JSON field names of `T` (its schema's properties).
fn fields<T: JsonSchema>() -> Vec<String> {
    let schema = schemars::schema_for!(T);
    let value = serde_json::to_value(schema).unwrap_or_default();
    value["properties"]
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

/// `{"types": {"ServerRecord": [fields], ...}, "events": {"connection:state": [fields],
/// ...}, "errorCodes": [...], "providerTypes": ["openai", ...]}`.
pub fn mirrored() -> Value {
    let mut mirrored = json!({
        "types": {
            "ServerRecord": fields::<crate::config::record::ServerRecord>(),
            "ServerInput": fields::<crate::config::record::ServerInput>(),
            "ServerPatch": fields::<crate::config::record::ServerPatch>(),
            "ServerConfig": fields::<crate::config::record::ServerConfig>(),
            "ImportResult": fields::<crate::pool::ImportResult>(),
            "Timeouts": fields::<crate::config::record::Timeouts>(),
            "OAuthSettings": fields::<crate::auth::OAuthSettings>(),
            "IdpSettings": fields::<crate::auth::IdpSettings>(),
            "PoolOptions": fields::<crate::pool::PoolOptions>(),
            "ToolInfo": fields::<crate::tools::ToolInfo>(),
            "ServerStatus": fields::<crate::pool::ServerStatus>(),
            "SkillInfo": fields::<crate::pool::SkillInfo>(),
            "SkillFile": fields::<crate::pool::SkillFile>(),
            "LoadedSkill": fields::<crate::pool::LoadedSkill>(),
            "SkillFileContents": fields::<crate::pool::SkillFileContents>(),
            "AppsOptions": fields::<crate::pool::AppsOptions>(),
            "AppView": fields::<crate::pool::AppView>(),
            "AppCsp": fields::<crate::pool::AppCsp>(),
            "AppPermissions": fields::<crate::pool::AppPermissions>(),
            "AppBridgeOutput": fields::<crate::pool::AppBridgeOutput>(),
        },
        "events": events(),
        "errorCodes": ErrorKind::ALL.map(ErrorKind::as_str),
    });
    let types = &mut mirrored["types"];
    #[cfg(feature = "serve")]
    {
        types["HttpServeSettings"] = json!(fields::<crate::serve::HttpServeSettings>());
        types["OAuthResourceSettings"] = json!(fields::<crate::serve::OAuthResourceSettings>());
    }
    #[cfg(feature = "agent")]
    {
        types["ApprovalRequest"] = json!(fields::<crate::agent::ApprovalRequest>());
        mirrored["providerTypes"] = json!(tags::<crate::agent::ProviderConfig>());
    }
    #[cfg(not(feature = "agent"))]
    let _ = types;
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
