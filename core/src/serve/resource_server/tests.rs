use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::rsa::{KeyPair as RsaKeyPair, KeySize};
use aws_lc_rs::signature::{
    ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, Ed25519KeyPair, KeyPair, RSA_PKCS1_SHA256,
    RSA_PSS_SHA256,
};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

use std::sync::Arc;
use std::time::Duration;

use super::fetch::Fetcher;
use super::keys::{Jwk, KeySet};
use super::*;
use crate::auth::DpopKey;
use crate::test_site::{Answer, Site};

const ISSUER: &str = "https://auth.example.com";
const RESOURCE: &str = "http://127.0.0.1:8808/mcp";

/// An issuer's signing keys, and tokens signed with them.
struct Issuer {
    ec: EcdsaKeyPair,
    rsa: RsaKeyPair,
    ed: Ed25519KeyPair,
}

fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

impl Issuer {
    fn new() -> Issuer {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        Issuer {
            ec: EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref()).unwrap(),
            rsa: RsaKeyPair::generate(KeySize::Rsa2048).unwrap(),
            ed: Ed25519KeyPair::generate().unwrap(),
        }
    }

    fn jwks(&self) -> Vec<Jwk> {
        serde_json::from_value(self.jwks_json()).unwrap()
    }

    /// The public keys, as the issuer publishes them (the `keys` of its JWK Set).
    fn jwks_json(&self) -> Value {
        let point = self.ec.public_key().as_ref();
        let public = self.rsa.public_key();
        json!([
            {"kty": "EC", "kid": "ec", "crv": "P-256", "x": b64(&point[1..33]),
             "y": b64(&point[33..65]), "use": "sig"},
            {"kty": "RSA", "kid": "rsa", "alg": "RS256",
             "n": b64(public.modulus().big_endian_without_leading_zero()),
             "e": b64(public.exponent().big_endian_without_leading_zero())},
            {"kty": "RSA", "kid": "pss",
             "n": b64(public.modulus().big_endian_without_leading_zero()),
             "e": b64(public.exponent().big_endian_without_leading_zero())},
            {"kty": "OKP", "kid": "ed", "crv": "Ed25519",
             "x": b64(self.ed.public_key().as_ref())},
        ])
    }

    fn sign(&self, header: Value, claims: Value) -> String {
        let input = format!(
            "{}.{}",
            b64(header.to_string().as_bytes()),
            b64(claims.to_string().as_bytes())
        );
        let rng = SystemRandom::new();
        let signature = match header["alg"].as_str() {
            Some(alg @ ("RS256" | "PS256")) => {
                let padding = match alg {
                    "RS256" => &RSA_PKCS1_SHA256,
                    _ => &RSA_PSS_SHA256,
                };
                let mut sig = vec![0; self.rsa.public_modulus_len()];
                self.rsa
                    .sign(padding, &rng, input.as_bytes(), &mut sig)
                    .unwrap();
                sig
            }
            Some("EdDSA") => self.ed.sign(input.as_bytes()).as_ref().to_vec(),
            _ => self
                .ec
                .sign(&rng, input.as_bytes())
                .unwrap()
                .as_ref()
                .to_vec(),
        };
        format!("{input}.{}", b64(&signature))
    }

    /// A good token: ES256, for RESOURCE, an hour to live, with `claims` over the defaults.
    fn token(&self, claims: Value) -> String {
        self.token_with(
            json!({"alg": "ES256", "kid": "ec", "typ": "at+jwt"}),
            claims,
        )
    }

    fn token_with(&self, header: Value, claims: Value) -> String {
        let now = jwt::now() as u64;
        let mut all = json!({"iss": ISSUER, "sub": "alice", "aud": RESOURCE,
            "exp": now + 3600, "iat": now, "scope": "mcp:tools"});
        for (k, v) in claims.as_object().unwrap() {
            all[k] = v.clone();
        }
        self.sign(header, all)
    }
}

fn server(issuer: &Issuer, scopes: &[&str]) -> ResourceServer {
    ResourceServer {
        settings: OAuthResourceSettings {
            issuer: ISSUER.into(),
            scopes: scopes.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        },
        keys: KeySet::fixed("https://auth.example.com/jwks", issuer.jwks()),
        replays: Default::default(),
    }
}

fn admit(
    server: &ResourceServer,
    authorization: &str,
    proof: Option<&str>,
) -> std::result::Result<Principal, Refusal> {
    futures::executor::block_on(admitted(server, authorization, proof))
}

/// [`admit`] on the caller's runtime (for a key set that may be read again over HTTP).
async fn admitted(
    server: &ResourceServer,
    authorization: &str,
    proof: Option<&str>,
) -> std::result::Result<Principal, Refusal> {
    let urls = [RESOURCE.to_string()];
    let presented = Presented {
        authorization: Some(authorization),
        proof,
        method: "POST",
        urls: &urls,
        audiences: &urls,
    };
    server.admit(&presented).await
}

fn invalid(result: std::result::Result<Principal, Refusal>) -> String {
    match result {
        Err(Refusal::Invalid(why)) => why,
        other => panic!("expected an invalid token, got {other:?}"),
    }
}

#[test]
fn a_good_token_of_either_key_is_admitted_with_its_subject() {
    let issuer = Issuer::new();
    let server = server(&issuer, &["mcp:tools"]);
    let es = issuer.token(json!({}));
    let rs = issuer.token_with(
        json!({"alg": "RS256", "kid": "rsa", "typ": "at+jwt"}),
        json!({"sub": "bob", "aud": [RESOURCE, "other"]}),
    );
    let got = admit(&server, &format!("Bearer {es}"), None).unwrap();
    assert_eq!(got.subject.as_deref(), Some("alice"));
    let got = admit(&server, &format!("bearer {rs}"), None).unwrap();
    assert_eq!(got.subject.as_deref(), Some("bob"));
    // RSA-PSS and EdDSA keys, as an issuer may publish them.
    for (alg, kid) in [("PS256", "pss"), ("EdDSA", "ed")] {
        let token = issuer.token_with(
            json!({"alg": alg, "kid": kid, "typ": "at+jwt"}),
            json!({"sub": kid}),
        );
        let got = admit(&server, &format!("Bearer {token}"), None);
        assert_eq!(got.unwrap().subject.as_deref(), Some(kid), "{alg}");
        // Signed by another key, it does not verify.
        let forged = issuer.token_with(json!({"alg": alg, "kid": "rsa"}), json!({}));
        assert!(
            admit(&server, &format!("Bearer {forged}"), None).is_err(),
            "{alg}"
        );
    }
}

#[test]
fn tokens_not_for_this_server_or_out_of_date_are_refused_with_the_reason() {
    let issuer = Issuer::new();
    let server = server(&issuer, &[]);
    let now = jwt::now() as u64;
    let refused = |claims: Value| {
        invalid(admit(
            &server,
            &format!("Bearer {}", issuer.token(claims)),
            None,
        ))
    };
    assert!(
        refused(json!({"iss": "https://evil.example"})).contains("issued by https://evil.example")
    );
    let other = refused(json!({"aud": "https://other.example/mcp"}));
    assert!(other.contains("https://other.example/mcp"), "{other}");
    assert!(other.contains(&format!("resource={RESOURCE}")), "{other}");
    assert!(refused(json!({"exp": now - 120})).contains("expired"));
    assert!(refused(json!({"exp": null})).contains("no expiry"));
    assert!(refused(json!({"nbf": now + 600})).contains("not valid yet"));
    // Within the leeway, a clock a little behind the issuer's still admits.
    assert!(
        admit(
            &server,
            &format!("Bearer {}", issuer.token(json!({"exp": now - 10}))),
            None
        )
        .is_ok()
    );
}

#[test]
fn forged_or_unsigned_tokens_are_refused() {
    let issuer = Issuer::new();
    let server = server(&issuer, &[]);
    let good = issuer.token(json!({}));
    // Another claim under the same signature.
    let (head, rest) = good.split_once('.').unwrap();
    let (_, signature) = rest.split_once('.').unwrap();
    let now = jwt::now() as u64;
    let claims = json!({"iss": ISSUER, "sub": "root", "aud": RESOURCE, "exp": now + 60});
    let forged = format!("{head}.{}.{signature}", b64(claims.to_string().as_bytes()));
    assert!(invalid(admit(&server, &format!("Bearer {forged}"), None)).contains("does not verify"));
    let none = format!(
        "{}.{}.",
        b64(br#"{"alg":"none"}"#),
        b64(claims.to_string().as_bytes())
    );
    assert!(invalid(admit(&server, &format!("Bearer {none}"), None)).contains("signed with none"));
    let hmac = issuer.token_with(json!({"alg": "HS256", "kid": "ec"}), json!({}));
    assert!(invalid(admit(&server, &format!("Bearer {hmac}"), None)).contains("HS256"));
    let unknown = issuer.token_with(json!({"alg": "ES256", "kid": "gone"}), json!({}));
    assert!(invalid(admit(&server, &format!("Bearer {unknown}"), None)).contains("`gone`"));
    // An ID token (or any other JWT type) is no access token.
    let id = issuer.token_with(
        json!({"alg": "ES256", "kid": "ec", "typ": "logout+jwt"}),
        json!({}),
    );
    assert!(invalid(admit(&server, &format!("Bearer {id}"), None)).contains("not an access token"));
    assert!(invalid(admit(&server, "Bearer not-a-jwt", None)).contains("not a JWT"));
    assert_eq!(
        admit(&server, "Basic dXNlcjpwYXNz", None).unwrap_err(),
        Refusal::Missing
    );
}

#[test]
fn a_token_without_the_scopes_asked_for_is_refused_for_scope() {
    let issuer = Issuer::new();
    let server = server(&issuer, &["mcp:tools", "mcp:admin"]);
    let some = issuer.token(json!({"scope": "mcp:tools"}));
    assert_eq!(
        admit(&server, &format!("Bearer {some}"), None).unwrap_err(),
        Refusal::Scope
    );
    let all = issuer.token(json!({"scope": null, "scp": ["mcp:admin", "mcp:tools"]}));
    assert!(admit(&server, &format!("Bearer {all}"), None).is_ok());
    let challenge = server.challenge(
        &Refusal::Scope,
        "http://h/.well-known/oauth-protected-resource/mcp",
    );
    assert!(challenge.starts_with(
        "Bearer resource_metadata=\"http://h/.well-known/oauth-protected-resource/mcp\""
    ));
    assert!(challenge.contains("scope=\"mcp:tools mcp:admin\""));
    assert!(challenge.contains("error=\"insufficient_scope\""));
}

#[test]
fn a_dpop_bound_token_needs_a_fresh_proof_of_its_key() {
    let issuer = Issuer::new();
    let server = server(&issuer, &[]);
    let key = DpopKey::generate().unwrap();
    let token = issuer.token(json!({"cnf": {"jkt": key.thumbprint()}}));
    let dpop = format!("DPoP {token}");
    let proof = key.proof("POST", RESOURCE, Some(&token), None).unwrap();
    assert!(admit(&server, &dpop, Some(&proof)).is_ok());
    assert!(invalid(admit(&server, &dpop, Some(&proof))).contains("replayed"));
    assert!(invalid(admit(&server, &dpop, None)).contains("DPoP header"));
    assert!(invalid(admit(&server, &format!("Bearer {token}"), None)).contains("DPoP-bound"));
    let elsewhere = key
        .proof("POST", "http://127.0.0.1:9/mcp", Some(&token), None)
        .unwrap();
    assert!(invalid(admit(&server, &dpop, Some(&elsewhere))).contains("not for this server's URL"));
    let get = key.proof("GET", RESOURCE, Some(&token), None).unwrap();
    assert!(invalid(admit(&server, &dpop, Some(&get))).contains("POST"));
    let other_token = key.proof("POST", RESOURCE, Some("another"), None).unwrap();
    assert!(invalid(admit(&server, &dpop, Some(&other_token))).contains("`ath`"));
    let thief = DpopKey::generate().unwrap();
    let stolen = thief.proof("POST", RESOURCE, Some(&token), None).unwrap();
    assert!(invalid(admit(&server, &dpop, Some(&stolen))).contains("another key"));
    let unbound = issuer.token(json!({}));
    let proof = key.proof("POST", RESOURCE, Some(&unbound), None).unwrap();
    assert!(
        invalid(admit(&server, &format!("DPoP {unbound}"), Some(&proof)))
            .contains("not DPoP-bound")
    );
}

/// A DPoP proof made by hand with the issuer's EC key (so its `iat` can be any time), for
/// `token`; and the thumbprint (RFC 7638) a token bound to that key names.
fn proof_at(issuer: &Issuer, token: &str, iat: i64) -> (String, String) {
    let point = issuer.ec.public_key().as_ref();
    let (x, y) = (b64(&point[1..33]), b64(&point[33..65]));
    let canonical = format!(r#"{{"crv":"P-256","kty":"EC","x":"{x}","y":"{y}"}}"#);
    let thumbprint =
        b64(aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, canonical.as_bytes()).as_ref());
    let ath = b64(aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, token.as_bytes()).as_ref());
    let header = json!({"typ": "dpop+jwt", "alg": "ES256",
        "jwk": {"kty": "EC", "crv": "P-256", "x": x, "y": y}});
    let claims = json!({"htm": "POST", "htu": RESOURCE, "iat": iat, "ath": ath,
        "jti": format!("proof-{iat}")});
    (issuer.sign(header, claims), thumbprint)
}

#[test]
fn a_dpop_proof_out_of_its_time_window_is_refused() {
    let issuer = Issuer::new();
    let server = server(&issuer, &[]);
    let now = jwt::now() as i64;
    let (_, thumbprint) = proof_at(&issuer, "", now);
    let token = issuer.token(json!({"cnf": {"jkt": thumbprint}}));
    let dpop = format!("DPoP {token}");
    // Made by hand as the pool makes one: admitted.
    let (fresh, _) = proof_at(&issuer, &token, now);
    assert!(admit(&server, &dpop, Some(&fresh)).is_ok());
    for iat in [now - 600, now + 600] {
        let (stale, _) = proof_at(&issuer, &token, iat);
        assert!(
            invalid(admit(&server, &dpop, Some(&stale))).contains("too old or from the future")
        );
    }
}

#[test]
fn the_metadata_names_the_issuer_and_the_scopes() {
    let issuer = Issuer::new();
    let document = server(&issuer, &["mcp:tools"]).metadata(RESOURCE);
    assert_eq!(document["resource"], RESOURCE);
    assert_eq!(document["authorization_servers"], json!([ISSUER]));
    assert_eq!(document["scopes_supported"], json!(["mcp:tools"]));
    let challenge = server(&issuer, &[]).challenge(&Refusal::Invalid("a \"bad\" one".into()), "u");
    assert!(
        challenge.contains("error_description=\"a 'bad' one\""),
        "{challenge}"
    );
    assert!(!challenge.contains("scope="));
}

#[test]
fn issuer_metadata_is_looked_for_where_both_specifications_put_it() {
    assert_eq!(
        metadata_urls("https://auth.example.com"),
        [
            "https://auth.example.com/.well-known/oauth-authorization-server",
            "https://auth.example.com/.well-known/openid-configuration"
        ]
    );
    assert_eq!(
        metadata_urls("https://example.com/tenant/1/"),
        [
            "https://example.com/.well-known/oauth-authorization-server/tenant/1",
            "https://example.com/tenant/1/.well-known/openid-configuration",
            "https://example.com/.well-known/openid-configuration/tenant/1"
        ]
    );
}

#[test]
fn settings_mistakes_say_what_to_change() {
    let bad = |settings: OAuthResourceSettings| settings.validate().unwrap_err().to_string();
    let with = |issuer: &str| OAuthResourceSettings {
        issuer: issuer.into(),
        ..Default::default()
    };
    assert!(bad(with("http://auth.example.com")).contains("not HTTPS"));
    assert!(bad(with("auth.example.com")).contains("not a URL"));
    assert!(with("http://localhost:9000").validate().is_ok());
    let resource = OAuthResourceSettings {
        resource: Some("https://mcp.example.com/mcp?x=1".into()),
        ..with(ISSUER)
    };
    assert!(bad(resource).contains("without query"));
    let scopes = OAuthResourceSettings {
        scopes: vec!["a b".into()],
        ..with(ISSUER)
    };
    assert!(bad(scopes).contains("has a space"));
}

/// The error of `result`, which must have failed.
fn refused<T>(result: std::result::Result<T, impl ToString>) -> String {
    match result {
        Err(e) => e.to_string(),
        Ok(_) => panic!("expected a refusal"),
    }
}

/// `keys` (a JWK Set's `keys`) with `suffix` added to every key id: the keys of a rotation.
fn renamed(mut keys: Value, suffix: &str) -> Value {
    for key in keys.as_array_mut().unwrap() {
        let kid = format!("{}{suffix}", key["kid"].as_str().unwrap());
        key["kid"] = json!(kid);
    }
    keys
}

#[tokio::test]
async fn the_key_set_is_read_again_for_a_new_key_at_most_once_per_gap() {
    // Both issuers' keys are made first: an RSA key takes long enough to outlast the gap.
    let (old, new) = (Issuer::new(), Issuer::new());
    let published = Arc::new(std::sync::Mutex::new(json!({"keys": old.jwks_json()})));
    let site = {
        let published = published.clone();
        Site::start(move |asked| match asked.target.as_str() {
            "/jwks" => Answer::json(published.lock().unwrap().clone()),
            _ => Answer::status(404),
        })
        .await
    };
    let gap = Duration::from_secs(1);
    let server = ResourceServer {
        settings: OAuthResourceSettings {
            issuer: ISSUER.into(),
            ..Default::default()
        },
        keys: KeySet::load_with_gap(site.url("/jwks"), gap).await.unwrap(),
        replays: Default::default(),
    };
    let reads = || site.asked("/jwks").len();
    assert_eq!(reads(), 1);

    // The issuer rotates its keys: new keys under new ids, the old ones gone.
    *published.lock().unwrap() = json!({"keys": renamed(new.jwks_json(), "-2")});
    let token = new.token_with(json!({"alg": "ES256", "kid": "ec-2"}), json!({}));
    let bearer = format!("Bearer {token}");
    // Within the gap after the last read, a new id is not looked for, and a flood of made-up
    // ids does not reach the issuer.
    let why = invalid(admitted(&server, &bearer, None).await);
    assert!(why.contains("no signing key `ec-2`"), "{why}");
    for i in 0..50 {
        let made_up = format!("made-up-{i}");
        refused(server.keys.find(Some(&made_up), "ES256").await);
    }
    assert_eq!(reads(), 1);

    // Past the gap, the token naming the new key has the set read again, once.
    tokio::time::sleep(gap).await;
    let got = admitted(&server, &bearer, None).await.unwrap();
    assert_eq!(got.subject.as_deref(), Some("alice"));
    assert_eq!(reads(), 2);
    for i in 0..50 {
        let made_up = format!("made-up-{i}");
        refused(server.keys.find(Some(&made_up), "ES256").await);
    }
    assert_eq!(reads(), 2);
    // The old key left the set with the rotation.
    let stale = format!("Bearer {}", old.token(json!({})));
    assert!(invalid(admitted(&server, &stale, None).await).contains("no signing key `ec`"));
}

#[tokio::test]
async fn issuer_documents_are_read_without_redirects_under_1_mib_over_https_or_loopback() {
    let issuer = Issuer::new();
    let keys = json!({"keys": issuer.jwks_json()});
    let site = Site::start(move |asked| {
        let base = format!("http://{}", asked.headers["host"].to_str().unwrap());
        match asked.target.as_str() {
            "/jwks" => Answer::json(keys.clone()),
            "/moved" => Answer::redirect(302, "/jwks"),
            "/huge" => Answer::json(json!({"keys": keys["keys"], "pad": "x".repeat(1 << 20)})),
            "/.well-known/oauth-authorization-server/plain" => Answer::json(
                json!({"issuer": format!("{base}/plain"), "jwks_uri": "http://auth.example.com/jwks"}),
            ),
            "/.well-known/oauth-authorization-server/good" => Answer::json(
                json!({"issuer": format!("{base}/good"), "jwks_uri": format!("{base}/jwks")}),
            ),
            _ => Answer::status(404),
        }
    })
    .await;
    let load = |path: &str| KeySet::load(site.url(path), Fetcher::new().unwrap());

    let moved = refused(load("/moved").await);
    assert!(moved.contains("302"), "{moved}");
    assert!(site.asked("/jwks").is_empty(), "the redirect was followed");
    let huge = refused(load("/huge").await);
    assert!(huge.contains("more than 1 MiB"), "{huge}");
    let remote_http = KeySet::load(
        "http://auth.example.com/jwks".into(),
        Fetcher::new().unwrap(),
    );
    assert!(refused(remote_http.await).contains("not HTTPS"));

    // Found through the issuer's metadata: an HTTP key set off this machine stops the start.
    let start = |issuer: String| {
        ResourceServer::start(OAuthResourceSettings {
            issuer,
            ..Default::default()
        })
    };
    let plain = refused(start(site.url("/plain")).await);
    assert!(plain.contains("not HTTPS"), "{plain}");
    assert!(start(site.url("/good")).await.is_ok());
}
