import { randomBytes } from 'node:crypto';
import { createConnection } from 'mysql2/promise';
import { Redis } from 'ioredis';

/**
 * Every e2e suite runs on the embedded defaults (SQLite, in-process queue, memory counters) and, when
 * TEST_MYSQL_URL / TEST_REDIS_URL are set (CI sets both), on MySQL/MariaDB + Redis (Bull, Redis counters).
 * A configured backend that cannot be reached fails the suite; it is never skipped silently.
 */
export interface Backend {
  name: 'sqlite' | 'mysql+redis';
  /** Environment for a fresh, isolated instance of the platform on this backend. */
  provision(): Promise<{ env: Record<string, string>; dispose(): Promise<void> }>;
}

const sqlite: Backend = {
  name: 'sqlite',
  async provision() {
    return { env: {}, dispose: async () => undefined };
  },
};

function mysqlRedis(mysqlUrl: string, redisUrl: string): Backend {
  return {
    name: 'mysql+redis',
    async provision() {
      const suffix = randomBytes(4).toString('hex');
      const base = new URL(mysqlUrl);
      const database = `${base.pathname.replace(/^\//, '') || 'toolbox_test'}_${suffix}`;
      const admin = await createConnection({
        uri: `${base.protocol}//${base.username ? `${base.username}${base.password ? `:${base.password}` : ''}@` : ''}${base.host}/`,
      });
      await admin.query(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
      await admin.end();
      const url = new URL(mysqlUrl);
      url.pathname = `/${database}`;
      const prefix = `tbtest-${suffix}`;
      return {
        env: { DATABASE_URL: url.toString(), REDIS_URL: redisUrl, REDIS_PREFIX: prefix },
        dispose: async () => {
          const connection = await createConnection({
            uri: `${base.protocol}//${base.username ? `${base.username}${base.password ? `:${base.password}` : ''}@` : ''}${base.host}/`,
          });
          await connection.query(`DROP DATABASE IF EXISTS \`${database}\``);
          await connection.end();
          const redis = new Redis(redisUrl);
          try {
            let cursor = '0';
            do {
              const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
              if (keys.length) await redis.del(...keys);
              cursor = next;
            } while (cursor !== '0');
          } finally {
            redis.disconnect();
          }
        },
      };
    },
  };
}

export function backends(): Backend[] {
  const mysqlUrl = process.env.TEST_MYSQL_URL;
  const redisUrl = process.env.TEST_REDIS_URL;
  if (Boolean(mysqlUrl) !== Boolean(redisUrl)) {
    throw new Error(
      'Set both TEST_MYSQL_URL and TEST_REDIS_URL (or neither): the production engine pair is tested together',
    );
  }
  return mysqlUrl && redisUrl ? [sqlite, mysqlRedis(mysqlUrl, redisUrl)] : [sqlite];
}
