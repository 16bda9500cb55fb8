//! The issuer's signing keys (its JWK Set, RFC 7517), and checking a signature with one. The
//! set is read at start and read again when a token names a key it lacks (the issuer rotated
//! its keys) or when it is an hour old, at most once per [`REFETCH_GAP`], so a flood of tokens
//! with made-up key ids cannot turn into a flood of requests to the issuer.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use aws_lc_rs::digest::{SHA256, digest};
use aws_lc_rs::signature::{self, RsaPublicKeyComponents, UnparsedPublicKey};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;

use super::fetch::Fetcher;

/// The least time between two reads of the key set.
const REFETCH_GAP: Duration = Duration::from_secs(10);
/// How long a key set is trusted to be current.
const FRESH_FOR: Duration = Duration::from_secs(3600);

/// One public key of a JWK Set: the members this module uses.
#[derive(Debug, Clone, Deserialize)]
pub(super) struct Jwk {
    pub kty: String,
    #[serde(default)]
    pub kid: Option<String>,
    #[serde(default)]
    pub alg: Option<String>,
    #[serde(default, rename = "use")]
    pub use_: Option<String>,
    #[serde(default)]
    pub crv: Option<String>,
    #[serde(default)]
    pub n: Option<String>,
    #[serde(default)]
    pub e: Option<String>,
    #[serde(default)]
    pub x: Option<String>,
    #[serde(default)]
    pub y: Option<String>,
    /// A private key's secret part: a public key never has one.
    #[serde(default)]
    pub d: Option<String>,
}

/// The signature algorithms accepted (asymmetric only: `none` and the HMAC ones would let
/// anyone who knows the key, or nobody, sign).
pub(super) const ALGORITHMS: &[&str] = &[
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA", "Ed25519",
];

impl Jwk {
    /// Whether this key may check a signature made with `alg`.
    fn fits(&self, alg: &str) -> bool {
        let kty = match alg {
            "EdDSA" | "Ed25519" => "OKP",
            a if a.starts_with("ES") => "EC",
            _ => "RSA",
        };
        self.kty == kty
            && self.use_.as_deref().is_none_or(|u| u == "sig")
            && self.alg.as_deref().is_none_or(|a| a == alg)
    }

    /// Checks that `signature` is this key's, made with `alg`, over `message`.
    pub fn verify(&self, alg: &str, message: &[u8], signature: &[u8]) -> Result<(), String> {
        if !self.fits(alg) {
            return Err(format!("the key does not sign with {alg}"));
        }
        let bad = |_| "the signature does not verify".to_string();
        match alg {
            "RS256" => self.rsa(&signature::RSA_PKCS1_2048_8192_SHA256, message, signature),
            "RS384" => self.rsa(&signature::RSA_PKCS1_2048_8192_SHA384, message, signature),
            "RS512" => self.rsa(&signature::RSA_PKCS1_2048_8192_SHA512, message, signature),
            "PS256" => self.rsa(&signature::RSA_PSS_2048_8192_SHA256, message, signature),
            "PS384" => self.rsa(&signature::RSA_PSS_2048_8192_SHA384, message, signature),
            "PS512" => self.rsa(&signature::RSA_PSS_2048_8192_SHA512, message, signature),
            "ES256" => {
                let point = self.point("P-256", 32)?;
                UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, point)
                    .verify(message, signature)
                    .map_err(bad)
            }
            "ES384" => {
                let point = self.point("P-384", 48)?;
                UnparsedPublicKey::new(&signature::ECDSA_P384_SHA384_FIXED, point)
                    .verify(message, signature)
                    .map_err(bad)
            }
            "EdDSA" | "Ed25519" => {
                if self.crv.as_deref() != Some("Ed25519") {
                    return Err("only Ed25519 keys are accepted for EdDSA".into());
                }
                UnparsedPublicKey::new(&signature::ED25519, member(&self.x, "x")?)
                    .verify(message, signature)
                    .map_err(bad)
            }
            other => Err(format!("the algorithm {other} is not accepted")),
        }
    }

    fn rsa(
        &self,
        params: &'static signature::RsaParameters,
        message: &[u8],
        signature: &[u8],
    ) -> Result<(), String> {
        let key = RsaPublicKeyComponents {
            n: member(&self.n, "n")?,
            e: member(&self.e, "e")?,
        };
        key.verify(params, message, signature)
            .map_err(|_| "the signature does not verify".to_string())
    }

    /// An EC key as an uncompressed point: 0x04, x, y.
    fn point(&self, curve: &str, size: usize) -> Result<Vec<u8>, String> {
        if self.crv.as_deref() != Some(curve) {
            return Err(format!("the key is not on {curve}"));
        }
        let (x, y) = (member(&self.x, "x")?, member(&self.y, "y")?);
        if x.len() != size || y.len() != size {
            return Err(format!("the key's coordinates are not {size} bytes"));
        }
        Ok([&[4u8][..], &x, &y].concat())
    }

    /// The key's RFC 7638 thumbprint: what a DPoP-bound token's `cnf.jkt` names.
    pub fn thumbprint(&self) -> Result<String, String> {
        let text = |v: &Option<String>, name: &str| {
            v.clone().ok_or_else(|| format!("the key has no `{name}`"))
        };
        // The required members only, in lexicographic order, without spaces.
        let canonical = match self.kty.as_str() {
            "EC" => format!(
                r#"{{"crv":"{}","kty":"EC","x":"{}","y":"{}"}}"#,
                text(&self.crv, "crv")?,
                text(&self.x, "x")?,
                text(&self.y, "y")?
            ),
            "RSA" => format!(
                r#"{{"e":"{}","kty":"RSA","n":"{}"}}"#,
                text(&self.e, "e")?,
                text(&self.n, "n")?
            ),
            "OKP" => format!(
                r#"{{"crv":"{}","kty":"OKP","x":"{}"}}"#,
                text(&self.crv, "crv")?,
                text(&self.x, "x")?
            ),
            other => return Err(format!("keys of type {other} are not accepted")),
        };
        Ok(URL_SAFE_NO_PAD.encode(digest(&SHA256, canonical.as_bytes()).as_ref()))
    }
}

/// A base64url member of a key, decoded.
fn member(value: &Option<String>, name: &str) -> Result<Vec<u8>, String> {
    let text = value
        .as_deref()
        .ok_or_else(|| format!("the key has no `{name}`"))?;
    URL_SAFE_NO_PAD
        .decode(text)
        .map_err(|_| format!("the key's `{name}` is not base64url"))
}

#[derive(Deserialize)]
struct JwkSet {
    keys: Vec<serde_json::Value>,
}

/// What was last read of the key set.
struct Read {
    keys: Arc<Vec<Jwk>>,
    at: Instant,
}

/// The issuer's key set, as last read from its `jwks_uri`.
pub(super) struct KeySet {
    uri: String,
    fetcher: Fetcher,
    read: RwLock<Read>,
    /// One read at a time; holds when the last one was tried.
    reading: tokio::sync::Mutex<Instant>,
    /// The least time between two reads ([`REFETCH_GAP`] but in tests).
    gap: Duration,
}

impl KeySet {
    /// Reads the set at `uri` (an error says why it could not be used).
    pub async fn load(uri: String, fetcher: Fetcher) -> Result<KeySet, String> {
        KeySet::load_every(uri, fetcher, REFETCH_GAP).await
    }

    /// [`KeySet::load`], read again at most once per `gap`.
    async fn load_every(uri: String, fetcher: Fetcher, gap: Duration) -> Result<KeySet, String> {
        let keys = read(&fetcher, &uri).await?;
        let now = Instant::now();
        Ok(KeySet {
            uri,
            fetcher,
            read: RwLock::new(Read {
                keys: Arc::new(keys),
                at: now,
            }),
            reading: tokio::sync::Mutex::new(now),
            gap,
        })
    }

    /// The key a token signed with `alg` names (by `kid`, or the only key that fits when it
    /// names none), reading the set again when it lacks it.
    pub async fn find(&self, kid: Option<&str>, alg: &str) -> Result<Jwk, String> {
        let (keys, at) = self.current();
        if let Some(key) = pick(&keys, kid, alg)
            && at.elapsed() < FRESH_FOR
        {
            return Ok(key);
        }
        let keys = self.reread().await;
        pick(&keys, kid, alg).ok_or_else(|| match kid {
            Some(kid) => format!("the issuer has no signing key `{kid}` for {alg}"),
            None => format!("the token names no key and the issuer has no single {alg} key"),
        })
    }

    fn current(&self) -> (Arc<Vec<Jwk>>, Instant) {
        let read = self.read.read().unwrap();
        (read.keys.clone(), read.at)
    }

    /// Reads the set again unless it was tried within the gap; answers the keys known after
    /// (the old ones when the read fails).
    async fn reread(&self) -> Arc<Vec<Jwk>> {
        let mut tried = self.reading.lock().await;
        if tried.elapsed() >= self.gap {
            *tried = Instant::now();
            match read(&self.fetcher, &self.uri).await {
                Ok(keys) => {
                    *self.read.write().unwrap() = Read {
                        keys: Arc::new(keys),
                        at: Instant::now(),
                    };
                }
                Err(e) => tracing::warn!("serve: reading the issuer's keys again failed: {e}"),
            }
        }
        self.current().0
    }
}

/// Reads a JWK Set, keeping the public keys this module can use.
async fn read(fetcher: &Fetcher, uri: &str) -> Result<Vec<Jwk>, String> {
    let set: JwkSet = fetcher.json(uri).await?;
    let keys: Vec<Jwk> = set
        .keys
        .into_iter()
        .filter_map(|k| serde_json::from_value::<Jwk>(k).ok())
        .filter(|k| k.d.is_none() && k.use_.as_deref().is_none_or(|u| u == "sig"))
        .collect();
    if keys.is_empty() {
        return Err(format!("{uri} holds no public signing key"));
    }
    Ok(keys)
}

fn pick(keys: &[Jwk], kid: Option<&str>, alg: &str) -> Option<Jwk> {
    match kid {
        Some(kid) => keys
            .iter()
            .find(|k| k.kid.as_deref() == Some(kid) && k.fits(alg)),
        None => {
            let mut fitting = keys.iter().filter(|k| k.fits(alg));
            let only = fitting.next()?;
            fitting.next().is_none().then_some(only)
        }
    }
    .cloned()
}

#[cfg(test)]
impl KeySet {
    /// A set of `keys` as if read from `uri`, not read again within the test's life.
    pub fn fixed(uri: &str, keys: Vec<Jwk>) -> KeySet {
        let now = Instant::now();
        KeySet {
            uri: uri.into(),
            fetcher: Fetcher::new().unwrap(),
            read: RwLock::new(Read {
                keys: Arc::new(keys),
                at: now,
            }),
            reading: tokio::sync::Mutex::new(now),
            gap: REFETCH_GAP,
        }
    }

    /// [`KeySet::load`] with a gap short enough for a test to wait out.
    pub async fn load_with_gap(uri: String, gap: Duration) -> Result<KeySet, String> {
        KeySet::load_every(uri, Fetcher::new()?, gap).await
    }
}
