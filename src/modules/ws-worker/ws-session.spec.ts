import type { IncomingMessage } from 'node:http';
import type { Principal } from '../../auth/principal.js';
import { credentialRequestOf, wsSessionOf } from './ws-session.js';

const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl';

function upgrade(path: string, headers: Record<string, string> = {}) {
  const request = { headers } as unknown as IncomingMessage;
  return credentialRequestOf(request, new URL(path, 'http://worker'), 'tb_session');
}

describe('credentialRequestOf', () => {
  it('turns a JWT in the token query parameter into a Bearer credential', () => {
    expect(upgrade(`/ws/a/b?token=${JWT}`).headers.authorization).toBe(`Bearer ${JWT}`);
  });

  it('takes any other token value as the session cookie', () => {
    expect(upgrade('/ws/a/b?session_token=abc.def').headers.cookie).toBe('tb_session=abc.def');
  });

  it('keeps a cookie the browser sent over a token query parameter that is not a JWT', () => {
    expect(upgrade('/ws/a/b?token=other', { cookie: 'tb_session=mine' }).headers.cookie).toBe('tb_session=mine');
  });

  it('passes the Authorization and Cookie headers through without a query parameter', () => {
    expect(upgrade('/ws/a/b', { authorization: 'Bearer x', cookie: 'a=b' }).headers).toEqual({
      authorization: 'Bearer x',
      cookie: 'a=b',
    });
  });
});

describe('wsSessionOf', () => {
  const principal = { platformUserId: 'u1', username: 'ada', level: 1, sessionId: 's1' } as Principal;

  it('maps a principal to the session handlers see', () => {
    expect([wsSessionOf(principal), wsSessionOf(null)]).toEqual([
      { authenticated: true, user_id: 'u1', user_name: 'ada', session_id: 's1', level: 1 },
      { authenticated: false, user_id: null, user_name: null, session_id: null, level: 0 },
    ]);
  });
});
