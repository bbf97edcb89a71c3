import { DataSource } from 'typeorm';
import { SoftAuthenticator } from '../../../../test/support/soft-authenticator.js';
import { MemoryAuthStore } from '../../../auth/shared-store/auth-store.js';
import { PlatformError } from '../../../common/errors.js';
import { createDataSourceOptions } from '../../../database/data-source-options.js';
import { UserIdentityEntity } from '../entities/user-identity.entity.js';
import { UserEntity } from '../entities/user.entity.js';
import { UsersService } from '../users.service.js';
import { PasskeyEntity } from './passkey.entity.js';
import { MAX_PASSKEYS_PER_USER, PASSKEY_CHALLENGE_TTL_SECONDS, PasskeysService } from './passkeys.service.js';
import type { RelyingParty } from './webauthn-wire.js';

const ORIGIN = 'https://app.example.test';
const PARTY: RelyingParty = { rpId: 'app.example.test', rpName: 'Toolbox', origins: [ORIGIN] };

/** The refusal's code and message, or a failure when the promise resolves. */
async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof PlatformError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('PasskeysService', () => {
  let dataSource: DataSource;
  let users: UsersService;
  let service: PasskeysService;
  let now = Date.parse('2026-01-01T00:00:00Z');
  let counter = 0;

  const newUser = () => users.create({ email: `passkey-${++counter}@example.test` });

  /** A user with a registered passkey on a fresh soft authenticator. */
  async function registered(): Promise<{ user: UserEntity; authenticator: SoftAuthenticator }> {
    const user = await newUser();
    const authenticator = new SoftAuthenticator();
    const options = await service.registrationOptions(user.id, PARTY);
    await service.register(user.id, authenticator.create(options, ORIGIN), PARTY);
    return { user, authenticator };
  }

  const storedCount = async (authenticator: SoftAuthenticator) =>
    (await dataSource.getRepository(PasskeyEntity).findOneByOrFail({ credentialId: authenticator.id })).signCount;

  beforeAll(async () => {
    dataSource = new DataSource(createDataSourceOptions({ type: 'sqlite', location: ':memory:' }));
    await dataSource.initialize();
    await dataSource.runMigrations();
    users = new UsersService(dataSource.getRepository(UserEntity), dataSource.getRepository(UserIdentityEntity));
    service = new PasskeysService(dataSource.getRepository(PasskeyEntity), new MemoryAuthStore(), users, () => now);
  });
  afterAll(() => dataSource.destroy());

  it('the migration creates the columns the entity maps, and a unique credential index', async () => {
    const runner = dataSource.createQueryRunner();
    try {
      const metadata = dataSource.getMetadata(PasskeyEntity);
      const table = (await runner.getTable(metadata.tableName))!;
      expect(table.columns.map((column) => column.name).sort()).toEqual(
        metadata.columns.map((column) => column.databaseName).sort(),
      );
      expect(table.indices.find((index) => index.name === 'uq_platform_passkeys_credential')).toMatchObject({
        isUnique: true,
        columnNames: ['credential_key'],
      });
    } finally {
      await runner.release();
    }
  });

  describe('registration', () => {
    it('answers creation options for the user, with the user id as handle and a discoverable credential', async () => {
      const user = await newUser();
      const options = await service.registrationOptions(user.id, PARTY);
      expect(options.rp).toEqual({ id: PARTY.rpId, name: 'Toolbox' });
      expect(Buffer.from(options.user.id, 'base64url').toString()).toBe(user.id);
      expect(options.challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(options.authenticatorSelection).toMatchObject({ residentKey: 'required', userVerification: 'required' });
      expect(options.excludeCredentials).toEqual([]);
    });

    it('stores the passkey and lists it without key material', async () => {
      const { user, authenticator } = await registered();
      const list = await service.list(user.id);
      expect(list).toEqual([
        expect.objectContaining({
          credential_id: authenticator.id,
          name: 'Passkey',
          sign_count: 0,
          last_used_at: null,
        }),
      ]);
      expect(Object.keys(list[0])).not.toContain('public_key');
    });

    it('names the stored passkeys in the next creation options so the authenticator makes no second one', async () => {
      const { user, authenticator } = await registered();
      const options = await service.registrationOptions(user.id, PARTY);
      expect(options.excludeCredentials?.map((credential) => credential.id)).toEqual([authenticator.id]);
    });

    it('refuses to start or finish without a signed-in user', async () => {
      expect(await refusal(service.registrationOptions(null, PARTY))).toMatchObject({ code: 'UNAUTHORIZED' });
      const user = await newUser();
      const options = await service.registrationOptions(user.id, PARTY);
      const answer = new SoftAuthenticator().create(options, ORIGIN);
      expect(await refusal(service.register(null, answer, PARTY))).toMatchObject({ code: 'UNAUTHORIZED' });
    });

    it("refuses a challenge issued to another user's session", async () => {
      const owner = await newUser();
      const other = await newUser();
      const options = await service.registrationOptions(owner.id, PARTY);
      const answer = new SoftAuthenticator().create(options, ORIGIN);
      expect(await refusal(service.register(other.id, answer, PARTY))).toEqual({
        code: 'UNAUTHORIZED',
        message: expect.stringContaining('another session'),
      });
      expect(await service.list(other.id)).toEqual([]);
    });

    it('refuses a reused challenge', async () => {
      const user = await newUser();
      const options = await service.registrationOptions(user.id, PARTY);
      await service.register(user.id, new SoftAuthenticator().create(options, ORIGIN), PARTY);
      const second = new SoftAuthenticator().create(options, ORIGIN);
      expect(await refusal(service.register(user.id, second, PARTY))).toEqual({
        code: 'UNAUTHORIZED',
        message: 'Invalid or expired challenge',
      });
      expect(await service.list(user.id)).toHaveLength(1);
    });

    it('refuses a challenge older than its lifetime', async () => {
      const user = await newUser();
      const options = await service.registrationOptions(user.id, PARTY);
      now += PASSKEY_CHALLENGE_TTL_SECONDS * 1000 + 1;
      const answer = new SoftAuthenticator().create(options, ORIGIN);
      expect(await refusal(service.register(user.id, answer, PARTY))).toEqual({
        code: 'UNAUTHORIZED',
        message: 'Invalid or expired challenge',
      });
      expect(await service.list(user.id)).toEqual([]);
    });

    it('refuses an answer from another origin or for another relying party', async () => {
      const user = await newUser();
      const fromElsewhere = new SoftAuthenticator().create(
        await service.registrationOptions(user.id, PARTY),
        'https://evil.example',
      );
      expect(await refusal(service.register(user.id, fromElsewhere, PARTY))).toEqual({
        code: 'UNAUTHORIZED',
        message: expect.stringMatching(/^Registration verification failed: .*origin/i),
      });
      const otherParty = new SoftAuthenticator().create(await service.registrationOptions(user.id, PARTY), ORIGIN, {
        rpId: 'evil.example',
      });
      expect(await refusal(service.register(user.id, otherParty, PARTY))).toEqual({
        code: 'UNAUTHORIZED',
        message: expect.stringMatching(/^Registration verification failed: .*RP ID/i),
      });
      expect(await service.list(user.id)).toEqual([]);
    });

    it('refuses a credential made without user verification', async () => {
      const user = await newUser();
      const answer = new SoftAuthenticator().create(await service.registrationOptions(user.id, PARTY), ORIGIN, {
        userVerified: false,
      });
      expect(await refusal(service.register(user.id, answer, PARTY))).toMatchObject({ code: 'UNAUTHORIZED' });
      expect(await service.list(user.id)).toEqual([]);
    });

    it('refuses a credential already registered to another account', async () => {
      const { authenticator } = await registered();
      const other = await newUser();
      const answer = authenticator.create(await service.registrationOptions(other.id, PARTY), ORIGIN);
      expect(await refusal(service.register(other.id, answer, PARTY))).toEqual({
        code: 'CONFLICT',
        message: 'This passkey is registered to another account',
      });
      expect(await service.list(other.id)).toEqual([]);
    });

    it('refuses a passkey beyond the most an account may hold, also from ceremonies started side by side', async () => {
      const user = await newUser();
      for (let index = 0; index < MAX_PASSKEYS_PER_USER - 1; index += 1) {
        const answer = new SoftAuthenticator().create(await service.registrationOptions(user.id, PARTY), ORIGIN);
        await service.register(user.id, answer, PARTY);
      }
      const [first, second] = [
        await service.registrationOptions(user.id, PARTY),
        await service.registrationOptions(user.id, PARTY),
      ];
      await service.register(user.id, new SoftAuthenticator().create(first, ORIGIN), PARTY);
      const beyond = new SoftAuthenticator().create(second, ORIGIN);
      expect(await refusal(service.register(user.id, beyond, PARTY))).toMatchObject({ code: 'CONFLICT' });
      expect(await refusal(service.registrationOptions(user.id, PARTY))).toMatchObject({ code: 'CONFLICT' });
      expect(await service.list(user.id)).toHaveLength(MAX_PASSKEYS_PER_USER);
    });

    it('refuses a credential that is not an object, or fields that are not base64url', async () => {
      const user = await newUser();
      expect(await refusal(service.register(user.id, 'x', PARTY))).toMatchObject({ code: 'BAD_REQUEST' });
      const answer = new SoftAuthenticator().create(await service.registrationOptions(user.id, PARTY), ORIGIN);
      const broken = { ...answer, response: { ...answer.response, attestationObject: 'not base64!' } };
      expect(await refusal(service.register(user.id, broken, PARTY))).toMatchObject({ code: 'BAD_REQUEST' });
    });
  });

  describe('login', () => {
    it("names the passkey's owner and moves the stored counter on", async () => {
      const { user, authenticator } = await registered();
      const options = await service.authenticationOptions(PARTY);
      expect(options).toMatchObject({ rpId: PARTY.rpId, allowCredentials: [], userVerification: 'required' });
      const login = await service.authenticate(authenticator.get(options, ORIGIN), PARTY);
      expect(login.user.id).toBe(user.id);
      expect(await storedCount(authenticator)).toBe(1);
      expect((await users.findById(user.id))!.lastLoginAt).not.toBeNull();
    });

    it('refuses a replayed assertion (its challenge is used up)', async () => {
      const { authenticator } = await registered();
      const assertion = authenticator.get(await service.authenticationOptions(PARTY), ORIGIN);
      await service.authenticate(assertion, PARTY);
      expect(await refusal(service.authenticate(assertion, PARTY))).toEqual({
        code: 'UNAUTHORIZED',
        message: 'Invalid or expired challenge',
      });
    });

    it('refuses an expired challenge', async () => {
      const { authenticator } = await registered();
      const options = await service.authenticationOptions(PARTY);
      now += PASSKEY_CHALLENGE_TTL_SECONDS * 1000 + 1;
      expect(await refusal(service.authenticate(authenticator.get(options, ORIGIN), PARTY))).toMatchObject({
        code: 'UNAUTHORIZED',
        message: 'Invalid or expired challenge',
      });
    });

    it('refuses a registration challenge used for a login', async () => {
      const { user, authenticator } = await registered();
      const registration = await service.registrationOptions(user.id, PARTY);
      const assertion = authenticator.get({ challenge: registration.challenge, rpId: PARTY.rpId }, ORIGIN);
      expect(await refusal(service.authenticate(assertion, PARTY))).toMatchObject({
        message: 'Invalid or expired challenge',
      });
    });

    it('refuses an assertion whose counter does not move past the stored one (a cloned authenticator)', async () => {
      const { authenticator } = await registered();
      await service.authenticate(authenticator.get(await service.authenticationOptions(PARTY), ORIGIN), PARTY);
      await service.authenticate(authenticator.get(await service.authenticationOptions(PARTY), ORIGIN), PARTY);
      const clone = authenticator.get(await service.authenticationOptions(PARTY), ORIGIN, { signCount: 1 });
      expect(await refusal(service.authenticate(clone, PARTY))).toEqual({
        code: 'UNAUTHORIZED',
        message: expect.stringMatching(/^Authentication verification failed: .*counter/i),
      });
      expect(await storedCount(authenticator)).toBe(2);
    });

    it('refuses an assertion from another origin or for another relying party', async () => {
      const { authenticator } = await registered();
      const elsewhere = authenticator.get(await service.authenticationOptions(PARTY), 'https://evil.example');
      expect(await refusal(service.authenticate(elsewhere, PARTY))).toMatchObject({
        code: 'UNAUTHORIZED',
        message: expect.stringMatching(/origin/i),
      });
      const otherParty = authenticator.get(await service.authenticationOptions(PARTY), ORIGIN, {
        rpId: 'evil.example',
      });
      expect(await refusal(service.authenticate(otherParty, PARTY))).toMatchObject({
        code: 'UNAUTHORIZED',
        message: expect.stringMatching(/RP ID/i),
      });
    });

    it("refuses an assertion of one user's passkey that names another user", async () => {
      const { authenticator } = await registered();
      const other = await newUser();
      const assertion = authenticator.get(await service.authenticationOptions(PARTY), ORIGIN, {
        userHandle: Buffer.from(other.id).toString('base64url'),
      });
      expect(await refusal(service.authenticate(assertion, PARTY))).toEqual({
        code: 'UNAUTHORIZED',
        message: expect.stringContaining('belongs to another user'),
      });
    });

    it('refuses a passkey nobody registered', async () => {
      const stranger = new SoftAuthenticator();
      const assertion = stranger.get(await service.authenticationOptions(PARTY), ORIGIN);
      expect(await refusal(service.authenticate(assertion, PARTY))).toEqual({
        code: 'UNAUTHORIZED',
        message: 'Passkey not registered',
      });
    });
  });

  describe('removal', () => {
    it("refuses to remove another user's passkey, as if it did not exist", async () => {
      const { user, authenticator } = await registered();
      const other = await newUser();
      expect(await refusal(service.remove(other.id, authenticator.id))).toEqual({
        code: 'NOT_FOUND',
        message: 'Passkey credential not found',
      });
      expect(await service.list(user.id)).toHaveLength(1);
    });

    it('refuses without a signed-in user', async () => {
      const { user, authenticator } = await registered();
      expect(await refusal(service.remove(null, authenticator.id))).toMatchObject({ code: 'UNAUTHORIZED' });
      expect(await service.list(user.id)).toHaveLength(1);
    });

    it("removes the owner's passkey, which then no longer logs in", async () => {
      const { user, authenticator } = await registered();
      await service.remove(user.id, authenticator.id);
      expect(await service.list(user.id)).toEqual([]);
      const assertion = authenticator.get(await service.authenticationOptions(PARTY), ORIGIN);
      expect(await refusal(service.authenticate(assertion, PARTY))).toMatchObject({
        message: 'Passkey not registered',
      });
    });
  });
});
