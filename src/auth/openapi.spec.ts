import { DocumentBuilder } from '@nestjs/swagger';
import { addAuthSecuritySchemes } from './openapi.js';

describe('addAuthSecuritySchemes', () => {
  const schemes = (strategies: Array<'jwt' | 'gateway-key' | 'mcp-key' | 'session-cookie' | 'cluster-secret'>) =>
    addAuthSecuritySchemes(new DocumentBuilder(), { strategies }).build().components?.securitySchemes ?? {};

  it('declares only the bearer scheme for a JWT-only service (the registry)', () => {
    expect(Object.keys(schemes(['jwt']))).toEqual(['bearer']);
  });

  it('declares the X-API-Key header for keys, besides bearer', () => {
    expect(schemes(['mcp-key'])).toMatchObject({
      bearer: { type: 'http', scheme: 'bearer' },
      api_key: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
    });
  });

  it('declares X-Cluster-Secret for the manager', () => {
    expect(schemes(['cluster-secret'])).toEqual({
      cluster_secret: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-Cluster-Secret' }),
    });
  });

  it('declares the session cookie by its name', () => {
    expect(schemes(['session-cookie'])).toEqual({
      session_cookie: expect.objectContaining({ type: 'apiKey', in: 'cookie', name: 'tb_session' }),
    });
  });
});
