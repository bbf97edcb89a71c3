import { apiKeysInMemory, requestWith } from '../../../test/support/auth-fixtures.js';
import type { ApiKeysService } from '../api-keys/api-keys.service.js';
import { ApiKeyStrategy } from './api-key.strategy.js';

describe('ApiKeyStrategy', () => {
  let keys: ApiKeysService;
  let close: () => Promise<void>;
  let strategy: ApiKeyStrategy;

  beforeAll(async () => {
    ({ keys, close } = await apiKeysInMemory());
    strategy = new ApiKeyStrategy(keys);
  });

  afterAll(() => close());

  it('turns a good key in X-API-Key into an api-key principal with its owner, permissions and level', async () => {
    const { key, info } = await keys.create({
      owner: 'user-1',
      name: 'ci',
      permissions: ['read', 'execute'],
      level: 2,
    });
    const principal = await strategy.authenticate(requestWith({ 'x-api-key': key }));
    expect(principal).toMatchObject({
      platformUserId: 'user-1',
      level: 2,
      permissions: ['read', 'execute'],
      strategy: 'api-key',
      apiKeyId: info.id,
      apiKeyName: 'ci',
    });
  });

  it('accepts the key as Authorization: Bearer', async () => {
    const { key } = await keys.create({ owner: 'user-1', name: 'sdk' });
    expect((await strategy.authenticate(requestWith({ authorization: `Bearer ${key}` })))?.apiKeyName).toBe('sdk');
  });

  it('prefers X-API-Key over a bearer JWT sent alongside', async () => {
    const { key } = await keys.create({ owner: 'user-2', name: 'both' });
    expect(
      (await strategy.authenticate(requestWith({ 'x-api-key': key, authorization: 'Bearer eyJhbGciOi.x.y' })))
        ?.platformUserId,
    ).toBe('user-2');
  });

  it('returns null when no key is sent', async () => {
    expect(await strategy.authenticate(requestWith({}))).toBeNull();
  });

  it('returns null for a bearer value that is not an API key (a JWT)', async () => {
    expect(await strategy.authenticate(requestWith({ authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.x' }))).toBeNull();
  });

  it('rejects an unknown key', async () => {
    await expect(strategy.authenticate(requestWith({ 'x-api-key': `tbk_${'0'.repeat(64)}` }))).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
      message: 'Authentication failed: unknown API key',
    });
  });

  it('rejects a malformed key without looking it up', async () => {
    await expect(strategy.authenticate(requestWith({ 'x-api-key': 'tb_mcp_0123' }))).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
      message: expect.stringContaining('malformed'),
    });
  });

  it('rejects a key that differs from a real one in its last character', async () => {
    const { key } = await keys.create({ owner: 'user-3', name: 'tampered' });
    const tampered = key.slice(0, -1) + (key.endsWith('0') ? '1' : '0');
    await expect(strategy.authenticate(requestWith({ 'x-api-key': tampered }))).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
    });
  });

  it('rejects a revoked key', async () => {
    const { key } = await keys.create({ owner: 'user-4', name: 'old' });
    await keys.revoke({ owner: 'user-4', name: 'old' });
    await expect(strategy.authenticate(requestWith({ 'x-api-key': key }))).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
      message: 'Authentication failed: API key revoked',
    });
  });
});
