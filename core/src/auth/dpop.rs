//! DPoP (RFC 9449): access tokens bound to a key the client holds. Each request that uses
//! the token, and each token request, carries a fresh proof: a JWT signed with the key, naming
//! the method and URL (and, to a resource server, a hash of the token), so a stolen token is
//! useless without the key. One ES256 (P-256) key per server, kept with its tokens in the
//! token store, so tokens stay usable across restarts. Servers may demand a nonce in the
//! proofs (`use_dpop_nonce`); the last one each server gave is kept here.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{SystemTime, UNIX_EPOCH};

use aws_lc_rs::digest::{SHA256, digest};
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_json::{Value, json};

/// The one algorithm mcpmux signs proofs with (mandatory to implement for DPoP servers that
/// list algorithms, and the one every server in use accepts).
pub(crate) const ALGORITHM: &str = "ES256";

/// The key that proofs are signed with.
pub(crate) struct DpopKey {
    pair: EcdsaKeyPair,
    /// PKCS#8 DER, as stored.
    pkcs8: Vec<u8>,
}

impl DpopKey {
    /// A new random key.
    pub fn generate() -> Result<Self, String> {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| "cannot generate a DPoP key".to_string())?;
        Self::from_pkcs8(pkcs8.as_ref().to_vec())
    }

    /// The key as stored (base64 PKCS#8).
    pub fn from_stored(text: &str) -> Result<Self, String> {
        let der = STANDARD
            .decode(text)
            .map_err(|_| "the stored DPoP key is not base64".to_string())?;
        Self::from_pkcs8(der)
    }

    fn from_pkcs8(pkcs8: Vec<u8>) -> Result<Self, String> {
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &pkcs8)
            .map_err(|_| "the stored DPoP key is not a P-256 key".to_string())?;
        Ok(DpopKey { pair, pkcs8 })
    }

    /// The key for the token store (base64 PKCS#8; a secret).
    pub fn to_stored(&self) -> String {
        STANDARD.encode(&self.pkcs8)
    }

    /// The public key as a JWK (RFC 7517), in the members' order RFC 7638 hashes.
    pub fn jwk(&self) -> Value {
        // An uncompressed point: 0x04, then x and y, 32 bytes each.
        let point = self.pair.public_key().as_ref();
        json!({
            "crv": "P-256",
            "kty": "EC",
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
            "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
        })
    }

    /// The key's RFC 7638 thumbprint (what a DPoP-bound token's `cnf.jkt` names).
    pub fn thumbprint(&self) -> String {
        let canonical = self.jwk().to_string();
        URL_SAFE_NO_PAD.encode(digest(&SHA256, canonical.as_bytes()).as_ref())
    }

    /// A proof for one request: `method` and `url` (its query and fragment left out, as
    /// `htu` wants), with `access_token` for a resource server (`ath`) and the server's nonce
    /// when it gave one.
    pub fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, String> {
        let header = json!({"typ": "dpop+jwt", "alg": ALGORITHM, "jwk": self.jwk()});
        let mut jti = [0u8; 16];
        rand::fill(&mut jti);
        let iat = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let mut claims = json!({
            "jti": URL_SAFE_NO_PAD.encode(jti),
            "htm": method,
            "htu": target_uri(url),
            "iat": iat,
        });
        if let Some(token) = access_token {
            claims["ath"] = URL_SAFE_NO_PAD
                .encode(digest(&SHA256, token.as_bytes()).as_ref())
                .into();
        }
        if let Some(nonce) = nonce {
            claims["nonce"] = nonce.into();
        }
        let signing_input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = self
            .pair
            .sign(&SystemRandom::new(), signing_input.as_bytes())
            .map_err(|_| "cannot sign a DPoP proof".to_string())?;
        Ok(format!(
            "{signing_input}.{}",
            URL_SAFE_NO_PAD.encode(signature.as_ref())
        ))
    }
}

/// `htu`: the URL without its query and fragment (RFC 9449 section 4.2).
fn target_uri(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut u) => {
            u.set_query(None);
            u.set_fragment(None);
            u.to_string()
        }
        Err(_) => url.split(['?', '#']).next().unwrap_or(url).to_string(),
    }
}

/// Whether an authorization server's metadata offers DPoP with the algorithm mcpmux signs.
pub(crate) fn offered(metadata: &rmcp::transport::auth::AuthorizationMetadata) -> bool {
    metadata
        .additional_fields
        .get("dpop_signing_alg_values_supported")
        .and_then(Value::as_array)
        .is_some_and(|algs| algs.iter().any(|a| a == ALGORITHM))
}

/// Whether an error answer (a 400 from a token endpoint, the `WWW-Authenticate` of a 401)
/// says the server wants a nonce in the proof.
pub(crate) fn wants_nonce(answer: &str) -> bool {
    answer.to_ascii_lowercase().contains("use_dpop_nonce")
}

/// The DPoP state of one server's authorization, shared by its OAuth requests (the token
/// endpoint), its token store entry (which keeps the key) and its MCP requests.
#[derive(Default)]
pub(crate) struct Dpop {
    key: RwLock<Option<Arc<DpopKey>>>,
    /// Where token requests go; proofs are sent there only.
    token_endpoint: RwLock<Option<String>>,
    /// The last nonce of the authorization server, and of the resource server.
    as_nonce: Mutex<Option<String>>,
    rs_nonce: Mutex<Option<String>>,
    /// The current access token is DPoP-bound (`token_type` DPoP), so MCP requests present
    /// it with the DPoP scheme and a proof.
    bound: AtomicBool,
}

impl Dpop {
    pub fn key(&self) -> Option<Arc<DpopKey>> {
        self.key.read().unwrap().clone()
    }

    pub fn set_key(&self, key: Arc<DpopKey>) {
        *self.key.write().unwrap() = Some(key);
    }

    /// Token requests to `token_endpoint` carry proofs from now on (the key must be set).
    pub fn enable(&self, token_endpoint: &str) {
        *self.token_endpoint.write().unwrap() = Some(token_endpoint.to_string());
    }

    /// The key, when a request to `url` with `method` is a token request that needs a proof.
    pub fn for_token_request(&self, method: &str, url: &str) -> Option<Arc<DpopKey>> {
        let endpoint = self.token_endpoint.read().unwrap().clone()?;
        (method == "POST" && target_uri(url) == target_uri(&endpoint))
            .then(|| self.key())
            .flatten()
    }

    pub fn as_nonce(&self) -> Option<String> {
        self.as_nonce.lock().unwrap().clone()
    }

    pub fn set_as_nonce(&self, nonce: String) {
        *self.as_nonce.lock().unwrap() = Some(nonce);
    }

    pub fn rs_nonce(&self) -> Option<String> {
        self.rs_nonce.lock().unwrap().clone()
    }

    pub fn set_rs_nonce(&self, nonce: String) {
        *self.rs_nonce.lock().unwrap() = Some(nonce);
    }

    /// Notes the type of the token the authorization server issued last.
    pub fn token_issued(&self, token_type: &str) {
        self.bound.store(
            token_type.eq_ignore_ascii_case("dpop") && self.key().is_some(),
            Ordering::SeqCst,
        );
    }

    /// The key, when MCP requests must present the token with DPoP.
    pub fn for_resource(&self) -> Option<Arc<DpopKey>> {
        if self.bound.load(Ordering::SeqCst) {
            self.key()
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED, UnparsedPublicKey};

    fn part(jwt: &str, i: usize) -> Value {
        let raw = URL_SAFE_NO_PAD
            .decode(jwt.split('.').nth(i).unwrap())
            .unwrap();
        serde_json::from_slice(&raw).unwrap()
    }

    #[test]
    fn a_proof_is_a_jwt_signed_by_the_key_it_names() {
        let key = DpopKey::generate().unwrap();
        let proof = key
            .proof(
                "POST",
                "https://mcp.example/mcp?x=1#f",
                Some("tok"),
                Some("n1"),
            )
            .unwrap();
        let header = part(&proof, 0);
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(header["alg"], "ES256");
        assert!(header["jwk"].get("d").is_none(), "only the public key");
        let claims = part(&proof, 1);
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "https://mcp.example/mcp");
        assert_eq!(claims["nonce"], "n1");
        assert_eq!(
            claims["ath"],
            URL_SAFE_NO_PAD.encode(digest(&SHA256, b"tok").as_ref())
        );
        let iat = claims["iat"].as_u64().unwrap();
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        assert!(now.abs_diff(iat) < 5);
        // The signature verifies with the public key in the header.
        let jwk = &header["jwk"];
        let mut point = vec![4u8];
        point.extend(URL_SAFE_NO_PAD.decode(jwk["x"].as_str().unwrap()).unwrap());
        point.extend(URL_SAFE_NO_PAD.decode(jwk["y"].as_str().unwrap()).unwrap());
        let (input, signature) = proof.rsplit_once('.').unwrap();
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, &point)
            .verify(
                input.as_bytes(),
                &URL_SAFE_NO_PAD.decode(signature).unwrap(),
            )
            .unwrap();
        // Each proof is new.
        let again = key
            .proof("POST", "https://mcp.example/mcp", None, None)
            .unwrap();
        assert_ne!(part(&again, 1)["jti"], claims["jti"]);
        assert!(part(&again, 1).get("ath").is_none());
    }

    #[test]
    fn the_key_round_trips_through_the_store() {
        let key = DpopKey::generate().unwrap();
        let back = DpopKey::from_stored(&key.to_stored()).unwrap();
        assert_eq!(back.jwk(), key.jwk());
        assert_eq!(back.thumbprint(), key.thumbprint());
        assert_eq!(key.thumbprint().len(), 43);
        assert!(DpopKey::from_stored("not base64!").is_err());
        assert!(DpopKey::from_stored(&STANDARD.encode(b"junk")).is_err());
    }

    #[test]
    fn proofs_go_to_the_token_endpoint_and_bound_tokens_to_the_resource() {
        let dpop = Dpop::default();
        assert!(dpop.for_token_request("POST", "https://as/token").is_none());
        dpop.set_key(Arc::new(DpopKey::generate().unwrap()));
        dpop.enable("https://as/token");
        assert!(dpop.for_token_request("POST", "https://as/token").is_some());
        assert!(dpop.for_token_request("GET", "https://as/token").is_none());
        assert!(
            dpop.for_token_request("POST", "https://as/register")
                .is_none()
        );
        assert!(dpop.for_resource().is_none());
        dpop.token_issued("DPoP");
        assert!(dpop.for_resource().is_some());
        dpop.token_issued("Bearer");
        assert!(dpop.for_resource().is_none());
        assert!(wants_nonce(
            r#"DPoP error="use_dpop_nonce", error_description="x""#
        ));
        assert!(!wants_nonce(r#"Bearer error="invalid_token""#));
    }
}
