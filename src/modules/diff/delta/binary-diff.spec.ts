import { randomBytes } from 'node:crypto';
import { PlatformError } from '../../../common/errors.js';
import { applyBinaryPatch, canDiff, compressContent, createBinaryPatch, decompressContent } from './binary-diff.js';

const oldContent = randomBytes(512 * 1024);
const newContent = Buffer.concat([
  oldContent.subarray(0, 300_000),
  Buffer.from('inserted bytes'),
  oldContent.subarray(300_000),
]);

describe('binary diff engine', () => {
  it('round-trips a patch made against the old content', () => {
    const patch = createBinaryPatch(oldContent, newContent);
    expect(applyBinaryPatch(oldContent, patch, newContent.length).equals(newContent)).toBe(true);
  });

  it('makes a patch far smaller than the new content when little changed', () => {
    expect(createBinaryPatch(oldContent, newContent).length).toBeLessThan(1024);
  });

  it('refuses to diff entries above the size cap', () => {
    expect(canDiff(oldContent, newContent, 100_000)).toBe(false);
  });

  it('refuses old content that zstd would parse as a formatted dictionary', () => {
    const dictionaryLike = Buffer.concat([Buffer.from([0x37, 0xa4, 0x30, 0xec]), randomBytes(64)]);
    expect(canDiff(dictionaryLike, newContent)).toBe(false);
  });

  it('rejects a frame that declares a size other than the entry size', () => {
    const frame = compressContent(newContent);
    expect(() => decompressContent(frame, newContent.length - 1)).toThrow(PlatformError);
  });

  it('rejects a patch applied to different old content', () => {
    const patch = createBinaryPatch(oldContent, newContent);
    const decoded = (() => {
      try {
        return applyBinaryPatch(randomBytes(oldContent.length), patch, newContent.length);
      } catch (error) {
        return error;
      }
    })();
    // Either zstd notices (dictionary checksum) or the bytes differ; the caller's SHA-256 check covers the second case.
    expect(decoded instanceof PlatformError || !(decoded as Buffer).equals(newContent)).toBe(true);
  });
});
