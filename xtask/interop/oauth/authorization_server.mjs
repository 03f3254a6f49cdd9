// The OAuth authorization server of `cargo xtask interop`'s OAuth rows:
// oidc-provider 9 (pinned in package-lock.json beside this file), set up as
// a deployer of an MCP server would set it up:
//
// - dynamic client registration (the CLI registers itself);
// - token introspection, for the resource server (a confidential client
//   of its own, `mcp-resource`), which checks every access token there;
// - resource indicators (RFC 8707) for the MCP URL, with OPAQUE access
//   tokens (introspected, not read), short-lived so that a run sees them
//   expire;
// - refresh tokens for any client registered for the refresh_token grant
//   (MCP clients do not all send `prompt=consent`, without which
//   oidc-provider drops `offline_access`), rotated at every use: a rotated
//   one used again revokes the whole grant (oidc-provider's reuse
//   detection), which is what two processes sharing a login must survive;
// - PKCE (required for public clients, oidc-provider's default);
// - DPoP left at its default: enabled, advertised in the metadata
//   (`dpop_signing_alg_values_supported`), as Keycloak, Okta and Auth0 do.
//
// The login and consent pages are oidc-provider's development interactions
// (any login and password are accepted), filled in by `browser.mjs`.
//
// Environment:
//   OIDC_MODULES   the node_modules folder oidc-provider is installed in
//   PORT           the loopback port to listen on
//   MCP_RESOURCE   the MCP server's URL (the one resource indicator served)
//   RESOURCE_SECRET the resource server's introspection secret
//   AT_TTL         access token lifetime in seconds (default 3600)
//   AS_DPOP        `off` turns DPoP off (to compare), else its default
//   OUTAGE_FILE    while this file exists, the token endpoint answers 503
//   SLOW_FILE      while this file exists, the token endpoint answers 1.5 s late
//   AS_LOG         a file to append one JSON line per token event to

import { appendFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const need = (name) => {
  const value = process.env[name];
  if (!value) {
    console.error(`authorization_server.mjs: ${name} is not set`);
    process.exit(2);
  }
  return value;
};

const modules = need('OIDC_MODULES');
const port = Number(need('PORT'));
const resource = need('MCP_RESOURCE');
const resourceSecret = need('RESOURCE_SECRET');
const accessTokenTtl = Number(process.env.AT_TTL || 3600);
const dpop = process.env.AS_DPOP !== 'off';
const outageFile = process.env.OUTAGE_FILE;
const slowFile = process.env.SLOW_FILE;
const logFile = process.env.AS_LOG;

// The package is found in the cache, not beside this script.
const require = createRequire(join(modules, 'resolve-from-here.js'));
const { default: Provider, errors } = await import(pathToFileURL(require.resolve('oidc-provider')).href);

const issuer = `http://127.0.0.1:${port}`;

const log = (event, fields) => {
  if (logFile) {
    appendFileSync(logFile, `${JSON.stringify({ t: Date.now(), event, ...fields })}\n`);
  }
};

const configuration = {
  clients: [
    {
      // The resource server: introspects, is sent no one.
      client_id: 'mcp-resource',
      client_secret: resourceSecret,
      grant_types: [],
      redirect_uris: [],
      response_types: [],
    },
  ],
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: true },
    introspection: {
      enabled: true,
      // Only the resource server learns about tokens, and only about those
      // issued for it.
      allowedPolicy: async (ctx, client, token) => client.clientId === 'mcp-resource'
        && (token.kind === 'AccessToken' ? token.aud === resource : false),
    },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: async () => resource,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (ctx, indicator) => {
        if (indicator !== resource) {
          throw new errors.InvalidTarget(`unknown resource ${indicator}`);
        }
        return {
          scope: 'mcp',
          audience: resource,
          accessTokenFormat: 'opaque',
          accessTokenTTL: accessTokenTtl,
        };
      },
    },
    ...(dpop ? {} : { dPoP: { enabled: false } }),
  },
  scopes: ['openid', 'offline_access'],
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
  rotateRefreshToken: true,
  ttl: {
    AccessToken: () => accessTokenTtl,
  },
  findAccount: async (ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
};

const provider = new Provider(issuer, configuration);

// An outage of the token endpoint, as a load balancer in front of it would
// answer; everything else (discovery, introspection) stays up.
provider.use(async (ctx, next) => {
  if (outageFile && existsSync(outageFile) && ctx.method === 'POST' && ctx.path === '/token') {
    log('outage', {});
    ctx.status = 503;
    ctx.set('retry-after', '1');
    ctx.body = 'the token endpoint is down for maintenance';
    return;
  }
  // A slow token endpoint: two clients refreshing at once overlap for sure.
  if (slowFile && existsSync(slowFile) && ctx.method === 'POST' && ctx.path === '/token') {
    await new Promise((resolve) => setTimeout(resolve, 1500));
  }
  await next();
});

provider.on('grant.success', (ctx) => {
  const grantType = ctx.oidc.params?.grant_type;
  const bound = Boolean(ctx.oidc.entities.AccessToken?.jkt);
  log('grant.success', { grant_type: grantType, dpop_bound: bound });
});
provider.on('grant.error', (ctx, error) => {
  log('grant.error', { grant_type: ctx.oidc.params?.grant_type, error: error.error, description: error.error_description });
});
provider.on('grant.revoked', (ctx, grantId) => log('grant.revoked', { grant: grantId.length }));
provider.on('registration_create.success', () => log('registered', {}));
provider.on('introspection.error', (ctx, error) => log('introspection.error', { error: error.error }));
provider.on('server_error', (ctx, error) => log('server_error', { message: String(error) }));

provider.listen(port, '127.0.0.1', () => {
  console.log(`authorization server at ${issuer}, DPoP ${dpop ? 'at its default (on)' : 'off'}`);
});
