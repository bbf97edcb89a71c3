import { PlatformError } from '../../common/errors.js';
import { mergeUserData, type EditableUserData } from './user-data.js';

const current: EditableUserData = { username: 'ada', settings: { theme: 'dark' }, modData: { Notes: { a: 1 } } };

function refusal(run: () => unknown): PlatformError {
  try {
    run();
  } catch (error) {
    if (error instanceof PlatformError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('mergeUserData', () => {
  it('merges settings and mod_data key by key into what is stored', () => {
    expect(mergeUserData(current, { settings: { lang: 'de' }, modData: { Chat: { b: 2 } } }, 1024)).toEqual({
      username: 'ada',
      settings: { theme: 'dark', lang: 'de' },
      modData: { Notes: { a: 1 }, Chat: { b: 2 } },
    });
  });

  it('replaces the username and clears settings.anonymous', () => {
    expect(mergeUserData({ ...current, settings: { anonymous: true } }, { username: ' Ada L. ' }, 1024)).toMatchObject({
      username: 'Ada L.',
      settings: { anonymous: false },
    });
  });

  it('refuses settings or mod_data that are not JSON objects', () => {
    for (const value of [null, [1], 'x', 3]) {
      expect(refusal(() => mergeUserData(current, { settings: value }, 1024)).code).toBe('BAD_REQUEST');
      expect(refusal(() => mergeUserData(current, { modData: value }, 1024)).code).toBe('BAD_REQUEST');
    }
  });

  it('refuses a merge past the size cap, counting what is already stored', () => {
    const big = { settings: { blob: 'x'.repeat(600) } };
    expect(mergeUserData(current, big, 1024).settings.blob).toHaveLength(600);
    const error = refusal(() => mergeUserData({ ...current, settings: { old: 'y'.repeat(600) } }, big, 1024));
    expect(error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(error.message).toMatch(/limit is 1024/);
  });

  it('refuses usernames with markup, control characters, or empty ones', () => {
    for (const username of ['<b>x</b>', 'a"b', 'x\u0000', '', '   ', 'a'.repeat(65), 42]) {
      expect(refusal(() => mergeUserData(current, { username }, 1024)).code).toBe('BAD_REQUEST');
    }
  });
});
