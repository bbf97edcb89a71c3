import { apiKeysInMemory } from '../../../test/support/auth-fixtures.js';
import { hashApiKey } from './api-key-secret.js';
import type { ApiKeysService } from './api-keys.service.js';

describe('ApiKeysService', () => {
  let keys: ApiKeysService;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ keys, close } = await apiKeysInMemory());
  });

  afterAll(() => close());

  it('returns a key with the recognisable prefix once and lists only its first characters', async () => {
    const { key, info } = await keys.create({ owner: 'owner-a', name: 'first' });
    expect(key).toMatch(/^tbk_[0-9a-f]{64}$/);
    expect(info.keyPrefix).toBe(key.slice(0, 12));
    expect(JSON.stringify(await keys.list({ owner: 'owner-a' }))).not.toContain(key.slice(12));
  });

  it('stores only the SHA-256 of the key', async () => {
    const { key } = await keys.create({ owner: 'owner-a', name: 'hashed' });
    expect(hashApiKey(key)).toMatch(/^[0-9a-f]{64}$/);
    expect((await keys.verify(key)).name).toBe('hashed');
  });

  it('gives a new key read permission and LOGGED_IN level by default', async () => {
    const { info } = await keys.create({ owner: 'owner-b', name: 'defaults' });
    expect(info).toMatchObject({ permissions: ['read'], level: 1, lastUsedAt: null, revokedAt: null });
  });

  it('refuses an unknown permission', async () => {
    await expect(keys.create({ owner: 'owner-b', name: 'bad', permissions: ['read', 'delete'] })).rejects.toMatchObject(
      { code: 'BAD_REQUEST', message: expect.stringContaining('delete') },
    );
  });

  it('refuses a level outside -1/0/1/2', async () => {
    await expect(keys.create({ owner: 'owner-b', name: 'level', level: 3 })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
    });
  });

  it('refuses a name that cannot appear in the revoke path', async () => {
    await expect(keys.create({ owner: 'owner-b', name: 'a/b' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });

  it('refuses a second unrevoked key of the same name for one owner, and allows it for another owner', async () => {
    await keys.create({ owner: 'owner-c', name: 'dup' });
    await expect(keys.create({ owner: 'owner-c', name: 'dup' })).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(keys.create({ owner: 'owner-d', name: 'dup' })).resolves.toMatchObject({ info: { owner: 'owner-d' } });
  });

  it('allows the name again once the old key is revoked, and lists revoked keys only on request', async () => {
    await keys.create({ owner: 'owner-e', name: 'rotate' });
    const revoked = await keys.revoke({ owner: 'owner-e', name: 'rotate' });
    await keys.create({ owner: 'owner-e', name: 'rotate' });
    expect(revoked.revokedAt).toBeInstanceOf(Date);
    expect((await keys.list({ owner: 'owner-e' })).length).toBe(1);
    expect((await keys.list({ owner: 'owner-e', includeRevoked: true })).length).toBe(2);
  });

  it('answers NOT_FOUND when revoking a key that does not exist', async () => {
    await expect(keys.revoke({ owner: 'owner-e', name: 'missing' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('records when a key was last used', async () => {
    const { key, info } = await keys.create({ owner: 'owner-f', name: 'used' });
    await keys.verify(key);
    const [listed] = await keys.list({ owner: 'owner-f' });
    expect(listed.id).toBe(info.id);
    expect(listed.lastUsedAt).toBeInstanceOf(Date);
  });
});
