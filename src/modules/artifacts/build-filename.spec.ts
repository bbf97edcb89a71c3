import { keySegment, safeFilename } from './build-filename.js';

describe('safeFilename', () => {
  it('keeps an ordinary file name', () => {
    expect(safeFilename('app-setup_1.2.msi')).toBe('app-setup_1.2.msi');
  });

  it('drops any directory the client sent, with either separator', () => {
    expect(safeFilename('C:\\Users\\me\\..\\app.exe')).toBe('app.exe');
    expect(safeFilename('../../etc/passwd')).toBe('passwd');
  });

  it('replaces unsafe characters and strips leading dots', () => {
    expect(safeFilename('.my app (final)"\r\n.dmg')).toBe('my_app_final_.dmg');
  });

  it('answers null when the name says nothing', () => {
    expect(safeFilename(undefined)).toBeNull();
    expect(safeFilename('upload')).toBeNull();
    expect(safeFilename('...')).toBeNull();
  });

  it('shortens a long name to 200 characters and keeps its extension', () => {
    const name = safeFilename(`${'a'.repeat(300)}.AppImage`)!;
    expect(name).toHaveLength(200);
    expect(name.endsWith('.AppImage')).toBe(true);
  });
});

describe('keySegment', () => {
  it('turns semver build metadata into a URL-safe segment', () => {
    expect(keySegment('1.0.0+build.7')).toBe('1.0.0_build.7');
  });
});
