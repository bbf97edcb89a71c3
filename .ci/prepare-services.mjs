// Creates the test database and checks Redis; exits non-zero when either is unreachable.
import { createConnection } from 'mysql2/promise';
import { Redis } from 'ioredis';

const mysqlUrl = new URL(process.env.TEST_MYSQL_URL);
const database = mysqlUrl.pathname.replace(/^\//, '') || 'toolbox_test';
mysqlUrl.pathname = '/';

const connection = await createConnection({ uri: mysqlUrl.toString(), connectTimeout: 5000 });
await connection.query(
  `CREATE DATABASE IF NOT EXISTS \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`,
);
// Per-suite databases (`<name>_<hex>`) left by an interrupted run.
const [rows] = await connection.query('SHOW DATABASES');
for (const { Database: name } of rows) {
  if (new RegExp(`^${database}_[0-9a-f]{8}$`).test(name)) await connection.query(`DROP DATABASE \`${name}\``);
}
const [[version]] = await connection.query('SELECT VERSION() AS version');
// Search ranks inside Mroonga on MariaDB (docs/search.md); its suites test that path and the InnoDB one.
if (/mariadb/i.test(version.version)) {
  const mroongaActive = async () => {
    const [engines] = await connection.query(
      "SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE = 'Mroonga' AND SUPPORT IN ('YES', 'DEFAULT')",
    );
    return engines.length > 0;
  };
  if (!(await mroongaActive())) await connection.query("INSTALL SONAME 'ha_mroonga'");
  if (!(await mroongaActive()))
    throw new Error('MariaDB has no active Mroonga engine (package mariadb-plugin-mroonga)');
  console.log('MariaDB: Mroonga storage engine active');
}
await connection.end();
console.log(`MariaDB/MySQL ${version.version}: database ${database} ready`);

const redis = new Redis(process.env.TEST_REDIS_URL, {
  maxRetriesPerRequest: 1,
  connectTimeout: 5000,
  lazyConnect: true,
});
await redis.connect();
console.log(`Redis: ${await redis.ping()}`);
redis.disconnect();
