// A real OpenID provider (oidc-provider, ESM-only) in its own process, so Jest's
// CommonJS VM never loads it. Reads its setup as JSON from OIDC_TEST_SETUP, listens
// on 127.0.0.1 with an OS-assigned port and prints `{"issuer":"http://127.0.0.1:<port>"}`.
import { createServer } from 'node:http';
import Provider from 'oidc-provider';

const setup = JSON.parse(process.env.OIDC_TEST_SETUP ?? '{}');
const accounts = setup.accounts ?? {};

const server = createServer();
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  const issuer = `http://127.0.0.1:${port}`;
  const provider = new Provider(issuer, {
    clients: setup.clients,
    // Any login signs in (dev interactions); its claims come from `accounts`, else it is its own e-mail.
    findAccount: (_ctx, id) => ({
      accountId: id,
      claims: () => ({ sub: id, email: id, email_verified: true, ...(accounts[id] ?? {}) }),
    }),
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
    scopes: ['openid', 'email', 'profile', 'groups'],
    // Put the scopes' claims into the ID token, as Google, Entra ID and Okta do.
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true } },
    cookies: { keys: ['oidc-test-cookie-key-0123456789abcdef'] },
    ttl: {
      AuthorizationCode: 120,
      IdToken: 300,
      AccessToken: 300,
      Interaction: 300,
      Session: 600,
      Grant: 600,
    },
  });
  server.on('request', provider.callback());
  process.stdout.write(`${JSON.stringify({ issuer })}\n`);
});

// The parent closing our stdin (or dying) ends us: no provider outlives its test.
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
process.stdin.on('close', () => process.exit(0));
