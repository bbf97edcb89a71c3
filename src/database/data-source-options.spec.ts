import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
