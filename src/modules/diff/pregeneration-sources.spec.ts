import { pregenerationSources, type VersionCandidate } from './pregeneration-sources.js';

function versions(...specs: string[]): VersionCandidate[] {
  return specs.map((spec) => {
    const yanked = spec.endsWith('!');
    const version = yanked ? spec.slice(0, -1) : spec;
    return { id: `id-${version}`, version, yanked };
  });
}

const versionsOf = (rows: VersionCandidate[]) => rows.map((row) => row.version);

describe('pregenerationSources', () => {
  it('picks the highest lower versions, newest first, up to the count', () => {
    const rows = versions('1.0.0', '1.1.0', '1.2.0', '1.3.0', '2.0.0');
    expect(versionsOf(pregenerationSources(rows, '2.0.0', 3))).toEqual(['1.3.0', '1.2.0', '1.1.0']);
  });

  it('orders by semver, not by text', () => {
    const rows = versions('1.9.0', '1.10.0', '1.2.0', '1.11.0');
    expect(versionsOf(pregenerationSources(rows, '1.11.0', 2))).toEqual(['1.10.0', '1.9.0']);
  });

  it('skips yanked versions and takes the next one instead', () => {
    const rows = versions('1.0.0', '1.1.0', '1.2.0!', '1.3.0');
    expect(versionsOf(pregenerationSources(rows, '1.4.0', 3))).toEqual(['1.3.0', '1.1.0', '1.0.0']);
  });

  it('never uses the new version itself or a higher one', () => {
    const rows = versions('1.0.0', '1.4.3', '2.0.0', '2.1.0');
    expect(versionsOf(pregenerationSources(rows, '1.4.3', 3))).toEqual(['1.0.0']);
  });

  it('leaves prereleases out when the new version is a stable release', () => {
    const rows = versions('1.0.0', '2.0.0-beta.1', '2.0.0-rc.1');
    expect(versionsOf(pregenerationSources(rows, '2.0.0', 3))).toEqual(['1.0.0']);
  });

  it('includes earlier prereleases and releases when the new version is a prerelease', () => {
    const rows = versions('1.0.0', '2.0.0-beta.1', '2.0.0-beta.2');
    expect(versionsOf(pregenerationSources(rows, '2.0.0-beta.2', 3))).toEqual(['2.0.0-beta.1', '1.0.0']);
  });

  it('returns nothing when the count is zero', () => {
    expect(pregenerationSources(versions('1.0.0'), '1.1.0', 0)).toEqual([]);
  });
});
