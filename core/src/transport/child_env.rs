//! The environment a stdio server starts with. As the official SDKs spawn a server: a cleared
//! environment, then the few variables a program needs to run as the user (an allow-list),
//! then the record's own `env`. A server inherits nothing else of the host's, so the secrets
//! a host keeps in its environment (the gateway's token and session key, a model provider's
//! key, whatever an embedding application holds) never reach a server that did not ask for
//! them by name. A record with `inheritEnv: true` gets the host's whole environment instead,
//! for a server that needs more (a toolchain's variables, a cloud SDK's profile), but still
//! without mcpmux's own secrets, which only the record's `env` can hand to a server.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};

/// The variables of mcpmux's own secrets: the gateway's bearer token and session key (with
/// either, a server could call every other server past its clients' profiles, or open every
/// sealed session) and the agent's model keys. Only a record's `env` passes one on.
pub(crate) const OWN_SECRETS: &[&str] = &[
    "MCPMUX_SERVE_TOKEN",
    "MCPMUX_SERVE_SESSION_KEY",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
];

/// What a server inherits by default: the Python and TypeScript SDKs' list (who the user is,
/// where programs are, the terminal), with the locale, the temporary folder and the proxy
/// settings, which a server needs to behave as the user's other programs do.
#[cfg(not(windows))]
const INHERITED: &[&str] = &[
    "HOME",
    "LOGNAME",
    "PATH",
    "SHELL",
    "TERM",
    "USER",
    "LANG",
    "LANGUAGE",
    "TMPDIR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
];

/// The SDKs' Windows list, with the proxy settings.
#[cfg(windows)]
const INHERITED: &[&str] = &[
    "APPDATA",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PATH",
    "PATHEXT",
    "PROCESSOR_ARCHITECTURE",
    "PROGRAMFILES",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "TMP",
    "USERNAME",
    "USERPROFILE",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
];

/// Whether `name` is one of `names`: as written on Unix, whatever its case on Windows (where
/// `Path` and `PATH` are one variable).
fn named(names: &[&str], name: &str) -> bool {
    if cfg!(windows) {
        names.iter().any(|n| n.eq_ignore_ascii_case(name))
    } else {
        names.contains(&name)
    }
}

/// Whether a server that did not ask for more inherits the host's `name`.
fn inherited(name: &str) -> bool {
    named(INHERITED, name) || name.starts_with("LC_")
}

/// The environment of a server whose record has `env` and `inherit_all` (its `inheritEnv`),
/// started by a host whose own environment is `host`.
pub(crate) fn child_env(
    env: &BTreeMap<String, String>,
    inherit_all: bool,
    host: impl IntoIterator<Item = (OsString, OsString)>,
) -> Vec<(OsString, OsString)> {
    let mut out: Vec<(OsString, OsString)> = host
        .into_iter()
        .filter(|(name, value)| passes(name, value, inherit_all))
        .collect();
    // The record's own values win over the host's.
    out.retain(|(name, _)| !env.keys().any(|k| same_name(OsStr::new(k), name)));
    out.extend(env.iter().map(|(k, v)| (k.into(), v.into())));
    out
}

/// Whether the host's variable `name` goes to the server.
fn passes(name: &OsStr, value: &OsStr, inherit_all: bool) -> bool {
    let Some(name) = name.to_str() else {
        // A name that is not Unicode is on no list: only a server that takes everything
        // gets it.
        return inherit_all;
    };
    // A shell function exported by bash (`BASH_FUNC_x%%=() { ...`) is code a shell server
    // would run: the TypeScript SDK leaves those out too.
    if value.as_encoded_bytes().starts_with(b"()") {
        return false;
    }
    !named(OWN_SECRETS, name) && (inherit_all || inherited(name))
}

fn same_name(a: &OsStr, b: &OsStr) -> bool {
    if cfg!(windows) {
        a.eq_ignore_ascii_case(b)
    } else {
        a == b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs.iter().map(|(k, v)| (k.into(), v.into())).collect()
    }

    fn names(env: &[(OsString, OsString)]) -> Vec<String> {
        let mut out: Vec<String> = env
            .iter()
            .map(|(k, v)| format!("{}={}", k.to_string_lossy(), v.to_string_lossy()))
            .collect();
        out.sort();
        out
    }

    const HOST: &[(&str, &str)] = &[
        ("PATH", "/usr/bin"),
        ("HOME", "/home/u"),
        ("LC_ALL", "C.UTF-8"),
        ("https_proxy", "http://proxy:3128"),
        ("MCPMUX_SERVE_TOKEN", "gateway-token-0123456789"),
        ("OPENAI_API_KEY", "sk-host"),
        ("AWS_SECRET_ACCESS_KEY", "aws-secret"),
        ("BASH_FUNC_f%%", "() { echo hi; }"),
    ];

    #[test]
    fn a_server_gets_the_allow_list_and_its_own_env() {
        let env = BTreeMap::from([("API_TOKEN".to_string(), "t".to_string())]);
        assert_eq!(
            names(&child_env(&env, false, host(HOST))),
            [
                "API_TOKEN=t",
                "HOME=/home/u",
                "LC_ALL=C.UTF-8",
                "PATH=/usr/bin",
                "https_proxy=http://proxy:3128"
            ]
        );
    }

    #[test]
    fn inheriting_everything_still_withholds_mcpmux_secrets_and_shell_functions() {
        let got = names(&child_env(&BTreeMap::new(), true, host(HOST)));
        assert!(got.contains(&"AWS_SECRET_ACCESS_KEY=aws-secret".to_string()));
        assert!(!got.iter().any(|v| v.starts_with("MCPMUX_SERVE_TOKEN")));
        assert!(!got.iter().any(|v| v.starts_with("OPENAI_API_KEY")));
        assert!(!got.iter().any(|v| v.starts_with("BASH_FUNC")));
    }

    #[test]
    fn the_record_names_a_secret_to_pass_it_and_its_values_win() {
        let env = BTreeMap::from([
            ("OPENAI_API_KEY".to_string(), "sk-server".to_string()),
            ("PATH".to_string(), "/opt/bin".to_string()),
        ]);
        let got = names(&child_env(&env, false, host(HOST)));
        assert!(got.contains(&"OPENAI_API_KEY=sk-server".to_string()));
        assert!(got.contains(&"PATH=/opt/bin".to_string()));
        assert!(!got.contains(&"PATH=/usr/bin".to_string()));
    }
}
