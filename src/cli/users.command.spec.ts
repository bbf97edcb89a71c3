import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { DatabaseAuthStore } from '../auth/shared-store/auth-store.js';
import { Revocations } from '../auth/shared-store/revocations.js';
import { UsageError } from '../common/errors.js';
import { createDataSourceOptions } from '../database/data-source-options.js';
import type { CommandIo } from './command-io.js';
import { runUsersCommand } from './users.command.js';

describe('tb users', () => {
  let dataDir: string;
  let out: string[];
  let err: string[];
  let io: CommandIo;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tb-users-'));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));
  beforeEach(() => {
    out = [];
    err = [];
    io = { out: (text) => out.push(text), err: (text) => err.push(text), env: { DATA_DIR: dataDir } };
  });

  it('creates a user with a usr_ id and level 1 by default, and lists it', async () => {
    expect(await runUsersCommand(['create', '--email', 'Ada@Example.test', '--username', 'ada'], io)).toBe(0);
    expect(out[0]).toMatch(/^created usr_[0-9a-f]{24} ada <Ada@Example\.test> level 1 \(/);
    out = [];
    expect(await runUsersCommand(['list', '--json'], io)).toBe(0);
    expect(JSON.parse(out.join('\n'))).toEqual([
      expect.objectContaining({ username: 'ada', email: 'Ada@Example.test', level: 1, last_login_at: null }),
    ]);
  });

  it('refuses a second user with the same e-mail in another case (exit 1, one line)', async () => {
    expect(await runUsersCommand(['create', '--email', 'ada@example.TEST'], io)).toBe(1);
    expect(err).toEqual(['tb: A user with the e-mail ada@example.TEST exists']);
  });

  it('sets the level by e-mail or id, and refuses a level outside -1..2', async () => {
    expect(await runUsersCommand(['set-level', 'ADA@example.test', 'admin'], io)).toBe(0);
    expect(out[0]).toMatch(/is now level -1/);
    expect(await runUsersCommand(['set-level', '--', 'ADA@example.test', '-1'], io)).toBe(0);
    const id = /^(usr_[0-9a-f]{24})/.exec(out[0])![1];
    expect(await runUsersCommand(['set-level', id, '2'], io)).toBe(0);
    // The workers read the same store: the user's older cookie sessions end.
    const dataSource = new DataSource(
      createDataSourceOptions({ type: 'sqlite', location: join(dataDir, 'platform.sqlite') }),
    );
    await dataSource.initialize();
    try {
      const revocations = new Revocations(new DatabaseAuthStore(dataSource));
      expect(await revocations.isUserSessionRevoked(id, Date.now() / 1000 - 60)).toBe(true);
      expect(await revocations.isUserSessionRevoked(id, Date.now() / 1000 + 60)).toBe(false);
    } finally {
      await dataSource.destroy();
    }
    out = [];
    await runUsersCommand(['list'], io);
    expect(out[0]).toBe('ID\tLEVEL\tUSERNAME\tEMAIL\tLAST LOGIN');
    expect(out[1]).toBe(`${id}\t2\tada\tAda@Example.test\t-`);
    out = [];
    await expect(runUsersCommand(['set-level', id, '3'], io)).rejects.toThrow(UsageError);
    await expect(runUsersCommand(['set-level', id, 'root'], io)).rejects.toThrow(UsageError);
    expect(await runUsersCommand(['create', '--email', 'tr@example.test', '--level=trusted'], io)).toBe(0);
    expect(out.at(-1)).toMatch(/level 2/);
    expect(await runUsersCommand(['set-level', 'usr_000000000000000000000000', '1'], io)).toBe(1);
    expect(err.at(-1)).toBe('tb: No user usr_000000000000000000000000');
  });

  it('answers the usage for an unknown action or missing arguments', async () => {
    await expect(runUsersCommand(['delete'], io)).rejects.toThrow('usage: tb users');
    await expect(runUsersCommand(['create'], io)).rejects.toThrow('usage: tb users');
    await expect(runUsersCommand(['set-level', 'x'], io)).rejects.toThrow('usage: tb users');
  });
});
