import { DocumentBuilder } from '@nestjs/swagger';
import { addAuthSecuritySchemes } from './openapi.js';

describe('addAuthSecuritySchemes', () => {
  const schemes = (strategies: Array<'jwt' | 'api-key' | 'session-cookie'>) =>
    addAuthSecuritySchemes(new DocumentBuilder(), { strategies }).build().components?.securitySchemes ?? {};

  it('declares only the bearer scheme for a JWT-only service (the registry)', () => {
    expect(Object.keys(schemes(['jwt']))).toEqual(['bearer']);
  });

  it('declares the X-API-Key header for API keys, besides bearer', () => {
    expect(schemes(['api-key'])).toMatchObject({
      bearer: { type: 'http', scheme: 'bearer' },
      api_key: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
    });
  });

  it('declares the session cookie by its name', () => {
    expect(schemes(['session-cookie'])).toEqual({
      session_cookie: expect.objectContaining({ type: 'apiKey', in: 'cookie', name: 'tb_session' }),
    });
  });
});
