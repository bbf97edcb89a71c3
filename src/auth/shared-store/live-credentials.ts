import { PlatformError } from '../../common/errors.js';
import type { Principal } from '../principal.js';
import type { Revocations } from './revocations.js';

/**
 * The login a credential belongs to. Tokens minted before logins were tracked (and `tb token`'s) carry no
 * `lid`: their own `jti` stands for the login, so a cookie exchanged for one still ends with that token.
 */
export function loginIdOf(principal: Pick<Principal, 'loginId' | 'tokenId'>): string | undefined {
  return principal.loginId ?? (principal.tokenId ? `jti:${principal.tokenId}` : undefined);
}

/** UNAUTHORIZED when the access token itself or the login it belongs to was revoked. */
export async function assertTokenLive(
  revocations: Revocations,
  principal: Pick<Principal, 'loginId' | 'tokenId'>,
): Promise<void> {
  if (principal.tokenId && (await revocations.isRevoked('token', principal.tokenId)))
    throw new PlatformError('UNAUTHORIZED', 'Authentication failed: token has been revoked');
  if (principal.loginId && (await revocations.isRevoked('login', principal.loginId)))
    throw new PlatformError('UNAUTHORIZED', 'Authentication failed: the login was ended (logged out)');
}
