import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { PlatformError } from '../../../common/errors.js';
import type { WebAuthnConfig } from '../../../config/config.js';

/** The relying party one ceremony is checked against. */
export interface RelyingParty {
  rpId: string;
  rpName: string;
  origins: string[];
}

/**
 * The relying party of a request: the configured one, else the worker's own Host. A browser only hands a
 * credential to pages on the RP id's domain, so a Host chosen by someone else cannot reach another site's
 * passkeys; both schemes are accepted for that Host because browsers run WebAuthn only in secure contexts
 * (https, or http on localhost) anyway.
 */
export function relyingPartyFor(config: WebAuthnConfig, host: string | null | undefined): RelyingParty {
  let ownHost: URL | null = null;
  if (host) {
    try {
      ownHost = new URL(`http://${host}`);
    } catch {
      ownHost = null;
    }
  }
  const rpId = config.rpId ?? ownHost?.hostname.replace(/^\[|\]$/g, '') ?? null;
  const origins =
    config.origins.length > 0 ? config.origins : ownHost ? [`https://${ownHost.host}`, `http://${ownHost.host}`] : [];
  if (!rpId || origins.length === 0)
    throw new PlatformError('SERVICE_UNAVAILABLE', 'Passkeys need WEBAUTHN_RP_ID and WEBAUTHN_ORIGINS here');
  return { rpId, rpName: config.rpName, origins };
}

/** Base64url without padding, from base64url or standard base64 with or without padding; null when not base64. */
export function toBase64Url(value: unknown, maxLength = 16_384): string | null {
  if (typeof value !== 'string' || value.length === 0 || value.length > maxLength) return null;
  const url = value.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  return /^[A-Za-z0-9_-]+$/.test(url) ? url : null;
}

function field(source: Record<string, unknown>, name: string, required: boolean): string | undefined {
  const value = toBase64Url(source[name]);
  if (value === null) {
    if (!required && (source[name] === undefined || source[name] === null)) return undefined;
    throw new PlatformError('BAD_REQUEST', `credential.${name} must be base64url`);
  }
  return value;
}

function credentialParts(credential: unknown): {
  id: string;
  rawId: string;
  response: Record<string, unknown>;
  attachment: unknown;
} {
  if (typeof credential !== 'object' || credential === null || Array.isArray(credential))
    throw new PlatformError('BAD_REQUEST', 'Challenge and credential required: credential must be an object');
  const source = credential as Record<string, unknown>;
  if (source.type !== undefined && source.type !== 'public-key')
    throw new PlatformError('BAD_REQUEST', 'credential.type must be "public-key"');
  const response = source.response;
  if (typeof response !== 'object' || response === null || Array.isArray(response))
    throw new PlatformError('BAD_REQUEST', 'credential.response must be an object');
  const id = field(source, 'id', false) ?? field(source, 'rawId', true)!;
  const rawId = field(source, 'rawId', false) ?? id;
  if (rawId !== id) throw new PlatformError('BAD_REQUEST', 'credential.id and credential.rawId differ');
  return { id, rawId, response: response as Record<string, unknown>, attachment: source.authenticatorAttachment };
}

function attachmentOf(value: unknown): 'platform' | 'cross-platform' | undefined {
  return value === 'platform' || value === 'cross-platform' ? value : undefined;
}

/**
 * A registration response as the library reads it, from what the web client sends: binary fields as base64url
 * (padding or standard base64 tolerated), no `clientExtensionResults`, no `transports`, no `type`.
 */
export function registrationResponseOf(credential: unknown): RegistrationResponseJSON {
  const { id, rawId, response, attachment } = credentialParts(credential);
  const transports = Array.isArray(response.transports)
    ? response.transports.filter((item): item is string => typeof item === 'string' && item.length <= 32).slice(0, 8)
    : undefined;
  return {
    id,
    rawId,
    type: 'public-key',
    clientExtensionResults: {},
    authenticatorAttachment: attachmentOf(attachment),
    response: {
      clientDataJSON: field(response, 'clientDataJSON', true)!,
      attestationObject: field(response, 'attestationObject', true)!,
      ...(transports ? { transports } : {}),
    },
  };
}

/** An authentication response as the library reads it (see registrationResponseOf); `userHandle` may be null. */
export function authenticationResponseOf(credential: unknown): AuthenticationResponseJSON {
  const { id, rawId, response, attachment } = credentialParts(credential);
  const userHandle = field(response, 'userHandle', false);
  return {
    id,
    rawId,
    type: 'public-key',
    clientExtensionResults: {},
    authenticatorAttachment: attachmentOf(attachment),
    response: {
      clientDataJSON: field(response, 'clientDataJSON', true)!,
      authenticatorData: field(response, 'authenticatorData', true)!,
      signature: field(response, 'signature', true)!,
      ...(userHandle ? { userHandle } : {}),
    },
  };
}

/**
 * The challenge the browser signed, read from `clientDataJSON`: the web client sends no challenge of its own, so
 * the server finds its stored challenge by this one (and the signature check proves it is the one signed).
 */
export function challengeOf(clientDataJSON: string): string {
  let challenge: unknown;
  try {
    challenge = (JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8')) as { challenge?: unknown })
      .challenge;
  } catch {
    throw new PlatformError('BAD_REQUEST', 'credential.response.clientDataJSON is not JSON');
  }
  const normalized = toBase64Url(challenge, 256);
  if (normalized === null) throw new PlatformError('BAD_REQUEST', 'clientDataJSON has no challenge');
  return normalized;
}
