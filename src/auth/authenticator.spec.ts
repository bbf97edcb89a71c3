import { PlatformError } from '../common/errors.js';
import { Authenticator } from './authenticator.js';
import type { AuthStrategy, CredentialRequest, Principal } from './principal.js';

const principal = (subject: string) => ({ kind: 'user', subject, strategy: 'jwt' }) as unknown as Principal;

/** A strategy that finds its credential in header `name`: absent → null at once, `bad` → 401, else a principal. */
function headerStrategy(name: string, asked: string[]): AuthStrategy {
  return {
    name: name as AuthStrategy['name'],
    authenticate(request: CredentialRequest) {
      asked.push(name);
      const value = request.headers[name];
      if (value === undefined) return null;
      return Promise.resolve().then(() => {
        if (value === 'bad') throw new PlatformError('UNAUTHORIZED', `bad ${name}`);
        return principal(`${name}:${String(value)}`);
      });
    },
  };
}

describe('Authenticator', () => {
  it('answers null at once, without a promise, when no strategy finds its credential', () => {
    const asked: string[] = [];
    const authenticator = Authenticator.of([headerStrategy('x-one', asked), headerStrategy('x-two', asked)]);
    expect(authenticator.authenticate({ headers: {} })).toBeNull();
    expect(asked).toEqual(['x-one', 'x-two']);
  });

  it('lets the first good credential decide and still asks every later strategy', async () => {
    const asked: string[] = [];
    const authenticator = Authenticator.of([headerStrategy('x-one', asked), headerStrategy('x-two', asked)]);
    expect(await authenticator.authenticate({ headers: { 'x-one': 'a', 'x-two': 'b' } })).toMatchObject({
      subject: 'x-one:a',
    });
    expect(asked).toEqual(['x-one', 'x-two']);
  });

  it('refuses a bad credential after a good one', async () => {
    const authenticator = Authenticator.of([headerStrategy('x-one', []), headerStrategy('x-two', [])]);
    await expect(authenticator.authenticate({ headers: { 'x-one': 'a', 'x-two': 'bad' } })).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
    });
  });
});
