//! JSON Web Tokens as this resource server reads them: a compact JWS (header, claims,
//! signature), its claims checked as RFC 9068 has a resource server check a JWT access token.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::keys::{ALGORITHMS, Jwk};

/// Tokens larger than this are refused unread.
const MAX_TOKEN: usize = 16 * 1024;
/// Clock difference allowed between the issuer and this server.
pub(super) const LEEWAY_SECS: f64 = 60.0;

/// A JWS's protected header: the members read here.
#[derive(Debug, Deserialize)]
pub(super) struct Header {
    pub alg: String,
    #[serde(default)]
    pub kid: Option<String>,
    #[serde(default)]
    pub typ: Option<String>,
    /// Extensions the signer says must be understood: none are, so a token with any is refused.
    #[serde(default)]
    pub crit: Option<serde_json::Value>,
    /// A DPoP proof's own public key.
    #[serde(default)]
    pub jwk: Option<Jwk>,
}

/// A compact JWS, split and decoded, its signature not yet checked.
pub(super) struct Jws<'a, C> {
    pub header: Header,
    pub claims: C,
    signing_input: &'a str,
    signature: Vec<u8>,
}

impl<'a, C: DeserializeOwned> Jws<'a, C> {
    /// Splits and decodes `text`; `what` names it in errors ("the access token").
    pub fn parse(text: &'a str, what: &str) -> Result<Jws<'a, C>, String> {
        if text.len() > MAX_TOKEN {
            return Err(format!("{what} is larger than 16 KiB"));
        }
        let not_jwt = || format!("{what} is not a JWT");
        let (signing_input, signature) = text.rsplit_once('.').ok_or_else(not_jwt)?;
        let (header, claims) = signing_input.split_once('.').ok_or_else(not_jwt)?;
        let decode = |part: &str| URL_SAFE_NO_PAD.decode(part).map_err(|_| not_jwt());
        let header: Header = serde_json::from_slice(&decode(header)?)
            .map_err(|e| format!("{what}'s header is not valid: {e}"))?;
        let claims: C = serde_json::from_slice(&decode(claims)?)
            .map_err(|e| format!("{what}'s claims are not valid: {e}"))?;
        if header.crit.is_some() {
            return Err(format!(
                "{what} has critical extensions (`crit`) not understood here"
            ));
        }
        if !ALGORITHMS.contains(&header.alg.as_str()) {
            return Err(format!(
                "{what} is signed with {}; accepted: {}",
                header.alg,
                ALGORITHMS.join(", ")
            ));
        }
        Ok(Jws {
            header,
            claims,
            signing_input,
            signature: decode(signature)?,
        })
    }

    /// Checks the signature with `key`.
    pub fn verify(&self, key: &Jwk) -> Result<(), String> {
        key.verify(
            &self.header.alg,
            self.signing_input.as_bytes(),
            &self.signature,
        )
    }
}

/// One string or several (`aud`, `scp`).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn items(&self) -> Vec<&str> {
        match self {
            OneOrMany::One(s) => s.split(' ').filter(|s| !s.is_empty()).collect(),
            OneOrMany::Many(v) => v.iter().map(String::as_str).collect(),
        }
    }
}

/// An access token's claims: the ones RFC 9068 has a resource server check, and whom the
/// token is for.
#[derive(Debug, Deserialize)]
pub(super) struct AccessClaims {
    #[serde(default)]
    pub iss: Option<String>,
    #[serde(default)]
    pub sub: Option<String>,
    #[serde(default)]
    pub aud: Option<OneOrMany>,
    #[serde(default)]
    pub exp: Option<f64>,
    #[serde(default)]
    pub nbf: Option<f64>,
    /// Space-separated scopes (RFC 9068, RFC 8693).
    #[serde(default)]
    pub scope: Option<String>,
    /// Scopes as some issuers write them (Microsoft Entra ID, Okta).
    #[serde(default)]
    pub scp: Option<OneOrMany>,
    #[serde(default)]
    pub client_id: Option<String>,
    #[serde(default)]
    pub azp: Option<String>,
    /// The key a DPoP-bound token is bound to (`cnf.jkt`, RFC 9449).
    #[serde(default)]
    pub cnf: Option<Confirmation>,
}

#[derive(Debug, Deserialize)]
pub(super) struct Confirmation {
    #[serde(default)]
    pub jkt: Option<String>,
}

/// The `typ` values of a JWT access token, and the plain ones issuers also use for them
/// (Microsoft Entra ID, Auth0, Keycloak): the audience check keeps ID tokens out, whose
/// audience is a client.
const ACCESS_TYPES: &[&str] = &["at+jwt", "application/at+jwt", "jwt"];

impl AccessClaims {
    /// Checks the token's type, issuer, audience and time.
    pub fn check(
        &self,
        typ: Option<&str>,
        issuer: &str,
        audiences: &[String],
    ) -> Result<(), String> {
        if let Some(typ) = typ
            && !ACCESS_TYPES.contains(&typ.to_ascii_lowercase().as_str())
        {
            return Err(format!(
                "the token's type is {typ}, not an access token (at+jwt)"
            ));
        }
        if self.iss.as_deref() != Some(issuer) {
            return Err(format!(
                "the token was issued by {}, not by {issuer}",
                self.iss.as_deref().unwrap_or("nobody it names")
            ));
        }
        let aud = self.aud.as_ref().map(OneOrMany::items).unwrap_or_default();
        if !aud.iter().any(|a| audiences.iter().any(|want| want == a)) {
            return Err(format!(
                "the token is for {}, not for this server ({}): ask the issuer for a token \
                 with resource={}",
                if aud.is_empty() {
                    "no audience".to_string()
                } else {
                    aud.join(", ")
                },
                audiences.join(" or "),
                audiences.first().map(String::as_str).unwrap_or_default(),
            ));
        }
        let now = now();
        match self.exp {
            None => return Err("the token has no expiry (`exp`)".into()),
            Some(exp) if exp + LEEWAY_SECS <= now => return Err("the token has expired".into()),
            Some(_) => {}
        }
        if self.nbf.is_some_and(|nbf| nbf - LEEWAY_SECS > now) {
            return Err("the token is not valid yet (`nbf`)".into());
        }
        Ok(())
    }

    /// The scopes the token carries.
    pub fn scopes(&self) -> Vec<String> {
        let mut scopes: Vec<String> = self
            .scope
            .as_deref()
            .unwrap_or_default()
            .split(' ')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        if let Some(scp) = &self.scp {
            scopes.extend(scp.items().into_iter().map(str::to_string));
        }
        scopes
    }
}

/// Seconds since the epoch.
pub(super) fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
}

#[cfg(test)]
mod properties {
    use super::*;
    use crate::arbitrary;
    use proptest::prelude::*;
    use serde_json::{Value, json};

    fn encoded(value: &str) -> String {
        URL_SAFE_NO_PAD.encode(value)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// A token's header and claims are what serde reads from its parts, written any way.
        #[test]
        fn the_parts_are_what_serde_reads(
            claims in arbitrary::map(),
            kid in prop::option::of(arbitrary::string(8)),
            alg in prop::sample::select(ALGORITHMS.to_vec()),
            style in arbitrary::style(),
            signature in prop::collection::vec(any::<u8>(), 0..80),
        ) {
            let mut header = vec![("alg", Value::from(alg)), ("typ", Value::from("at+jwt"))];
            if let Some(kid) = &kid {
                header.push(("kid", Value::from(kid.clone())));
            }
            let claims_text = arbitrary::written(&Value::Object(claims.clone()), style);
            let token = format!(
                "{}.{}.{}",
                encoded(&arbitrary::object(&header, style)),
                encoded(&claims_text),
                URL_SAFE_NO_PAD.encode(&signature)
            );
            let jws = Jws::<Value>::parse(&token, "the token").unwrap();
            prop_assert_eq!(&jws.header.alg, alg);
            prop_assert_eq!(&jws.header.kid, &kid);
            prop_assert_eq!(jws.claims, Value::Object(claims));
            prop_assert_eq!(jws.signature, signature);
        }

        /// Text of no shape, or a token broken anywhere: an error saying so, never a panic.
        #[test]
        fn a_broken_token_is_refused_not_misread(
            text in "[A-Za-z0-9_.=+/-]{0,120}",
            at in any::<usize>(),
            how in any::<u8>(),
        ) {
            let _ = Jws::<Value>::parse(&text, "the token");
            let good = format!(
                "{}.{}.{}",
                encoded(&json!({"alg": "ES256"}).to_string()),
                encoded(&json!({"sub": "a"}).to_string()),
                encoded("sig")
            );
            let broken = arbitrary::mutated(good.as_bytes(), at, how);
            if let Ok(broken) = std::str::from_utf8(&broken)
                && let Ok(jws) = Jws::<Value>::parse(broken, "the token")
            {
                // What still parses reads as serde reads its parts.
                let parts: Vec<&str> = broken.split('.').collect();
                let claims: Value =
                    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
                prop_assert_eq!(jws.claims, claims);
            }
        }
    }
}
