// An OAuth 2.1 authorization server for the tests of `mcpmux serve --oauth-issuer`: panva's
// oidc-provider (a certified OpenID provider, from npm), on 127.0.0.1 and a free port. It
// issues JWT access tokens (RFC 9068) by the client credentials grant, for the resource a
// client names (RFC 8707), signed RS256 for client `rs-client` and ES256 for `es-client`.
// Prints `{"issuer": URL}` once listening; stops when its stdin closes.
//
// Usage: node issuer.mjs OIDC_PROVIDER_DIR (the folder holding node_modules/oidc-provider)

import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

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

const server = createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  clients: [client('rs-client'), client('es-client')],
  jwks: { keys },
  scopes: ['openid', ...SCOPES.split(' ')],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      // Every resource a client names is a resource server here: the token's audience is
      // the resource, its scopes those the client asked for among SCOPES.
      getResourceServerInfo: (ctx, resource, client) => ({
        scope: SCOPES,
        audience: resource,
        accessTokenTTL: 300,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: client.clientId === 'es-client' ? 'ES256' : 'RS256' } },
      }),
    },
  },
});
server.on('request', provider.callback());

process.stdout.write(`${JSON.stringify({ issuer })}\n`);
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
