import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { createDataSourceOptions } from '../../../database/data-source-options.js';
import { SearchWordCounts1763800001700 } from '../../../database/migrations/1763800001700-search-word-counts.js';
import { MIGRATIONS } from '../../../database/migrations/index.js';
import { Fts5SearchEngine } from './fts5-search-engine.js';

/**
 * A SQLite database indexed under migration 1600 (no word counts) is upgraded, searched by the FTS5 engine, and
 * taken back. It lives beside the engine it drives, so that nothing in src/database but the entity list imports a
 * feature module.
 */
describe('migration 1763800001700 (search word counts) on SQLite', () => {
  const directory = mkdtempSync(join(tmpdir(), 'tb-migration-'));
  const location = join(directory, 'platform.sqlite');
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  async function open(migrations: typeof MIGRATIONS): Promise<DataSource> {
    const dataSource = new DataSource({ ...createDataSourceOptions({ type: 'sqlite', location }), migrations });
    await dataSource.initialize();
    await dataSource.runMigrations();
    return dataSource;
  }

  const columns = async (dataSource: DataSource) =>
    ((await dataSource.query('PRAGMA table_info(package_search_documents)')) as Array<{ name: string }>).map(
      (column) => column.name,
    );
  const counts = async (dataSource: DataSource) => ({
    documents: Number((await dataSource.query('SELECT count(*) AS n FROM package_search_documents'))[0].n),
    matches: Number(
      (await dataSource.query(`SELECT count(*) AS n FROM package_search_fts WHERE package_search_fts MATCH 'otter'`))[0]
        .n,
    ),
  });

  it('empties the documents indexed without a count, adds the count, and search works after reindexing', async () => {
    const before = await open(MIGRATIONS.filter((migration) => migration !== SearchWordCounts1763800001700));
    expect(await columns(before)).not.toContain('tokens');
    // A document as migration 1600's Search module wrote it.
    await before.query(
      `INSERT INTO package_search_documents (rank_key, doc_id, package_id, name, name_lower, visibility, publisher_id,
        package_type, total_downloads, verified, multiplier, text) VALUES (1, 1, ?, 'otter', 'otter', 'public', ?, 'mod', 0, 0, 1000, ?)`,
      [randomUUID(), randomUUID(), 'otter\t\t\t'],
    );
    await before.query(`INSERT INTO package_search_fts (rowid, name_words) VALUES (1, 'otter')`);
    expect(await counts(before)).toEqual({ documents: 1, matches: 1 });
    await before.destroy();

    const after = await open(MIGRATIONS);
    try {
      expect(await columns(after)).toContain('tokens');
      expect(await counts(after)).toEqual({ documents: 0, matches: 0 });
      const engine = new Fts5SearchEngine(after);
      const packageId = randomUUID();
      await engine.upsert([
        {
          packageId,
          name: 'otter',
          displayName: 'Otter',
          description: 'swims in rivers',
          keywords: null,
          visibility: 'public',
          publisherId: randomUUID(),
          packageType: 'mod',
          totalDownloads: 3,
          verified: false,
        },
      ]);
      const page = await engine.search({
        terms: [{ term: 'rivers', prefix: false }],
        name: null,
        viewerPublisherId: null,
        offset: 0,
        limit: 10,
      });
      expect(page).toEqual({ ids: [packageId], total: 1 });

      await after.undoLastMigration();
      expect(await columns(after)).not.toContain('tokens');
      expect(await counts(after)).toEqual({ documents: 0, matches: 0 });
    } finally {
      await after.destroy();
    }
  });
});
