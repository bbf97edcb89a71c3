import type { DocumentBuilder } from '@nestjs/swagger';
import { API_KEY_SECURITY, SESSION_COOKIE_SECURITY } from './access.decorators.js';
import type { AuthModuleOptions } from './auth.options.js';

/**
 * Declares the security schemes the access decorators refer to, for the strategies a service uses:
 * `bearer` (JWT, and API keys sent as bearer tokens), `api_key` (X-API-Key), `session_cookie`.
 */
export function addAuthSecuritySchemes(
  builder: DocumentBuilder,
  options: Pick<AuthModuleOptions, 'strategies' | 'sessionCookie'>,
): DocumentBuilder {
  const uses = (name: AuthModuleOptions['strategies'][number]) => options.strategies.includes(name);
  if (uses('jwt') || uses('api-key')) builder.addBearerAuth();
  if (uses('api-key'))
    builder.addApiKey(
      { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'API key (tbk_…)' },
      API_KEY_SECURITY,
    );
  if (uses('session-cookie'))
    builder.addCookieAuth(
      options.sessionCookie?.name ?? 'tb_session',
      { type: 'apiKey', in: 'cookie' },
      SESSION_COOKIE_SECURITY,
    );
  return builder;
}
