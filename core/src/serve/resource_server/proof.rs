//! DPoP proofs (RFC 9449) as a resource server checks them: a request with a DPoP-bound
//! token (`Authorization: DPoP TOKEN`) carries a `DPoP` header, a JWT signed by the key the
//! token is bound to, naming this request's method and URL, the token's hash and a fresh id.
//! A proof is good once: the ids seen recently are kept, so a captured request cannot be
//! replayed.

use std::collections::{HashSet, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use aws_lc_rs::digest::{SHA256, digest};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;

use super::jwt::{Jws, now};

/// How far a proof's `iat` may be from this server's clock.
const WINDOW_SECS: f64 = 300.0;
/// Proof ids kept at most (a proof older than the window is refused anyway).
const MAX_SEEN: usize = 100_000;

#[derive(Deserialize)]
struct ProofClaims {
    #[serde(default)]
    jti: Option<String>,
    #[serde(default)]
    htm: Option<String>,
    #[serde(default)]
    htu: Option<String>,
    #[serde(default)]
    iat: Option<f64>,
    #[serde(default)]
    ath: Option<String>,
}

/// The request a proof must name.
pub(super) struct Target<'a> {
    pub method: &'a str,
    /// The URLs this request may have been sent to (without query), any of which `htu` may
    /// name: the names this server answers to.
    pub urls: &'a [String],
}

/// Proof ids seen within the window, oldest first.
#[derive(Default)]
pub(super) struct Replays {
    seen: Mutex<Seen>,
}

/// The ids, and when each was seen (oldest first), to forget them in order.
#[derive(Default)]
struct Seen {
    ids: HashSet<String>,
    order: VecDeque<(Instant, String)>,
}

impl Replays {
    /// Checks `proof` for a request to `target` with `token`; answers the thumbprint of the
    /// key that signed it (for the token's `cnf.jkt`).
    pub fn check(&self, proof: &str, target: &Target<'_>, token: &str) -> Result<String, String> {
        let jws: Jws<'_, ProofClaims> = Jws::parse(proof, "the DPoP proof")?;
        if jws.header.typ.as_deref() != Some("dpop+jwt") {
            return Err("the DPoP proof's type is not dpop+jwt".into());
        }
        let key = jws
            .header
            .jwk
            .as_ref()
            .ok_or("the DPoP proof carries no public key (`jwk`)")?;
        if key.d.is_some() {
            return Err("the DPoP proof carries a private key".into());
        }
        jws.verify(key)
            .map_err(|e| format!("the DPoP proof: {e}"))?;
        let claims = &jws.claims;
        if claims.htm.as_deref() != Some(target.method) {
            return Err(format!(
                "the DPoP proof is not for a {} request",
                target.method
            ));
        }
        let htu = claims.htu.as_deref().unwrap_or_default();
        let htu = htu.split(['?', '#']).next().unwrap_or_default();
        if !target.urls.iter().any(|u| same_url(u, htu)) {
            return Err(format!(
                "the DPoP proof is for {htu}, not for this server's URL"
            ));
        }
        let iat = claims.iat.ok_or("the DPoP proof has no `iat`")?;
        if (iat - now()).abs() > WINDOW_SECS {
            return Err("the DPoP proof is too old or from the future (check the clock)".into());
        }
        let hash = URL_SAFE_NO_PAD.encode(digest(&SHA256, token.as_bytes()).as_ref());
        if claims.ath.as_deref() != Some(hash.as_str()) {
            return Err("the DPoP proof is not for this token (`ath`)".into());
        }
        let jti = claims
            .jti
            .as_deref()
            .filter(|j| !j.is_empty())
            .ok_or("the DPoP proof has no id (`jti`)")?;
        self.first_use(jti)?;
        key.thumbprint()
    }

    /// Records `jti`, refusing one already seen within the window.
    fn first_use(&self, jti: &str) -> Result<(), String> {
        let window = Duration::from_secs_f64(2.0 * WINDOW_SECS);
        let mut guard = self.seen.lock().unwrap();
        let Seen { ids, order } = &mut *guard;
        while let Some((at, id)) = order.front() {
            if at.elapsed() < window && order.len() < MAX_SEEN {
                break;
            }
            ids.remove(id);
            order.pop_front();
        }
        if !ids.insert(jti.to_string()) {
            return Err("the DPoP proof was used before (replayed)".into());
        }
        order.push_back((Instant::now(), jti.to_string()));
        Ok(())
    }
}

/// Whether two URLs are the same, as RFC 9449 compares `htu` (scheme and host in any case,
/// default ports left out).
fn same_url(a: &str, b: &str) -> bool {
    match (url::Url::parse(a), url::Url::parse(b)) {
        (Ok(a), Ok(b)) => {
            a.scheme() == b.scheme()
                && a.host() == b.host()
                && a.port_or_known_default() == b.port_or_known_default()
                && a.path() == b.path()
        }
        _ => false,
    }
}
