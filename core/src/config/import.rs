//! Reading server lists written by other MCP hosts (Claude Desktop, Cursor, VS Code, ...).

use serde_json::{Map, Value};

use crate::config::record::{ServerConfig, ServerInput, TransportType};
use crate::config::sandbox::{Network, Sandbox};
use crate::error::{Error, Result};

/// Parses `{"mcpServers": {...}}` (Claude Desktop, Cursor), `{"servers": {...}}` (VS Code) or a
/// bare `{name: config}` map into one entry per server; a bad entry fails alone.
pub fn parse_server_json(text: &str) -> Result<Vec<(String, Result<ServerInput>)>> {
    let doc: Value = serde_json::from_str(text)
        .map_err(|e| Error::invalid(format!("server JSON is not valid JSON: {e}")))?;
    let Value::Object(mut top) = doc else {
        return Err(Error::invalid("server JSON must be an object"));
    };
    let map = match (top.remove("mcpServers"), top.remove("servers")) {
        (Some(Value::Object(m)), _) | (None, Some(Value::Object(m))) => m,
        (Some(_), _) => return Err(Error::invalid("`mcpServers` must be an object")),
        (None, Some(_)) => return Err(Error::invalid("`servers` must be an object")),
        (None, None) => top,
    };
    Ok(map
        .into_iter()
        .map(|(name, cfg)| {
            let input = entry(&name, cfg);
            (name, input)
        })
        .collect())
}

fn entry(name: &str, cfg: Value) -> Result<ServerInput> {
    let Value::Object(mut cfg) = cfg else {
        return Err(Error::invalid(format!(
            "server '{name}': its config must be an object"
        )));
    };
    let string = |cfg: &mut Map<String, Value>, key: &str| -> Result<Option<String>> {
        match cfg.remove(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(Error::invalid(format!(
                "server '{name}': `{key}` must be a string"
            ))),
        }
    };
    let transport = match string(&mut cfg, "type")?.or(string(&mut cfg, "transport")?) {
        None => None,
        Some(t) => Some(parse_type(name, &t)?),
    };
    let url = string(&mut cfg, "url")?
        .or(string(&mut cfg, "serverUrl")?)
        .or(string(&mut cfg, "httpUrl")?);
    let is_active = match cfg.remove("disabled") {
        Some(Value::Bool(d)) => Some(!d),
        _ => None,
    };
    let config = ServerConfig {
        command: string(&mut cfg, "command")?,
        args: take_as(name, &mut cfg, "args")?,
        env: take_as(name, &mut cfg, "env")?,
        // Another host's file has no such setting: an imported server inherits the least.
        inherit_env: false,
        cwd: string(&mut cfg, "cwd")?,
        url,
        headers: take_as(name, &mut cfg, "headers")?,
        strict_transport: false,
        oauth: take_as(name, &mut cfg, "oauth")?,
        sandbox: None,
    };
    let sandbox = config
        .command
        .as_ref()
        .map(|_| imported_sandbox(&config.args));
    let config = ServerConfig { sandbox, ..config };
    Ok(ServerInput {
        name: name.to_string(),
        transport,
        config,
        is_active,
        // Written by another host, or copied from a page: nothing of it runs before the user
        // has seen the command and approved it.
        pending: Some(true),
        ..Default::default()
    })
}

/// The sandbox an imported stdio server runs in unless the user says otherwise: the folders
/// its arguments name (what the other host was told to give it, as server-filesystem's
/// roots), read and write, and the network, which most servers need to reach their service
/// and which a host's file gives no hint of; nothing else of the user's files. The user sees
/// it before approving the server.
fn imported_sandbox(args: &[String]) -> Sandbox {
    let folders = args
        .iter()
        .filter(|arg| std::path::Path::new(arg).is_absolute())
        .filter(|arg| std::path::Path::new(arg).is_dir())
        .cloned()
        .collect();
    Sandbox {
        write: folders,
        network: Network::All,
        ..Default::default()
    }
}

fn take_as<T: serde::de::DeserializeOwned + Default>(
    name: &str,
    cfg: &mut Map<String, Value>,
    key: &str,
) -> Result<T> {
    match cfg.remove(key) {
        None | Some(Value::Null) => Ok(T::default()),
        Some(v) => serde_json::from_value(v).map_err(|e| {
            Error::invalid(format!("server '{name}': `{key}` has the wrong shape: {e}"))
        }),
    }
}

fn parse_type(name: &str, t: &str) -> Result<TransportType> {
    Ok(match t.to_ascii_lowercase().as_str() {
        "stdio" => TransportType::Stdio,
        "http" | "streamable-http" | "streamablehttp" | "streamable_http" => TransportType::Http,
        "sse" => TransportType::Sse,
        "ws" | "websocket" => TransportType::Websocket,
        other => {
            return Err(Error::invalid(format!(
                "server '{name}': unknown transport type '{other}'"
            )));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_desktop_format() {
        let r = parse_server_json(
            r#"{"mcpServers": {
                "fs": {"command": "npx", "args": ["-y", "server-fs", "/tmp"], "env": {"K": "v"}},
                "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}},
                "off": {"command": "x", "disabled": true}
            }}"#,
        )
        .unwrap();
        assert_eq!(r.len(), 3);
        let fs = r
            .iter()
            .find(|(n, _)| n == "fs")
            .unwrap()
            .1
            .as_ref()
            .unwrap();
        assert_eq!(fs.config.args, ["-y", "server-fs", "/tmp"]);
        assert_eq!(fs.config.env["K"], "v");
        // Waiting for approval, in a sandbox of the folder it was given and the network.
        assert_eq!(fs.pending, Some(true));
        let sandbox = fs.config.sandbox.as_ref().unwrap();
        assert_eq!(sandbox.write, ["/tmp"]);
        assert!(sandbox.read.is_empty() && sandbox.network == Network::All);
        let off = r
            .iter()
            .find(|(n, _)| n == "off")
            .unwrap()
            .1
            .as_ref()
            .unwrap();
        assert_eq!(off.is_active, Some(false));
        let remote = &r.iter().find(|(n, _)| n == "remote").unwrap().1;
        assert!(remote.as_ref().unwrap().config.sandbox.is_none());
    }

    #[test]
    fn vscode_and_bare_formats() {
        let r = parse_server_json(
            r#"{"inputs": [], "servers": {"gh": {"type": "http", "url": "https://h/mcp"}}}"#,
        )
        .unwrap();
        assert_eq!(r.len(), 1);
        assert_eq!(
            r[0].1.as_ref().unwrap().transport,
            Some(TransportType::Http)
        );
        let r = parse_server_json(
            r#"{"a": {"command": "x"}, "b": {"type": "sse", "url": "http://h/sse"}}"#,
        )
        .unwrap();
        assert_eq!(r.len(), 2);
    }

    #[test]
    fn bad_entries_fail_alone_and_bad_json_is_clear() {
        let r = parse_server_json(
            r#"{"mcpServers": {"ok": {"command": "x"}, "bad": 3, "worse": {"args": "nope"}}}"#,
        )
        .unwrap();
        assert!(r.iter().find(|(n, _)| n == "ok").unwrap().1.is_ok());
        assert!(r.iter().find(|(n, _)| n == "bad").unwrap().1.is_err());
        let worse = r
            .iter()
            .find(|(n, _)| n == "worse")
            .unwrap()
            .1
            .as_ref()
            .unwrap_err();
        assert!(worse.to_string().contains("args"), "{worse}");
        let e = parse_server_json("{\"mcpServers\": ")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 1"), "{e}");
        assert!(parse_server_json("[1]").is_err());
    }
}
