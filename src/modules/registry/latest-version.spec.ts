import { pickLatestVersion } from './latest-version.js';

describe('pickLatestVersion', () => {
  it('keeps 2.0.0 latest when 1.5.0 is uploaded after it', () => {
    expect(
      pickLatestVersion([
        { version: '2.0.0', yanked: false },
        { version: '1.5.0', yanked: false },
      ]),
    ).toBe('2.0.0');
  });

  it('prefers a stable version over a higher prerelease', () => {
    expect(
      pickLatestVersion([
        { version: '1.0.0', yanked: false },
        { version: '2.0.0-beta.1', yanked: false },
      ]),
    ).toBe('1.0.0');
  });

  it('skips yanked versions', () => {
    expect(
      pickLatestVersion([
        { version: '1.0.0', yanked: false },
        { version: '1.1.0', yanked: true },
      ]),
    ).toBe('1.0.0');
  });

  it('falls back to the highest non-yanked prerelease when no stable version is left', () => {
    expect(
      pickLatestVersion([
        { version: '1.0.0', yanked: true },
        { version: '2.0.0-rc.1', yanked: false },
      ]),
    ).toBe('2.0.0-rc.1');
  });

  it('names the highest version when every version is yanked', () => {
    expect(
      pickLatestVersion([
        { version: '1.0.0', yanked: true },
        { version: '1.2.0', yanked: true },
      ]),
    ).toBe('1.2.0');
  });

  it('is null without versions', () => {
    expect(pickLatestVersion([])).toBeNull();
  });

  it('compares numerically, not as text', () => {
    expect(
      pickLatestVersion([
        { version: '1.10.0', yanked: false },
        { version: '1.9.0', yanked: false },
      ]),
    ).toBe('1.10.0');
  });
});
