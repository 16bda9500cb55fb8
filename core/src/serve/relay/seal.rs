//! What a served pool hands a client to carry back, sealed (encrypted and authenticated) with
//! a key the replicas share, so that any replica can open it and no client can read or alter
//! it: legacy session ids, and the `requestState` of a 2026-07-28 call's input rounds. Each
//! kind is sealed for its purpose; one never opens as another.

use aws_lc_rs::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use aws_lc_rs::digest::{SHA256, digest};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::TryRngCore;
use rand::rngs::OsRng;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{Error, Result};

/// Fewest characters a shared session key may have: it stands between anyone who can reach a
/// replica and every session's client parameters.
pub const MIN_SESSION_KEY_LEN: usize = 16;

/// Seals and opens values with the replicas' shared key.
///
/// Its random numbers (a key, nonces) come from the operating system, not from aws-lc's
/// generator: that one seeds itself on first use with CPU jitter measurements, about 100 ms of
/// CPU, which every `serve --stdio` start would pay before its first answer.
pub(crate) struct Seal {
    key: LessSafeKey,
}

impl Seal {
    /// A seal keyed by `secret` (the same on every replica), or by a random key when there is
    /// none: then only this process can open what it sealed, as with plain in-memory state.
    pub(crate) fn new(secret: Option<&str>) -> Result<Seal> {
        let mut key = [0u8; 32];
        match secret {
            Some(secret) => {
                check_key(secret)?;
                let derived = digest(
                    &SHA256,
                    [b"mcpmux serve session key\0", secret.as_bytes()]
                        .concat()
                        .as_slice(),
                );
                key.copy_from_slice(derived.as_ref());
            }
            None => OsRng.try_fill_bytes(&mut key).map_err(|_| {
                Error::invalid("the system has no random numbers for a session key")
            })?,
        }
        let key = UnboundKey::new(&CHACHA20_POLY1305, &key)
            .map_err(|_| Error::invalid("a session key of the wrong length"))?;
        Ok(Seal {
            key: LessSafeKey::new(key),
        })
    }

    /// `value` sealed for `purpose`, as URL-safe text.
    pub(crate) fn seal(&self, purpose: &[u8], value: &impl Serialize) -> Option<String> {
        let mut sealed = serde_json::to_vec(value).ok()?;
        let mut nonce = [0u8; NONCE_LEN];
        OsRng.try_fill_bytes(&mut nonce).ok()?;
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(purpose),
                &mut sealed,
            )
            .ok()?;
        let mut bytes = nonce.to_vec();
        bytes.extend_from_slice(&sealed);
        Some(URL_SAFE_NO_PAD.encode(bytes))
    }

    /// What this key sealed as `outer` for `purpose`; `None` for anything else.
    pub(crate) fn open<T: DeserializeOwned>(&self, purpose: &[u8], outer: &str) -> Option<T> {
        let bytes = URL_SAFE_NO_PAD.decode(outer).ok()?;
        if bytes.len() < NONCE_LEN {
            return None;
        }
        let (nonce, sealed) = bytes.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
        let mut sealed = sealed.to_vec();
        let plain = self
            .key
            .open_in_place(nonce, Aad::from(purpose), &mut sealed)
            .ok()?;
        serde_json::from_slice(plain).ok()
    }
}

/// Refuses a shared key too short to keep sessions apart.
pub fn check_key(secret: &str) -> Result<()> {
    if secret.chars().count() < MIN_SESSION_KEY_LEN {
        return Err(Error::invalid(format!(
            "the session key has fewer than {MIN_SESSION_KEY_LEN} characters: give every \
             replica the same long random secret (e.g. the output of `openssl rand -hex 32`)"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PURPOSE: &[u8] = b"a test";

    #[test]
    fn replicas_with_one_key_open_each_others_values() {
        let key = "a shared secret of some length";
        let (a, b) = (Seal::new(Some(key)).unwrap(), Seal::new(Some(key)).unwrap());
        let outer = a.seal(PURPOSE, &("rmcp-id", 7)).unwrap();
        assert!(outer.bytes().all(|c| (0x21..=0x7e).contains(&c)), "{outer}");
        assert_eq!(b.open(PURPOSE, &outer), Some(("rmcp-id".to_string(), 7)));
    }

    #[test]
    fn other_keys_purposes_and_altered_text_open_nothing() {
        let a = Seal::new(Some("a shared secret of some length")).unwrap();
        let other = Seal::new(Some("another secret of some length")).unwrap();
        let random = Seal::new(None).unwrap();
        let outer = a.seal(PURPOSE, &"value").unwrap();
        assert!(other.open::<String>(PURPOSE, &outer).is_none());
        assert!(random.open::<String>(PURPOSE, &outer).is_none());
        assert!(a.open::<String>(b"another purpose", &outer).is_none());
        let mut altered = outer.into_bytes();
        let last = altered.len() - 3;
        altered[last] = if altered[last] == b'A' { b'B' } else { b'A' };
        assert!(
            a.open::<String>(PURPOSE, std::str::from_utf8(&altered).unwrap())
                .is_none()
        );
        assert!(a.open::<String>(PURPOSE, "not-sealed").is_none());
        assert!(a.open::<String>(PURPOSE, "").is_none());
    }

    #[test]
    fn a_short_key_is_refused_with_what_to_use() {
        let error = Seal::new(Some("short")).err().unwrap().to_string();
        assert!(error.contains("openssl rand -hex 32"), "{error}");
    }
}
