import { UrlSigner } from './url-signer.js';

const NOW = Date.parse('2026-01-15T12:00:00Z');
const PATH = '/api/v1/files/packages/abc/1.0.0.zip';

function signedParameters(
  signer: UrlSigner,
  path = PATH,
  expiresInSeconds = 300,
): { expires: string; signature: string } {
  const query = new URLSearchParams(signer.sign(path, expiresInSeconds, NOW).query);
  return { expires: query.get('expires') ?? '', signature: query.get('signature') ?? '' };
}

describe('UrlSigner', () => {
  const signer = new UrlSigner('platform-secret');

  it('accepts its own signature before the expiry', () => {
    const { expires, signature } = signedParameters(signer);

    expect(signer.verify(PATH, expires, signature, NOW + 299_000)).toBe('ok');
  });

  it('puts the expiry in whole seconds from now into the query and the result', () => {
    const signed = signer.sign(PATH, 300, NOW);

    expect(signed.expiresAt).toBe(NOW / 1000 + 300);
    expect(new URLSearchParams(signed.query).get('expires')).toBe(String(NOW / 1000 + 300));
  });

  it('signs with 64 hex digits', () => {
    expect(signedParameters(signer).signature).toMatch(/^[0-9a-f]{64}$/);
  });

  it('reports an elapsed signature as expired', () => {
    const { expires, signature } = signedParameters(signer);

    expect(signer.verify(PATH, expires, signature, NOW + 301_000)).toBe('expired');
  });

  it('still accepts the signature in the very second it expires', () => {
    const { expires, signature } = signedParameters(signer);

    expect(signer.verify(PATH, expires, signature, NOW + 300_000)).toBe('ok');
  });

  it('rejects the signature for another path', () => {
    const { expires, signature } = signedParameters(signer);

    expect(signer.verify('/api/v1/files/packages/abc/2.0.0.zip', expires, signature, NOW)).toBe('invalid');
  });

  it('rejects a later expiry than the one signed', () => {
    const { expires, signature } = signedParameters(signer);

    expect(signer.verify(PATH, String(Number(expires) + 3600), signature, NOW)).toBe('invalid');
  });

  it('rejects a tampered signature of the right length', () => {
    const { expires, signature } = signedParameters(signer);
    const tampered = `${signature.slice(0, -1)}${signature.endsWith('0') ? '1' : '0'}`;

    expect(signer.verify(PATH, expires, tampered, NOW)).toBe('invalid');
  });

  it('rejects an expired URL whose expiry was tampered with as invalid, not expired', () => {
    const { expires, signature } = signedParameters(signer);

    expect(signer.verify(PATH, String(Number(expires) - 1), signature, NOW + 400_000)).toBe('invalid');
  });

  it.each([
    ['non-hex characters', 'z'.repeat(64)],
    ['a short signature', 'ab'.repeat(16)],
    ['a long signature', 'ab'.repeat(33)],
    ['an empty signature', ''],
  ])('rejects %s', (_case, badSignature) => {
    const { expires } = signedParameters(signer);

    expect(signer.verify(PATH, expires, badSignature, NOW)).toBe('invalid');
  });

  it.each([
    ['trailing non-hex characters', (signature: string) => `${signature}zz`],
    ['a trailing odd hex digit', (signature: string) => `${signature}a`],
    ['upper-case digits', (signature: string) => signature.toUpperCase()],
  ])('accepts only the exact signature text, not one with %s', (_case, alter) => {
    const { expires, signature } = signedParameters(signer);

    expect(signer.verify(PATH, expires, alter(signature), NOW)).toBe('invalid');
  });

  it.each([
    ['missing', undefined],
    ['a number instead of text', 1768478700],
    ['negative', '-1'],
    ['fractional', '1768478700.5'],
    ['not a number', 'tomorrow'],
    ['an array of values', ['1768478700', '1768478700']],
  ])('rejects an expiry that is %s', (_case, badExpiry) => {
    const { signature } = signedParameters(signer);

    expect(signer.verify(PATH, badExpiry, signature, NOW)).toBe('invalid');
  });

  it('rejects a signature that is not text', () => {
    const { expires, signature } = signedParameters(signer);

    expect(signer.verify(PATH, expires, [signature], NOW)).toBe('invalid');
  });

  it('does not accept signatures made with another secret', () => {
    const other = new UrlSigner('another-secret');
    const { expires, signature } = signedParameters(other);

    expect(signer.verify(PATH, expires, signature, NOW)).toBe('invalid');
    expect(other.verify(PATH, expires, signature, NOW)).toBe('ok');
  });

  it('signs the same path and expiry identically with the same secret', () => {
    expect(signedParameters(new UrlSigner('platform-secret')).signature).toBe(signedParameters(signer).signature);
  });

  it('binds a scope into the signature without writing it into the URL', () => {
    const { query } = signer.sign(PATH, 60, NOW, 'public');
    expect(query).toMatch(/^expires=\d+&signature=[0-9a-f]{64}$/);
    const params = new URLSearchParams(query);
    const [expires, signature] = [params.get('expires'), params.get('signature')];
    expect(signer.verifyScoped(PATH, expires, signature, [undefined, 'public', 'private'], NOW)).toEqual({
      verdict: 'ok',
      scope: 'public',
    });
    expect(signer.verify(PATH, expires, signature, NOW)).toBe('invalid');
    expect(signer.verifyScoped(PATH, expires, signature, ['private'], NOW).verdict).toBe('invalid');
  });
});
