import { createHash } from 'node:crypto';
describe('toolchain', () => {
  it('runs TypeScript specs as ES modules', () => {
    expect(createHash('sha256').update('x').digest('hex')).toHaveLength(64);
  });
});
