import { escapeHtml, magicLinkConfirmPage, scriptJson, tokenBridgeErrorPage, tokenBridgePage } from './token-bridge.js';

const login = (username: string, redirectAfter: string | null = null) => ({
  bundle: {
    access_token: 'acc.ess.tok',
    refresh_token: 'ref.resh.tok',
    expires_in: 900,
    token_type: 'Bearer' as const,
  },
  user: { id: 'usr_0123456789abcdef01234567', username, email: 'a@example.test', level: 2 },
  redirectAfter,
});

describe('token bridge', () => {
  it('escapes text for HTML and JSON for an inline script', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    const json = scriptJson({ name: '</script><script>alert(1)</script>', sep: '\u2028\u2029', amp: '&' });
    expect(json).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(json)).toEqual({ name: '</script><script>alert(1)</script>', sep: '\u2028\u2029', amp: '&' });
  });

  it('hands the session to localStorage and continues to the web client with the tokens', () => {
    const page = tokenBridgePage(login('ada', 'https://app.example.test'));
    const session = JSON.parse(/var s=(\{.*?\});/.exec(page)![1]);
    expect(session).toEqual({
      isAuthenticated: true,
      token: 'acc.ess.tok',
      refreshToken: 'ref.resh.tok',
      userId: 'usr_0123456789abcdef01234567',
      username: 'ada',
      email: 'a@example.test',
      userLevel: 2,
    });
    expect(page).toContain("localStorage.setItem('tbjs_user_session'");
    expect(page).toContain(
      '"https://app.example.test/web/assets/login.html#token=acc.ess.tok\\u0026refresh_token=ref.resh.tok\\u0026user_id=usr_0123456789abcdef01234567\\u0026username=ada"',
    );
    expect(tokenBridgePage(login('ada'))).toContain('"/web/assets/login.html#token=');
  });

  it('keeps a hostile username inside its string', () => {
    const page = tokenBridgePage(login('</script><img src=x onerror=alert(1)>'));
    expect(page.match(/<script>/g)).toHaveLength(1);
    expect(page.match(/<\/script>/g)).toHaveLength(1);
    expect(page).not.toContain('<img');
  });

  it('error page: the escaped message and the way back to the login page', () => {
    const page = tokenBridgeErrorPage('bad <state>', 'https://app.example.test');
    expect(page).toContain('Error: bad &lt;state&gt;');
    expect(page).toContain('"https://app.example.test/web/assets/login.html?error=bad+%3Cstate%3E"');
  });

  it('confirm page posts the token; a dead link gets no form', () => {
    expect(magicLinkConfirmPage('t"ok', true)).toContain('<input type="hidden" name="token" value="t&quot;ok">');
    expect(magicLinkConfirmPage('tok', false)).not.toContain('<form');
  });
});
