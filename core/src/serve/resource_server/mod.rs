//! OAuth 2.1 resource-server mode of the HTTP front, as the MCP authorization specification
//! has an MCP server be one: instead of the one token `serve` generates, requests carry access
//! tokens an authorization server issued to each client. A token is accepted when it is a JWT
//! access token (RFC 9068) signed by a key of the issuer's key set, issued by that issuer, for
//! this server (its audience, RFC 8707 resource indicators), in date, with the scopes the
//! operator asks for, and, when bound to a key (DPoP, RFC 9449), presented with a fresh proof
//! of that key. Clients find the issuer in this server's protected resource metadata (RFC
//! 9728), which a 401 points them to.

mod fetch;
mod jwt;
mod keys;
mod proof;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{Error, Result};
use fetch::Fetcher;
use jwt::{AccessClaims, Jws};
use keys::KeySet;
use proof::{Replays, Target};

/// Where clients find a resource's metadata (RFC 9728), before the resource's path.
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// How `serve` checks access tokens from an OAuth authorization server (`oauth` in the serve
/// settings; `--oauth-issuer` and its companions on the command line).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OAuthResourceSettings {
    /// The authorization server whose tokens are accepted: its issuer identifier, exactly as
    /// its metadata and tokens write it (e.g. `https://auth.example.com`).
    pub issuer: String,
    /// This server's resource identifier, published in its metadata and what tokens must be
    /// issued for (default `http://HOST/mcp`, HOST as the client reached this server; set it
    /// when clients reach the server through a proxy, e.g. `https://mcp.example.com/mcp`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// The audience tokens must name, when the issuer names APIs otherwise than by the
    /// resource's URL (e.g. an Auth0 API identifier). Default: the resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<String>,
    /// Scopes every token must carry (published as the resource's `scopes_supported`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// The issuer's key set, for an issuer that publishes no metadata (default: the
    /// `jwks_uri` of its RFC 8414 or OpenID Connect metadata).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks_uri: Option<String>,
}

impl OAuthResourceSettings {
    /// Checks what can be checked without a network; an error says what to change.
    pub fn validate(&self) -> Result<()> {
        let bad = |message: String| Error::invalid(format!("oauth: {message}"));
        fetch::check_url(&self.issuer).map_err(|e| bad(format!("issuer {e}")))?;
        if let Some(uri) = &self.jwks_uri {
            fetch::check_url(uri).map_err(|e| bad(format!("jwksUri {e}")))?;
        }
        if let Some(resource) = &self.resource {
            let url = url::Url::parse(resource)
                .map_err(|e| bad(format!("resource {resource:?} is not a URL: {e}")))?;
            if !matches!(url.scheme(), "http" | "https")
                || url.fragment().is_some()
                || url.query().is_some()
            {
                return Err(bad(format!(
                    "resource {resource} must be an http(s) URL without query or fragment"
                )));
            }
        }
        if self
            .audience
            .as_deref()
            .is_some_and(|a| a.trim().is_empty())
        {
            return Err(bad("audience is empty".into()));
        }
        if let Some(scope) = self.scopes.iter().find(|s| s.is_empty() || s.contains(' ')) {
            return Err(bad(format!("scope {scope:?} is empty or has a space")));
        }
        Ok(())
    }
}

/// Whom a request's token was issued to, for the audit log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Principal {
    /// The token's `sub`: the user, or the client itself for a client credentials grant.
    pub subject: Option<String>,
    /// The OAuth client the token was issued to (`client_id`, or `azp`).
    pub client_id: Option<String>,
}

impl Principal {
    /// Whose a session opened with this token is (the subject, else the client): another
    /// user's token does not carry on someone's session, even with its id.
    pub fn owner(&self) -> String {
        self.subject
            .clone()
            .or_else(|| self.client_id.clone())
            .unwrap_or_default()
    }
}

/// Why a request was not admitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// No token at all: the client should discover the issuer and get one.
    Missing,
    /// A token that cannot be used here, and why.
    Invalid(String),
    /// A good token without the scopes asked for.
    Scope,
}

/// A request's credentials, and what its token must be for.
pub(crate) struct Presented<'a> {
    /// The `Authorization` header.
    pub authorization: Option<&'a str>,
    /// The `DPoP` header.
    pub proof: Option<&'a str>,
    pub method: &'a str,
    /// The request's URL under each name this server answers to (what a proof may name).
    pub urls: &'a [String],
    /// The audiences a token may name for this request's path.
    pub audiences: &'a [String],
}

/// The checks of one issuer's tokens, with its keys.
pub(crate) struct ResourceServer {
    settings: OAuthResourceSettings,
    keys: KeySet,
    replays: Replays,
}

impl ResourceServer {
    /// Reads the issuer's metadata and keys: a server that could not check a single token
    /// does not start.
    pub async fn start(settings: OAuthResourceSettings) -> Result<ResourceServer> {
        settings.validate()?;
        let unusable = |message: String| Error::connection(settings.issuer.clone(), message);
        let fetcher = Fetcher::new().map_err(unusable)?;
        let jwks_uri = match &settings.jwks_uri {
            Some(uri) => uri.clone(),
            None => discover(&fetcher, &settings.issuer)
                .await
                .map_err(unusable)?,
        };
        let keys = KeySet::load(jwks_uri, fetcher)
            .await
            .map_err(|e| unusable(format!("the issuer's keys cannot be read: {e}")))?;
        Ok(ResourceServer {
            settings,
            keys,
            replays: Replays::default(),
        })
    }

    pub fn settings(&self) -> &OAuthResourceSettings {
        &self.settings
    }

    /// Checks a request's token.
    pub async fn admit(
        &self,
        presented: &Presented<'_>,
    ) -> std::result::Result<Principal, Refusal> {
        let (scheme, token) = presented
            .authorization
            .and_then(|value| value.split_once(' '))
            .ok_or(Refusal::Missing)?;
        let token = token.trim();
        let bound = match scheme.to_ascii_lowercase().as_str() {
            "bearer" => false,
            "dpop" => true,
            _ => return Err(Refusal::Missing),
        };
        let jws: Jws<'_, AccessClaims> =
            Jws::parse(token, "the access token").map_err(Refusal::Invalid)?;
        let key = self
            .keys
            .find(jws.header.kid.as_deref(), &jws.header.alg)
            .await
            .map_err(Refusal::Invalid)?;
        jws.verify(&key)
            .map_err(|e| Refusal::Invalid(format!("the access token: {e}")))?;
        let claims = &jws.claims;
        claims
            .check(
                jws.header.typ.as_deref(),
                &self.settings.issuer,
                presented.audiences,
            )
            .map_err(Refusal::Invalid)?;
        self.check_binding(claims, bound, token, presented)?;
        let held = claims.scopes();
        if !self.settings.scopes.iter().all(|s| held.contains(s)) {
            return Err(Refusal::Scope);
        }
        Ok(Principal {
            subject: claims.sub.clone(),
            client_id: claims.client_id.clone().or_else(|| claims.azp.clone()),
        })
    }

    /// A DPoP-bound token comes with a proof of its key, and an unbound one without.
    fn check_binding(
        &self,
        claims: &AccessClaims,
        bound: bool,
        token: &str,
        presented: &Presented<'_>,
    ) -> std::result::Result<(), Refusal> {
        let jkt = claims.cnf.as_ref().and_then(|c| c.jkt.as_deref());
        match (jkt, bound) {
            (None, false) => Ok(()),
            (None, true) => Err(Refusal::Invalid(
                "the token is not DPoP-bound: send it as `Authorization: Bearer`".into(),
            )),
            (Some(_), false) => Err(Refusal::Invalid(
                "the token is DPoP-bound: send it as `Authorization: DPoP` with a proof".into(),
            )),
            (Some(jkt), true) => {
                let proof = presented
                    .proof
                    .ok_or_else(|| Refusal::Invalid("a DPoP header is required".into()))?;
                let target = Target {
                    method: presented.method,
                    urls: presented.urls,
                };
                let thumbprint = self
                    .replays
                    .check(proof, &target, token)
                    .map_err(Refusal::Invalid)?;
                if thumbprint != jkt {
                    return Err(Refusal::Invalid(
                        "the DPoP proof is signed by another key than the token is bound to".into(),
                    ));
                }
                Ok(())
            }
        }
    }

    /// The protected resource metadata (RFC 9728) of `resource`.
    pub fn metadata(&self, resource: &str) -> Value {
        let mut document = json!({
            "resource": resource,
            "authorization_servers": [self.settings.issuer],
            "bearer_methods_supported": ["header"],
            "dpop_signing_alg_values_supported": keys::ALGORITHMS,
            "resource_name": "mcpmux",
        });
        if !self.settings.scopes.is_empty() {
            document["scopes_supported"] = json!(self.settings.scopes);
        }
        document
    }

    /// The `WWW-Authenticate` value of a refusal (RFC 6750, RFC 9728, RFC 9449).
    pub fn challenge(&self, refusal: &Refusal, metadata_url: &str) -> String {
        let mut params = vec![format!("resource_metadata=\"{metadata_url}\"")];
        if !self.settings.scopes.is_empty() {
            params.push(format!("scope=\"{}\"", self.settings.scopes.join(" ")));
        }
        match refusal {
            Refusal::Missing => {}
            Refusal::Invalid(why) => {
                params.push("error=\"invalid_token\"".into());
                params.push(format!("error_description=\"{}\"", quoted(why)));
            }
            Refusal::Scope => params.push("error=\"insufficient_scope\"".into()),
        }
        let algs = keys::ALGORITHMS.join(" ");
        format!("Bearer {}, DPoP algs=\"{algs}\"", params.join(", "))
    }
}

/// Text fit for a quoted-string of a header (RFC 9110): no quotes, backslashes or controls.
fn quoted(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '"' | '\\' => '\'',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect()
}

/// The issuer's `jwks_uri`, from its RFC 8414 metadata or its OpenID Connect discovery
/// document, whichever it publishes (the issuer in the document must be the one configured).
async fn discover(fetcher: &Fetcher, issuer: &str) -> std::result::Result<String, String> {
    #[derive(Deserialize)]
    struct Metadata {
        issuer: String,
        #[serde(default)]
        jwks_uri: Option<String>,
    }
    let mut tried = Vec::new();
    for uri in metadata_urls(issuer) {
        match fetcher.json::<Metadata>(&uri).await {
            Ok(metadata) if metadata.issuer != issuer => {
                return Err(format!(
                    "{uri} names the issuer {}: set the issuer to exactly that",
                    metadata.issuer
                ));
            }
            Ok(Metadata {
                jwks_uri: Some(jwks),
                ..
            }) => return Ok(jwks),
            Ok(_) => tried.push(format!("{uri} has no jwks_uri")),
            Err(e) => tried.push(e),
        }
    }
    Err(format!(
        "no authorization server metadata found ({}): check the issuer URL, or give the key \
         set's URL (jwksUri, --oauth-jwks)",
        tried.join("; ")
    ))
}

/// Where an issuer's metadata may be: RFC 8414 (the well-known part before the issuer's
/// path) and OpenID Connect Discovery (after it).
fn metadata_urls(issuer: &str) -> Vec<String> {
    let trimmed = issuer.trim_end_matches('/');
    let (origin, path) = match url::Url::parse(trimmed) {
        Ok(url) => {
            let path = url.path().trim_end_matches('/').to_string();
            (url.origin().ascii_serialization(), path)
        }
        Err(_) => (trimmed.to_string(), String::new()),
    };
    let mut urls = vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{trimmed}/.well-known/openid-configuration"),
    ];
    if !path.is_empty() {
        urls.push(format!("{origin}/.well-known/openid-configuration{path}"));
    }
    urls
}

#[cfg(test)]
mod tests;
