import { apr1 } from './apr1.js';

// Vectors from `openssl passwd -apr1 -salt SALT PASSWORD` (OpenSSL 3 on Debian 12).
describe('apr1 (htpasswd MD5-crypt)', () => {
  it.each([
    ['secret', 'Ab3/x.Z9', '$apr1$Ab3/x.Z9$FHEvnoNwQn02mBWtnIh7h1'],
    ['correct horse battery staple', 'Ab3/x.Z9', '$apr1$Ab3/x.Z9$VI2AL6wgqgapYMKrfCq9Y/'],
    ['p@ss:wörd', 'Ab3/x.Z9', '$apr1$Ab3/x.Z9$kRG2VSK6Llxo75mRHS2ho.'],
    ['', 'Ab3/x.Z9', '$apr1$Ab3/x.Z9$1CsV5MnGRGNy87ugPSzdA0'],
    ['longpasswordlongerthansixteenbytes!', 'xy', '$apr1$xy$UAviadAEjzNABY/4ja96u0'],
  ])('hashes %j with salt %s as openssl does', (password, salt, expected) => {
    expect(apr1(password, salt)).toBe(expected);
  });

  it('draws a new 8-character salt each time', () => {
    const first = apr1('secret');
    expect(first).toMatch(/^\$apr1\$[./0-9A-Za-z]{8}\$[./0-9A-Za-z]{22}$/);
    expect(apr1('secret')).not.toBe(first);
  });
});
