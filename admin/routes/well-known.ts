import { PUBLIC } from '../../shared/auth/route-callers.js';
import { authorizationServerMetadata, protectedResourceMetadata } from '../../shared/oauth/metadata.js';
import type { AdminDeps } from '../deps.js';
import { type AdminRoute, get } from '../http/route.js';

/**
 * Discovery, open to anyone: the service's public signing keys, which verify the tokens it issues, and the OAuth
 * metadata documents. The protected-resource document is also served at its RFC 9728 §3.1 location for the
 * resource `{host_url}/api/v1` (the well-known name inserted before the resource's path), and the MCP endpoint's
 * (`{host_url}/mcp`, RFC 8707 audience `mcp`) at its own (the proxy forwards it here, as every path it does not own).
 */
export function wellKnownRoutes({ ctx, signer }: AdminDeps): AdminRoute[] {
  const config = ctx.config;
  const resourceMetadata = protectedResourceMetadata(config);
  // Built once: they depend on configuration only.
  const document = (path: string, body: object): AdminRoute =>
    get(path, PUBLIC, async (c) => {
      c.set('cache-control', 'public, max-age=300');
      c.body = body;
    });
  return [
    get('/.well-known/jwks.json', PUBLIC, async (c) => {
      c.set('cache-control', 'public, max-age=60');
      c.body = await signer.jwks();
    }),
    document('/.well-known/oauth-authorization-server', authorizationServerMetadata(config)),
    document('/.well-known/oauth-protected-resource', resourceMetadata),
    document('/.well-known/oauth-protected-resource/api/v1', resourceMetadata),
    document('/.well-known/oauth-protected-resource/mcp', protectedResourceMetadata(config, 'mcp')),
  ];
}
