import { jest } from '@jest/globals';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JwtService } from '@nestjs/jwt';
import { TokenVerifier } from '../../../src/auth/token-verifier.js';
import { runDbCommand } from '../../../src/cli/db.command.js';
import { runRegistryCommand } from '../../../src/cli/registry.command.js';
import { runTokenCommand } from '../../../src/cli/token.command.js';
import { ConfigError, loadConfig } from '../../../src/config/config.js';
import { backends } from '../../support/backends.js';
import { TEST_SECRET, startRegistry } from '../../support/registry-under-test.js';

/** Runs a `tb` command in process with the given environment and returns what it printed. */
async function tb(
  command: (argv: string[]) => Promise<number>,
  argv: string[],
  env: Record<string, string | undefined>,
) {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete process.env[name];
  const printed: string[] = [];
  const log = jest
    .spyOn(console, 'log')
    .mockImplementation((...parts: unknown[]) => void printed.push(parts.join(' ')));
  try {
    const code = await command(argv);
    return { code, output: printed.join('\n') };
  } finally {
    log.mockRestore();
    process.env = saved;
  }
}

describe('tb registry, db and token commands', () => {
  let dataDir: string;

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tb-cli-'));
  });

  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('tb db migrate applies the migrations once, then finds none pending', async () => {
    const first = await tb(runDbCommand, ['migrate', '--data-dir', dataDir], {
      PLATFORM_JWT_SECRET: undefined,
      DATABASE_URL: undefined,
    });
    expect(first.code).toBe(0);
    expect(first.output).toMatch(/applied InitialRegistry/);
    expect((await stat(join(dataDir, 'platform.sqlite'))).size).toBeGreaterThan(0);
    const second = await tb(runDbCommand, ['migrate', '--data-dir', dataDir], { DATABASE_URL: undefined });
    expect(second.output).toMatch(/no pending migrations/);
    const status = await tb(runDbCommand, ['status', '--data-dir', dataDir], { DATABASE_URL: undefined });
    expect(status.output).toMatch(/up to date/);
  });

  it('tb token mints an HS256 token the registry accepts, with the admin level when asked', async () => {
    const { code, output } = await tb(
      runTokenCommand,
      ['--user', '42', '--username', 'ada', '--email', 'ada@example.com', '--admin', '--ttl', '2h'],
      {
        PLATFORM_JWT_SECRET: TEST_SECRET,
      },
    );
    expect(code).toBe(0);
    const principal = new TokenVerifier(new JwtService({}), loadConfig({ PLATFORM_JWT_SECRET: TEST_SECRET })).verify(
      output.trim(),
    );
    expect(principal).toMatchObject({
      platformUserId: '42',
      username: 'ada',
      email: 'ada@example.com',
      level: -1,
      tokenSaysAdmin: true,
    });
  });

  it('tb token without a configured secret uses the one tb up keeps in the data directory (mode 0600)', async () => {
    const { code } = await tb(runTokenCommand, ['--user', '1', '--username', 'me', '--data-dir', dataDir], {
      PLATFORM_JWT_SECRET: undefined,
    });
    expect(code).toBe(0);
    const secretFile = await stat(join(dataDir, 'jwt-secret'));
    expect(secretFile.mode & 0o777).toBe(0o600);
  });

  it('tb registry admins grant makes a platform user an admin of the registry, and revoke undoes it', async () => {
    const env = { PLATFORM_JWT_SECRET: TEST_SECRET, DATABASE_URL: undefined };
    expect((await tb(runRegistryCommand, ['admins', 'grant', 'ops-7', '--data-dir', dataDir], env)).code).toBe(0);
    const registry = await startRegistry(backends()[0], { DATA_DIR: dataDir });
    try {
      const me = await registry.as({ id: 'ops-7', username: 'ops' }).get('/api/v1/auth/me');
      expect(me.body.is_admin).toBe(true);
    } finally {
      await registry.close().catch(() => undefined);
    }
  });

  it('refuses to start the registry without PLATFORM_JWT_SECRET, naming it', async () => {
    await expect(
      tb(runRegistryCommand, ['--data-dir', dataDir, '--port', '0'], { PLATFORM_JWT_SECRET: undefined }),
    ).rejects.toThrow(ConfigError);
    await expect(
      tb(runRegistryCommand, ['--data-dir', dataDir, '--port', '0'], { PLATFORM_JWT_SECRET: undefined }),
    ).rejects.toThrow(/PLATFORM_JWT_SECRET is required/);
  });

  it('lists every configuration problem at once', () => {
    let problems: string[] = [];
    try {
      loadConfig({ PLATFORM_JWT_SECRET: 'short', PORT: 'http', RATE_LIMIT_ANON_PER_HOUR: '-1' });
    } catch (error) {
      problems = (error as ConfigError).problems;
    }
    expect(problems).toEqual([
      expect.stringContaining('PORT must be'),
      expect.stringContaining('PLATFORM_JWT_SECRET must be at least 16'),
      expect.stringContaining('RATE_LIMIT_ANON_PER_HOUR'),
    ]);
  });
});
