import { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import { DatabaseAuthStore, RedisAuthStore } from '../auth/shared-store/auth-store.js';
import { Revocations } from '../auth/shared-store/revocations.js';
import { accessLevelName, isAccessLevel } from '../auth/access-level.js';
import { UsageError } from '../common/errors.js';
import { loadConfig } from '../config/config.js';
import { createDataSourceOptions } from '../database/data-source-options.js';
import { migrateDatabase } from '../database/migrate.js';
import { UserEntity } from '../modules/worker-auth/entities/user.entity.js';
import { UserIdentityEntity } from '../modules/worker-auth/entities/user-identity.entity.js';
import { UsersService } from '../modules/worker-auth/users.service.js';
import { parseCommandArgs } from './cli-args.js';
import { processIo, reportingDomainErrors, type CommandIo } from './command-io.js';

const USAGE = `usage: tb users create --email E [--username NAME] [--level LEVEL]
       tb users list [--json]
       tb users set-level USER_ID|EMAIL LEVEL
LEVEL: admin (-1), user (1, the default), trusted (2), none (0); use --level=-1 or "-- -1" for the number`;

/** Level names, so the admin level needs no leading dash on the command line. */
const LEVEL_NAMES: Record<string, number> = { admin: -1, none: 0, user: 1, 'logged-in': 1, trusted: 2 };

function parseLevel(value: string | undefined, fallback?: number): number {
  if (value === undefined && fallback !== undefined) return fallback;
  const level = value !== undefined && value in LEVEL_NAMES ? LEVEL_NAMES[value] : Number(value);
  if (value === undefined || value.trim() === '' || !isAccessLevel(level))
    throw new UsageError(`the level must be admin (-1), none (0), user (1) or trusted (2); got "${value ?? ''}"`);
  return level;
}

/**
 * `tb users create|list|set-level`: WorkerAuth's users, for administrators, straight on the platform
 * database (the migrations are applied first, as a service start would).
 */
export async function runUsersCommand(argv: string[], io: CommandIo = processIo()): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    argv,
    {
      email: { type: 'string' },
      username: { type: 'string' },
      level: { type: 'string' },
      json: { type: 'boolean', default: false },
      'data-dir': { type: 'string' },
    },
    { allowPositionals: true },
  );
  const [action, ...rest] = positionals;
  if (action !== 'create' && action !== 'list' && action !== 'set-level') throw new UsageError(USAGE);
  if (action === 'set-level' && rest.length !== 2) throw new UsageError(USAGE);
  if (action === 'create' && !values.email) throw new UsageError(USAGE);
  const config = loadConfig(io.env, { dataDir: values['data-dir'] });
  await migrateDatabase(config.database);
  const dataSource = new DataSource(createDataSourceOptions(config.database));
  await dataSource.initialize();
  const cleanups: Array<() => Promise<void>> = [];
  try {
    // Level changes end the user's sessions in the store the workers read (Redis when configured).
    const redis = config.redisUrl ? new Redis(config.redisUrl, { maxRetriesPerRequest: 2 }) : null;
    cleanups.push(async () => {
      await redis?.quit().catch(() => undefined);
    });
    const store = redis ? new RedisAuthStore(redis, config.redisPrefix) : new DatabaseAuthStore(dataSource);
    const users = new UsersService(
      dataSource.getRepository(UserEntity),
      dataSource.getRepository(UserIdentityEntity),
      new Revocations(store),
    );
    return await reportingDomainErrors(io, async () => {
      if (action === 'create') {
        const user = await users.create({
          email: values.email!,
          username: values.username,
          level: parseLevel(values.level, 1),
        });
        io.out(
          `created ${user.id} ${user.username} <${user.email}> level ${user.level} (${accessLevelName(user.level)})`,
        );
        return 0;
      }
      if (action === 'set-level') {
        const user = await users.setLevel(rest[0], parseLevel(rest[1]));
        io.out(
          `${user.id} ${user.username} <${user.email}> is now level ${user.level} (${accessLevelName(user.level)})`,
        );
        return 0;
      }
      const all = await users.list();
      if (values.json) {
        io.out(
          JSON.stringify(
            all.map((user) => ({
              user_id: user.id,
              username: user.username,
              email: user.email,
              level: user.level,
              created_at: user.createdAt.toISOString(),
              last_login_at: user.lastLoginAt?.toISOString() ?? null,
            })),
            null,
            2,
          ),
        );
        return 0;
      }
      if (all.length === 0) {
        io.out('no users yet (tb users create --email E, or log in by magic link)');
        return 0;
      }
      io.out(['ID', 'LEVEL', 'USERNAME', 'EMAIL', 'LAST LOGIN'].join('\t'));
      for (const user of all)
        io.out(
          [user.id, String(user.level), user.username, user.email, user.lastLoginAt?.toISOString() ?? '-'].join('\t'),
        );
      return 0;
    });
  } finally {
    for (const cleanup of cleanups) await cleanup();
    await dataSource.destroy();
  }
}
