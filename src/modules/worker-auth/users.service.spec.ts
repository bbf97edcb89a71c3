import { DataSource } from 'typeorm';
import { createDataSourceOptions } from '../../database/data-source-options.js';
import { UserIdentityEntity } from './entities/user-identity.entity.js';
import { UserEntity } from './entities/user.entity.js';
import { UsersService, newUserId, normalizeEmail } from './users.service.js';

describe('UsersService', () => {
  let dataSource: DataSource;
  let users: UsersService;

  beforeAll(async () => {
    dataSource = new DataSource(createDataSourceOptions({ type: 'sqlite', location: ':memory:' }));
    await dataSource.initialize();
    await dataSource.runMigrations();
    users = new UsersService(dataSource.getRepository(UserEntity), dataSource.getRepository(UserIdentityEntity));
  });
  afterAll(() => dataSource.destroy());

  it('the migration creates the columns the entities map, and the unique indexes', async () => {
    const runner = dataSource.createQueryRunner();
    try {
      for (const entity of [UserEntity, UserIdentityEntity]) {
        const metadata = dataSource.getMetadata(entity);
        const table = (await runner.getTable(metadata.tableName))!;
        expect(table.columns.map((column) => column.name).sort()).toEqual(
          metadata.columns.map((column) => column.databaseName).sort(),
        );
      }
      const users = (await runner.getTable('platform_users'))!;
      expect(users.indices.find((index) => index.name === 'uq_platform_users_email_key')).toMatchObject({
        isUnique: true,
        columnNames: ['email_key'],
      });
    } finally {
      await runner.release();
    }
  });

  it('makes usr_ ids of 24 hex digits and checks e-mails', () => {
    expect(newUserId()).toMatch(/^usr_[0-9a-f]{24}$/);
    expect(normalizeEmail('  a@b.example ')).toBe('a@b.example');
    for (const bad of ['', 'a', 'a@b', '@b.example', 'a b@c.example', `${'x'.repeat(320)}@b.example`])
      expect(() => normalizeEmail(bad)).toThrow('A valid e-mail address is required');
  });

  it('creates level 1 users by default, and refuses a level outside -1..2', async () => {
    const user = await users.create({ email: 'lvl@example.test' });
    expect(user).toMatchObject({ level: 1, username: 'lvl', lastLoginAt: null });
    await expect(users.create({ email: 'bad@example.test', level: 5 })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });

  it('two first logins of one verified e-mail at once end in one user', async () => {
    const profile = (id: string) => ({
      provider: 'google' as const,
      providerUserId: id,
      email: 'Race@Example.test',
      emailVerified: true,
      username: 'racer',
    });
    const outcomes = await Promise.all([users.login(profile('g-1')), users.login(profile('g-1'))]);
    expect(new Set(outcomes.map((outcome) => outcome.user.id)).size).toBe(1);
    expect(outcomes.filter((outcome) => outcome.isNewUser)).toHaveLength(1);
    expect(await users.identitiesOf(outcomes[0].user.id)).toHaveLength(1);
  });

  it('refuses a provider login without an e-mail for an unlinked account', async () => {
    await expect(
      users.login({ provider: 'discord', providerUserId: 'd-none', email: null, emailVerified: false, username: 'x' }),
    ).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });

  it('a magic-link login links no identity and finds the user by e-mail next time', async () => {
    const first = await users.login({
      provider: 'magic_link',
      providerUserId: 'm@example.test',
      email: 'm@example.test',
      emailVerified: true,
      username: null,
    });
    const second = await users.login({
      provider: 'magic_link',
      providerUserId: 'm@example.test',
      email: 'M@example.test',
      emailVerified: true,
      username: null,
    });
    expect(first.isNewUser).toBe(true);
    expect(second).toMatchObject({ isNewUser: false, user: { id: first.user.id } });
    expect(await users.identitiesOf(first.user.id)).toEqual([]);
    expect(second.user.lastLoginAt).toBeInstanceOf(Date);
  });
});
