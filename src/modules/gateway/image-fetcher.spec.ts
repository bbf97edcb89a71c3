import { isPublicAddress, resolveImageUrl } from './image-fetcher.js';

describe('isPublicAddress', () => {
  it.each([
    ['8.8.8.8', true],
    ['2606:4700:4700::1111', true],
    ['127.0.0.1', false],
    ['10.1.2.3', false],
    ['172.20.0.1', false],
    ['192.168.1.1', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['0.0.0.0', false],
    ['::1', false],
    ['fd00::1', false],
    ['fe80::1', false],
    ['::ffff:127.0.0.1', false],
    ['::ffff:8.8.8.8', true],
    ['not-an-ip', false],
  ])('%s → %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });
});

describe('resolveImageUrl', () => {
  const limits = { maxBytes: 8, timeoutMs: 1000, allowPrivate: false };

  it('decodes data URLs and caps their size', async () => {
    await expect(resolveImageUrl('data:image/png;base64,AAAA', limits)).resolves.toBe('AAAA');
    await expect(resolveImageUrl(`data:image/png;base64,${'A'.repeat(16)}`, limits)).rejects.toThrow(
      'larger than 8 bytes',
    );
  });

  it('refuses other schemes and literal private addresses without connecting', async () => {
    await expect(resolveImageUrl('file:///etc/passwd', limits)).rejects.toThrow('data: URL or an http(s) URL');
    await expect(resolveImageUrl('http://10.0.0.1/a.png', limits)).rejects.toThrow(
      'resolves to a private address (10.0.0.1)',
    );
  });
});
