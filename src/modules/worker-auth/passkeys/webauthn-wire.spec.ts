import { PlatformError } from '../../../common/errors.js';
import {
  authenticationResponseOf,
  challengeOf,
  registrationResponseOf,
  relyingPartyFor,
  toBase64Url,
} from './webauthn-wire.js';

const UNCONFIGURED = { rpId: null, rpName: 'Toolbox', origins: [] };

function codeOf(work: () => unknown): string {
  try {
    work();
  } catch (error) {
    if (error instanceof PlatformError) return error.code;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('relyingPartyFor', () => {
  it("takes the worker's own Host when nothing is configured", () => {
    expect(relyingPartyFor(UNCONFIGURED, 'localhost:8000')).toEqual({
      rpId: 'localhost',
      rpName: 'Toolbox',
      origins: ['https://localhost:8000', 'http://localhost:8000'],
    });
  });

  it('keeps the configured relying party whatever Host the request names', () => {
    const configured = { rpId: 'example.com', rpName: 'Box', origins: ['https://app.example.com'] };
    expect(relyingPartyFor(configured, 'evil.example')).toEqual(configured);
  });

  it('is unavailable with neither a configuration nor a Host', () => {
    expect(codeOf(() => relyingPartyFor(UNCONFIGURED, null))).toBe('SERVICE_UNAVAILABLE');
    expect(codeOf(() => relyingPartyFor(UNCONFIGURED, 'bad host'))).toBe('SERVICE_UNAVAILABLE');
  });
});

describe('the web client credential shape', () => {
  const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge: 'abc_-1' })).toString(
    'base64url',
  );

  it('reads base64url, padded base64url and standard base64 alike', () => {
    expect(toBase64Url('a-_b')).toBe('a-_b');
    expect(toBase64Url('a+/b==')).toBe('a-_b');
    expect(toBase64Url('not base64!')).toBeNull();
    expect(toBase64Url(42)).toBeNull();
  });

  it('fills what the client leaves out (type, rawId, clientExtensionResults) and drops a null userHandle', () => {
    const response = authenticationResponseOf({
      id: 'Y3JlZA',
      response: { clientDataJSON, authenticatorData: 'AAAA', signature: 'c2ln', userHandle: null },
    });
    expect(response).toEqual({
      id: 'Y3JlZA',
      rawId: 'Y3JlZA',
      type: 'public-key',
      clientExtensionResults: {},
      authenticatorAttachment: undefined,
      response: { clientDataJSON, authenticatorData: 'AAAA', signature: 'c2ln' },
    });
  });

  it('refuses a credential of another type, differing ids, or a missing field', () => {
    const response = { clientDataJSON, attestationObject: 'AAAA' };
    expect(codeOf(() => registrationResponseOf({ id: 'AA', type: 'password', response }))).toBe('BAD_REQUEST');
    expect(codeOf(() => registrationResponseOf({ id: 'AA', rawId: 'AB', response }))).toBe('BAD_REQUEST');
    expect(codeOf(() => registrationResponseOf({ id: 'AA', response: { clientDataJSON } }))).toBe('BAD_REQUEST');
    expect(codeOf(() => registrationResponseOf(null))).toBe('BAD_REQUEST');
  });

  it('finds the challenge in clientDataJSON, and refuses one that is not there', () => {
    expect(challengeOf(clientDataJSON)).toBe('abc_-1');
    expect(codeOf(() => challengeOf(Buffer.from('{}').toString('base64url')))).toBe('BAD_REQUEST');
    expect(codeOf(() => challengeOf('bm90IGpzb24'))).toBe('BAD_REQUEST');
  });
});
