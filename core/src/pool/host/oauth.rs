//! The pool's OAuth settings: how users authorize, where tokens live, and logging out.

use crate::error::Result;
use crate::pool::Pool;

impl Pool {
    /// How users authorize OAuth-protected servers; `None` (the default) opens the browser
    /// and listens for the redirect on 127.0.0.1.
    pub fn set_oauth_handler(&self, handler: Option<crate::auth::OAuthHandler>) {
        self.inner.host.set_oauth_handler(handler);
    }

    /// Supplies the signed-in user's ID token (from the host's single sign-on) to servers
    /// whose `config.oauth.grant` is `enterprise_managed` and whose `idp` gives no `idToken`.
    /// It is asked each time such a server needs a new access token, with `rejected` set when
    /// the identity provider refused the previous answer. `None` (the default): only tokens
    /// from the config are used.
    pub fn set_id_token_provider(&self, provider: Option<crate::auth::IdTokenFn>) {
        self.inner.host.set_id_token_provider(provider);
    }

    /// Where OAuth tokens live (by default `<config>.tokens.json`, mode 0600).
    pub fn set_token_store(&self, store: std::sync::Arc<dyn crate::auth::TokenStore>) {
        self.inner.host.set_token_store(store);
    }

    /// Forgets a server's OAuth tokens and disconnects it: its next use authorizes again.
    pub async fn logout(&self, server: &str) -> Result<()> {
        let slot = self.inner.slot(server)?;
        self.inner
            .host
            .token_store()
            .clear(&slot.id)
            .await
            .map_err(|e| crate::error::Error::Connection {
                server: slot.name(),
                message: format!("cannot clear its OAuth tokens: {e}"),
            })?;
        self.disconnect(server).await
    }
}
