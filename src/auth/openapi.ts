import type { DocumentBuilder } from '@nestjs/swagger';
import { API_KEY_SECURITY, CLUSTER_SECRET_SECURITY, SESSION_COOKIE_SECURITY } from './access.decorators.js';
import type { AuthModuleOptions } from './auth.options.js';

/**
 * Declares the security schemes the access decorators refer to, for the strategies a service uses: `bearer`
 * (JWT, and keys sent as bearer tokens), `api_key` (X-API-Key: gateway and MCP keys), `session_cookie`,
 * `cluster_secret` (X-Cluster-Secret).
 */
export function addAuthSecuritySchemes(
  builder: DocumentBuilder,
  options: Pick<AuthModuleOptions, 'strategies' | 'sessionCookie'>,
): DocumentBuilder {
  const uses = (name: AuthModuleOptions['strategies'][number]) => options.strategies.includes(name);
  const keys = uses('gateway-key') || uses('mcp-key');
  if (uses('jwt') || keys) builder.addBearerAuth();
  if (keys)
    builder.addApiKey(
      {
        type: 'apiKey',
        in: 'header',
        name: 'X-API-Key',
        description: uses('mcp-key') ? 'MCP API key (tb_mcp_…)' : 'Gateway API key (sk-tb-…)',
      },
      API_KEY_SECURITY,
    );
  if (uses('session-cookie'))
    builder.addCookieAuth(
      options.sessionCookie?.name ?? 'tb_session',
      { type: 'apiKey', in: 'cookie' },
      SESSION_COOKIE_SECURITY,
    );
  if (uses('cluster-secret'))
    builder.addApiKey(
      { type: 'apiKey', in: 'header', name: 'X-Cluster-Secret', description: 'The manager secret (CLUSTER_SECRET)' },
      CLUSTER_SECRET_SECURITY,
    );
  return builder;
}
