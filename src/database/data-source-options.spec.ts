import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { DataSource } from 'typeorm';
import { createDataSourceOptions } from './data-source-options.js';

describe('createDataSourceOptions on SQLite', () => {
  const directory = mkdtempSync(join(tmpdir(), 'tb-dso-'));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  async function pragmas(sqliteMmapMiB?: number): Promise<{ mmap: number; journal: string }> {
    const location = join(directory, `db-${sqliteMmapMiB ?? 'default'}.sqlite`);
    const options = createDataSourceOptions({ type: 'sqlite', location, sqliteMmapMiB });
    const dataSource = new DataSource({ ...options, entities: [], migrations: [] });
    await dataSource.initialize();
    try {
      const [{ mmap_size: mmap }] = await dataSource.query('PRAGMA mmap_size');
      const [{ journal_mode: journal }] = await dataSource.query('PRAGMA journal_mode');
      return { mmap: Number(mmap), journal };
    } finally {
      await dataSource.destroy();
    }
  }

  it('reads the file through a 256 MiB memory map by default, in WAL mode', async () => {
    expect(await pragmas()).toEqual({ mmap: 256 * 1024 * 1024, journal: 'wal' });
  });

  it('takes the configured map size, and 0 turns the map off', async () => {
    expect((await pragmas(64)).mmap).toBe(64 * 1024 * 1024);
    expect((await pragmas(0)).mmap).toBe(0);
  });
});

const mysqlUrl = process.env.TEST_MYSQL_URL;
(mysqlUrl ? describe : describe.skip)('createDataSourceOptions on MySQL/MariaDB', () => {
  const base = new URL(mysqlUrl ?? 'mysql://127.0.0.1/unused');
  const database = `${base.pathname.replace(/^\//, '')}_dso_${randomBytes(4).toString('hex')}`;
  const server = new URL(base);
  server.pathname = '/';
  afterAll(async () => {
    const admin = await createConnection({ uri: server.toString() });
    await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
    await admin.end();
  });

  it('creates the search table on the engine the configuration names (SEARCH_MYSQL_ENGINE=innodb)', async () => {
    const admin = await createConnection({ uri: server.toString() });
    await admin.query(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
    await admin.end();
    const url = new URL(base);
    url.pathname = `/${database}`;
    const dataSource = new DataSource(
      createDataSourceOptions({ type: 'mysql', location: url.toString(), searchMysqlEngine: 'innodb' }),
    );
    await dataSource.initialize();
    try {
      await dataSource.runMigrations();
      const [{ ENGINE: engine }] = await dataSource.query(
        `SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'package_search_documents'`,
      );
      expect(engine).toBe('InnoDB');
    } finally {
      await dataSource.destroy();
    }
  });
});
