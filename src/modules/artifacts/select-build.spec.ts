import { selectBuild, selectLatestBuild, type BuildTarget } from './select-build.js';

const build = (platform: BuildTarget['platform'], architecture: BuildTarget['architecture']): BuildTarget => ({
  platform,
  architecture,
});

describe('selectBuild', () => {
  const builds = [build('windows', 'x64'), build('windows', 'arm64'), build('linux', 'all'), build('all', 'all')];

  it('picks the exact platform and architecture', () => {
    expect(selectBuild(builds, { platform: 'windows', architecture: 'arm64' })).toEqual({
      kind: 'found',
      build: builds[1],
    });
  });

  it('falls back to the platform build for all architectures', () => {
    expect(selectBuild(builds, { platform: 'linux', architecture: 'arm64' })).toEqual({
      kind: 'found',
      build: builds[2],
    });
  });

  it('falls back to the universal build for a platform without its own', () => {
    expect(selectBuild(builds, { platform: 'macos', architecture: 'arm64' })).toEqual({
      kind: 'found',
      build: builds[3],
    });
  });

  it('prefers an exact platform with a universal architecture over a universal platform', () => {
    const choice = selectBuild([build('all', 'x64'), build('linux', 'all')], {
      platform: 'linux',
      architecture: 'x64',
    });
    expect(choice).toEqual({ kind: 'found', build: build('linux', 'all') });
  });

  it('finds nothing when no build serves the platform', () => {
    expect(selectBuild([build('windows', 'x64')], { platform: 'linux', architecture: 'x64' })).toEqual({
      kind: 'none',
    });
  });

  it('finds nothing when only another architecture exists', () => {
    expect(selectBuild([build('windows', 'x64')], { platform: 'windows', architecture: 'arm64' })).toEqual({
      kind: 'none',
    });
  });

  it('takes the only build when nothing is requested', () => {
    expect(selectBuild([build('windows', 'x64')], {})).toEqual({ kind: 'found', build: build('windows', 'x64') });
  });

  it('calls two equally good builds ambiguous', () => {
    const choice = selectBuild([build('windows', 'x64'), build('windows', 'arm64')], { platform: 'windows' });
    expect(choice.kind).toBe('ambiguous');
  });

  it('prefers the universal build when nothing is requested', () => {
    expect(selectBuild(builds, {})).toEqual({ kind: 'found', build: builds[3] });
  });
});

describe('selectLatestBuild', () => {
  const versions = [
    { version: '2.0.0', builds: [build('windows', 'x64')] },
    { version: '1.5.0', builds: [build('linux', 'x64')] },
    { version: '1.0.0', builds: [build('all', 'all')] },
  ];

  it('takes the highest version with a matching build', () => {
    const result = selectLatestBuild(versions, (v) => v.builds, { platform: 'linux', architecture: 'x64' });
    expect(result?.version.version).toBe('1.5.0');
  });

  it('reaches back to a universal build of an older version', () => {
    const result = selectLatestBuild(versions, (v) => v.builds, { platform: 'macos', architecture: 'arm64' });
    expect(result?.version.version).toBe('1.0.0');
  });

  it('answers null when no version has a matching build', () => {
    expect(selectLatestBuild(versions.slice(0, 2), (v) => v.builds, { platform: 'ios' })).toBeNull();
  });
});
