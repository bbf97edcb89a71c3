import { SessionCookies } from '../../../src/auth/session-cookie/session-cookies.js';
import { backends } from '../../support/backends.js';
import { HttpWorkerTestModsModule } from '../../support/http-worker-test-mods.js';
import { startHttpWorker, type HttpWorkerUnderTest } from '../../support/worker-under-test.js';

/** A response body as JSON (any: the suites check its shape). */
const json = (response: Response): Promise<any> => response.json();

type Caller = 'none' | -1 | 0 | 1 | 2;
const CALLERS: Caller[] = ['none', -1, 0, 1, 2];

/**
 * The expected status per caller (none, admin -1, level 0, 1, 2), written out by hand: open functions
 * (OPEN_MODULES or an `open` name) need no session, the others do (401); the level holds everywhere, admin
 * (-1) passing every level, `-1` admitting admins only, 2 above 1 (403 when too low).
 */
const MATRIX: Array<[path: string, expected: [number, number, number, number, number]]> = [
  ['/api/Access/admin_only', [401, 200, 403, 403, 403]],
  ['/api/Access/anyone', [401, 200, 200, 200, 200]],
  ['/api/Access/member', [401, 200, 403, 200, 200]],
  ['/api/Access/trusted', [401, 200, 403, 403, 200]],
  ['/api/Access/open_anyone', [200, 200, 200, 200, 200]],
  ['/api/Access/open_member', [401, 200, 403, 200, 200]],
  ['/api/Access/open_admin', [401, 200, 403, 403, 403]],
  ['/api/Public.Mod/anyone', [200, 200, 200, 200, 200]],
  ['/api/Public.Mod/member', [401, 200, 403, 200, 200]],
  ['/api/Public.Mod/trusted', [401, 200, 403, 403, 200]],
  ['/api/Public.Mod/admin_only', [401, 200, 403, 403, 403]],
];

describe.each(backends())('HTTP worker access levels ($name)', (backend) => {
  let worker: HttpWorkerUnderTest;
  let cookies: SessionCookies;

  beforeAll(async () => {
    worker = await startHttpWorker(backend, { OPEN_MODULES: 'Public.Mod' }, { imports: [HttpWorkerTestModsModule] });
    cookies = worker.app.get(SessionCookies);
  });
  afterAll(() => worker?.close());

  const headersFor = (caller: Caller, via: 'jwt' | 'cookie'): Record<string, string> => {
    if (caller === 'none') return {};
    const user = { id: `usr_level${String(caller).replace('-', 'm')}`, username: `user${caller}`, level: caller };
    if (via === 'jwt') return { authorization: `Bearer ${worker.token(user)}` };
    const session = cookies.issue({ userId: user.id, username: user.username, level: caller });
    return { cookie: `tb_session=${encodeURIComponent(session.token)}` };
  };

  for (const via of ['jwt', 'cookie'] as const) {
    it(`applies every level combination with a ${via === 'jwt' ? 'Bearer token' : 'session cookie'}`, async () => {
      const actual: Array<[string, Caller, number]> = [];
      const expected: Array<[string, Caller, number]> = [];
      for (const [path, statuses] of MATRIX) {
        for (const [index, caller] of CALLERS.entries()) {
          const response = await fetch(`${worker.baseUrl}${path}`, { headers: headersFor(caller, via) });
          actual.push([path, caller, response.status]);
          expected.push([path, caller, statuses[index]]);
          const body = (await json(response)) as { error: string; info: { exec_code: number } };
          if (response.status === 200) expect(body.error).toBe('none');
          else expect(body.info.exec_code).toBe(response.status);
        }
      }
      expect(actual).toEqual(expected);
    });
  }

  it('says what is missing: a session (401) or the level (403)', async () => {
    const anonymous = await fetch(`${worker.baseUrl}/api/Access/member`);
    expect(await json(anonymous)).toMatchObject({
      error: 'InputError',
      info: { exec_code: 401, help_text: expect.stringContaining('needs a session') },
    });
    const tooLow = await fetch(`${worker.baseUrl}/api/Access/trusted`, { headers: headersFor(1, 'jwt') });
    expect(await json(tooLow)).toMatchObject({
      info: {
        exec_code: 403,
        help_text: expect.stringContaining('needs access level TRUSTED (2); the caller is LOGGED_IN (1)'),
      },
    });
  });

  it('refuses a bad credential with 401 even on an open function', async () => {
    const forged = await fetch(`${worker.baseUrl}/api/Access/open_anyone`, {
      headers: { authorization: 'Bearer not.a.jwt' },
    });
    expect(forged.status).toBe(401);
    const tampered = await fetch(`${worker.baseUrl}/api/Access/open_anyone`, {
      headers: { cookie: 'tb_session=tampered.value' },
    });
    expect(tampered.status).toBe(401);
  });

  it('refuses a logged-out session cookie', async () => {
    const session = cookies.issue({ userId: 'usr_gone', username: 'gone', level: 1 });
    const headers = { cookie: `tb_session=${encodeURIComponent(session.token)}` };
    expect((await fetch(`${worker.baseUrl}/api/Access/member`, { headers })).status).toBe(200);
    await cookies.revoke({ sessionId: session.sessionId, expiresAt: session.expiresAt });
    expect((await fetch(`${worker.baseUrl}/api/Access/member`, { headers })).status).toBe(401);
  });
});
