import { createHmac } from 'node:crypto';
import { JwtService } from '@nestjs/jwt';
import type { PlatformConfig } from '../../src/config/config.js';
import type { AuthModuleOptions } from '../../src/auth/auth.options.js';
import type { CredentialRequest } from '../../src/auth/principal.js';
import { SessionCookies } from '../../src/auth/session-cookie/session-cookies.js';
import { MemoryAuthStore, type AuthStore } from '../../src/auth/shared-store/auth-store.js';
import { Revocations } from '../../src/auth/shared-store/revocations.js';
import { JwtBearerStrategy } from '../../src/auth/strategies/jwt-bearer.strategy.js';
import { TokenVerifier } from '../../src/auth/token-verifier.js';

/** Shared by the auth specs: real verifiers and stores, the database in memory. */
export const SPEC_SECRET = 'spec-secret-0123456789abcdefghij';

export function specConfig(): PlatformConfig {
  return { jwtSecret: SPEC_SECRET } as PlatformConfig;
}

export function tokenVerifier(): TokenVerifier {
  return new TokenVerifier(new JwtService({}), specConfig());
}

export function sessionCookies(
  store: AuthStore = new MemoryAuthStore(),
  options: AuthModuleOptions['sessionCookie'] = {},
): SessionCookies {
  return new SessionCookies(
    { strategies: ['session-cookie'], sessionCookie: options },
    specConfig(),
    new Revocations(store),
  );
}

/** The jwt strategy with its revocation check over `store`. */
export function jwtBearerStrategy(store: AuthStore = new MemoryAuthStore()): JwtBearerStrategy {
  return new JwtBearerStrategy(tokenVerifier(), new Revocations(store));
}

export function requestWith(headers: Record<string, string>): CredentialRequest & { principal?: unknown } {
  return { headers } as CredentialRequest;
}

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** A hand-made HS256 JWT, so specs can forge what the real signer never would. */
export function forgeJwt(
  claims: Record<string, unknown>,
  secret = SPEC_SECRET,
  header: Record<string, unknown> = { alg: 'HS256', typ: 'JWT' },
): string {
  const unsigned = `${base64url(header)}.${base64url(claims)}`;
  return `${unsigned}.${createHmac('sha256', secret).update(unsigned).digest('base64url')}`;
}

export const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;
