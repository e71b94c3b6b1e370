// A certified OpenID provider (npm `oidc-provider`) on loopback: the authorization server of the
// OAuth tests. Prints `listening <port>` once it serves. One public native client (PKCE, any
// loopback port, RFC 8252), refresh tokens, revocation and introspection; its login page is the
// package's development one (any name, any password), which the tests drive as a browser would.
//
// A second, confidential client (`resource-server`, secret OIDC_RS_SECRET, default `rs-secret`) is
// the resource servers' (Dovecot, the SMTP front, the OAuth-protected MCP server): it only
// introspects tokens. Clients may also register themselves (RFC 7591, as MCP clients do), and
// ask for a token for one resource (RFC 8707): such a token carries that resource as its
// audience and the `mcp` scope.
//
// OIDC_TOKEN_LOG names a file each code and token issued is appended to (opaque values), so a
// test can look for them where they must not be.
//
// Environment: OIDC_PORT (default any free one), OIDC_CLIENT (client id, default `cowork-test`), OIDC_ACCESS_TTL (seconds, default
// 3600), OIDC_SCOPES (extra scopes the client may ask for, space-separated).
import { appendFileSync } from "node:fs";
import http from "node:http";
import Provider from "oidc-provider";

const server = http.createServer();
await new Promise((resolve) => server.listen(Number(process.env.OIDC_PORT || 0), "127.0.0.1", resolve));
const port = server.address().port;
const extra = (process.env.OIDC_SCOPES || "mail calendar mcp").split(" ").filter(Boolean);

const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [
    {
      client_id: process.env.OIDC_CLIENT || "cowork-test",
      application_type: "native",
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      redirect_uris: ["http://127.0.0.1/callback"],
    },
    {
      client_id: "resource-server",
      client_secret: process.env.OIDC_RS_SECRET || "rs-secret",
      token_endpoint_auth_method: "client_secret_basic",
      grant_types: [],
      response_types: [],
      redirect_uris: [],
    },
  ],
  scopes: ["openid", "offline_access", "email", ...extra],
  claims: { email: ["email"] },
  features: {
    devInteractions: { enabled: true },
    revocation: { enabled: true },
    introspection: { enabled: true },
    registration: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: async () => undefined,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (_ctx, resource) => ({
        scope: "mcp",
        audience: resource,
        accessTokenFormat: "opaque",
        accessTokenTTL: Number(process.env.OIDC_ACCESS_TTL || 3600),
      }),
    },
  },
  ttl: { AccessToken: Number(process.env.OIDC_ACCESS_TTL || 3600) },
  issueRefreshToken: async () => true,
  findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id, email: id }) }),
  // Consent is given with the login (the person's act in these tests is signing in).
  loadExistingGrant: async (ctx) => {
    const grantId =
      ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
    if (grantId) return ctx.oidc.provider.Grant.find(grantId);
    const grant = new ctx.oidc.provider.Grant({
      clientId: ctx.oidc.client.clientId,
      accountId: ctx.oidc.session.accountId,
    });
    grant.addOIDCScope(ctx.oidc.params.scope || "openid");
    grant.addOIDCClaims(["email"]);
    await grant.save();
    return grant;
  },
});
if (process.env.OIDC_TOKEN_LOG) {
  for (const kind of ["authorization_code", "access_token", "refresh_token"]) {
    provider.on(`${kind}.saved`, (token) => appendFileSync(process.env.OIDC_TOKEN_LOG, `${token.jti}\n`));
  }
}
server.on("request", provider.callback());
console.log(`listening ${port}`);
