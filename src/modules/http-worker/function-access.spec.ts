import { decideAccess, isOpenFunction } from './function-access.js';

const ask = (functionName: string, required: number, callerLevel: number | null, module = 'M') =>
  decideAccess({ module, functionName, required, callerLevel, openModules: ['Open.Mod'] });

describe('isOpenFunction', () => {
  it('is open for a listed module or an open* name only', () => {
    expect(isOpenFunction('Open.Mod', 'x', ['Open.Mod'])).toBe(true);
    expect(isOpenFunction('M', 'openThing', [])).toBe(true);
    expect(isOpenFunction('M', 'reopen', [])).toBe(false);
    expect(isOpenFunction('Open', 'x', ['Open.Mod'])).toBe(false);
  });

  it('keeps the passkey functions closed by name: the logins are opened by their ignoreCredentials option', () => {
    expect(isOpenFunction('CloudM.Auth', 'passkey_login_start', [])).toBe(false);
    expect(isOpenFunction('CloudM.Auth', 'passkey_register_start', [])).toBe(false);
  });
});

describe('decideAccess', () => {
  it('needs a session for a closed function, whatever its level', () => {
    for (const required of [-1, 0, 1, 2])
      expect(ask('f', required, null)).toMatchObject({ allowed: false, status: 401 });
  });

  it('lets anyone call an open level-0 function, and still needs the level of an open higher one', () => {
    expect(ask('open_f', 0, null)).toEqual({ allowed: true });
    expect(ask('f', 0, null, 'Open.Mod')).toEqual({ allowed: true });
    expect(ask('open_f', 1, null)).toMatchObject({ allowed: false, status: 401 });
    expect(ask('open_f', 1, 0)).toMatchObject({ allowed: false, status: 403 });
  });

  it('follows the non-monotonic order for sessions', () => {
    const table: Array<[required: number, caller: number, allowed: boolean]> = [
      [-1, -1, true],
      [-1, 0, false],
      [-1, 1, false],
      [-1, 2, false],
      [0, -1, true],
      [0, 0, true],
      [0, 2, true],
      [1, -1, true],
      [1, 0, false],
      [1, 1, true],
      [1, 2, true],
      [2, -1, true],
      [2, 1, false],
      [2, 2, true],
    ];
    for (const [required, caller, allowed] of table) {
      const decision = ask('f', required, caller);
      expect({ required, caller, allowed: decision.allowed }).toEqual({ required, caller, allowed });
      if (!decision.allowed) expect(decision.status).toBe(403);
    }
  });
});

describe('decideAccess for functions that ignore credentials', () => {
  it('lets an anonymous caller reach a function registered with ignoreCredentials outside OPEN_MODULES', () => {
    const question = { module: 'CloudM.Auth', functionName: 'refresh_token', required: 0, callerLevel: null };
    expect(decideAccess({ ...question, openModules: [] })).toMatchObject({ allowed: false, status: 401 });
    expect(decideAccess({ ...question, openModules: [], credentialsIgnored: true })).toEqual({ allowed: true });
  });
});
