// An OAuth 2.1 authorization server for the tests of `mcpmux serve --oauth-issuer`: panva's
// oidc-provider (a certified OpenID provider, from npm), on 127.0.0.1 and a free port. It
// issues JWT access tokens (RFC 9068) by the client credentials grant, for the resource a
// client names (RFC 8707), signed RS256 for client `rs-client` and ES256 for `es-client`;
// and by the authorization code grant to clients that register themselves (RFC 7591), with
// refresh tokens and access tokens that live 4 s, so that a client's next run refreshes.
// The user at the authorization endpoint is a user who signs in and consents to what is
// asked at once (the interaction routes below), so a program that follows redirects and
// keeps cookies is that user's browser.
// Prints `{"issuer": URL}` once listening; stops when its stdin closes.
//
// Usage: node issuer.mjs OIDC_PROVIDER_DIR (the folder holding node_modules/oidc-provider)

import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

// stdout carries the one line the test reads, then is closed: oidc-provider's notices go to
// stderr, or writing one would kill the process.
console.log = console.error;
console.info = console.error;

const packageDir = join(process.argv[2], 'node_modules', 'oidc-provider', 'lib', 'index.js');
const { default: Provider } = await import(pathToFileURL(packageDir).href);

// The test's own keys (oidc-provider's built-in development key is for RS256 only).
function signingKey(type, options, alg, kid) {
  const { privateKey } = generateKeyPairSync(type, options);
  return { ...privateKey.export({ format: 'jwk' }), alg, kid, use: 'sig' };
}
const keys = [
  signingKey('rsa', { modulusLength: 2048 }, 'RS256', 'rsa-1'),
  signingKey('ec', { namedCurve: 'P-256' }, 'ES256', 'ec-1'),
];

const SCOPES = 'mcp:tools mcp:admin';
const client = (id) => ({
  client_id: id,
  client_secret: `secret-of-${id}`,
  grant_types: ['client_credentials'],
  redirect_uris: [],
  response_types: [],
  scope: SCOPES,
});

// Public clients (registered, without a secret) get short-lived tokens: refreshing is what
// their tests are about.
const ttl = (client) => (client.clientAuthMethod === 'none' ? 4 : 300);

const server = createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  clients: [client('rs-client'), client('es-client')],
  jwks: { keys },
  scopes: ['openid', 'offline_access', ...SCOPES.split(' ')],
  // Without `prompt=consent` oidc-provider drops `offline_access` from a request; a refresh
  // token for every client allowed the grant is what a deployment for MCP clients does.
  issueRefreshToken: (ctx, client) => client.grantTypeAllowed('refresh_token'),
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    registration: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      // Every resource a client names is a resource server here: the token's audience is
      // the resource, its scopes those the client asked for among SCOPES.
      getResourceServerInfo: (ctx, resource, client) => ({
        scope: SCOPES,
        audience: resource,
        accessTokenTTL: ttl(client),
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: client.clientId === 'es-client' ? 'ES256' : 'RS256' } },
      }),
    },
  },
});

// The user: signs in as `user`, then grants every scope and resource the client asked for.
async function interact(req, res) {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params } = details;
  if (prompt.name === 'login') {
    await provider.interactionFinished(req, res, { login: { accountId: 'user' } });
    return;
  }
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId: 'user', clientId: params.client_id });
  if (prompt.details.missingOIDCScope) {
    grant.addOIDCScope(prompt.details.missingOIDCScope.join(' '));
  }
  for (const [resource, scopes] of Object.entries(prompt.details.missingResourceScopes ?? {})) {
    grant.addResourceScope(resource, scopes.join(' '));
  }
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

const callback = provider.callback();
server.on('request', (req, res) => {
  if (!req.url.startsWith('/interaction/')) {
    callback(req, res);
    return;
  }
  interact(req, res).catch((e) => {
    res.statusCode = 500;
    res.end(String(e));
  });
});

process.stdout.write(`${JSON.stringify({ issuer })}\n`);
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
