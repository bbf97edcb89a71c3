import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { PlatformError } from '../../common/errors.js';
import { isAccessLevel } from '../access-level.js';

/** The signed payload of a worker session cookie (field names as in the original `tb_session`). */
export interface SessionPayload {
  user_id: string;
  session_id: string;
  user_name: string;
  level: number;
  email: string | null;
  /** The login the session belongs to (absent in cookies issued before logins were tracked). */
  login_id?: string;
  /** Issued at and expires at, epoch seconds; `exp` is always set (the original's `exp = 0` never expired). */
  iat: number;
  exp: number;
}

/**
 * The session token: base64url(JSON payload) + "." + base64url(HMAC-SHA256(key, payload part)), the
 * original's format. The key is derived from the platform secret (HKDF, own label), so a cookie
 * signature can never be replayed as a JWT signature made with the same secret.
 */
export class SessionToken {
  private readonly key: Buffer;

  constructor(secret: string) {
    if (secret.length < 16) throw new Error('The session cookie secret must be at least 16 characters long');
    this.key = Buffer.from(hkdfSync('sha256', secret, 'toolbox-platform', 'session-cookie v1', 32));
  }

  sign(payload: SessionPayload): string {
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${body}.${this.mac(body).toString('base64url')}`;
  }

  /** The payload of a genuine, unexpired token; UNAUTHORIZED otherwise. */
  verify(token: string, nowSeconds = Date.now() / 1000): SessionPayload {
    const parts = token.split('.');
    if (parts.length !== 2 || !parts[0] || !parts[1]) throw unauthorized('malformed session cookie');
    // Compared as text: decoding first would accept other spellings of the same bytes (base64's spare low bits).
    const given = Buffer.from(parts[1]);
    const expected = Buffer.from(this.mac(parts[0]).toString('base64url'));
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      throw unauthorized('session cookie signature does not match');
    let payload: Partial<SessionPayload>;
    try {
      payload = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8'));
    } catch {
      throw unauthorized('malformed session cookie');
    }
    if (typeof payload.exp !== 'number' || payload.exp <= 0) throw unauthorized('session cookie has no expiry');
    if (payload.exp <= nowSeconds) throw unauthorized('session expired');
    if (
      typeof payload.user_id !== 'string' ||
      !payload.user_id ||
      typeof payload.session_id !== 'string' ||
      !payload.session_id
    ) {
      throw unauthorized('session cookie names no user or session');
    }
    if (!isAccessLevel(payload.level)) throw unauthorized('session cookie has no valid level');
    return {
      user_id: payload.user_id,
      session_id: payload.session_id,
      user_name: typeof payload.user_name === 'string' && payload.user_name ? payload.user_name : payload.user_id,
      level: payload.level,
      email: typeof payload.email === 'string' ? payload.email : null,
      ...(typeof payload.login_id === 'string' && payload.login_id ? { login_id: payload.login_id } : {}),
      iat: typeof payload.iat === 'number' ? payload.iat : 0,
      exp: payload.exp,
    };
  }

  private mac(body: string): Buffer {
    return createHmac('sha256', this.key).update(body).digest();
  }
}

function unauthorized(reason: string): PlatformError {
  return new PlatformError('UNAUTHORIZED', `Authentication failed: ${reason}`);
}
