import { DataSource, Table, TableIndex } from 'typeorm';
import { createDataSourceOptions } from '../../../src/database/data-source-options.js';
import { PortableColumns } from '../../../src/database/portable-columns.js';
import { SqlDialect } from '../../../src/database/sql-dialect.js';
import { backends } from '../../support/backends.js';

/** Each of SqlDialect's spellings, run on the engine it is for: a wrong spelling fails here, not in a query planner. */
describe.each(backends())('SqlDialect on $name', (backend) => {
  let dataSource: DataSource;
  let dialect: SqlDialect;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    const provisioned = await backend.provision();
    dispose = provisioned.dispose;
    const url = provisioned.env.DATABASE_URL;
    const options = createDataSourceOptions(
      url ? { type: 'mysql', location: url } : { type: 'sqlite', location: ':memory:' },
    );
    dataSource = new DataSource({ ...options, entities: [], migrations: [] });
    await dataSource.initialize();
    dialect = SqlDialect.of(dataSource);
    const queryRunner = dataSource.createQueryRunner();
    const column = new PortableColumns(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'dialect_words',
        columns: [column.string('term', 64, { ...column.binary(), isPrimary: true })],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'dialect_names',
        columns: [column.id(), column.string('name', 64)],
        indices: [new TableIndex({ name: 'ix_dialect_names_name', columnNames: ['name'] })],
      }),
    );
    await queryRunner.release();
    const names = ['a_b', 'a-b', 'A-b'];
    for (const [index, name] of names.entries())
      await dataSource.query('INSERT INTO dialect_names (id, name) VALUES (?, ?)', [`id-${index}`, name]);
  });

  afterAll(async () => {
    if (dataSource?.isInitialized) await dataSource.destroy();
    await dispose?.();
  });

  it(`recognises the engine (${backend.name})`, () => {
    expect(dialect.mysql).toBe(backend.name !== 'sqlite');
  });

  it('orders by code point with binary(), whatever the column collation', async () => {
    const rows: Array<{ name: string }> = await dataSource.query(
      `SELECT name FROM dialect_names ORDER BY ${dialect.binary('name')}`,
    );
    expect(rows.map((row) => row.name)).toEqual(['A-b', 'a-b', 'a_b']);
  });

  it('compares case-sensitively with binary()', async () => {
    const rows: Array<{ name: string }> = await dataSource.query(
      `SELECT name FROM dialect_names WHERE ${dialect.binary('name')} = ?`,
      ['a-b'],
    );
    expect(rows.map((row) => row.name)).toEqual(['a-b']);
  });

  it('makes a binaryColumn() key tell case apart', async () => {
    await dataSource.query('INSERT INTO dialect_words (term) VALUES (?), (?)', ['case', 'CASE']);
    const rows: Array<{ term: string }> = await dataSource.query(
      `SELECT term FROM dialect_words WHERE term IN ('case', 'CASE') ORDER BY term`,
    );
    expect(rows.map((row) => row.term)).toEqual(['CASE', 'case']);
  });

  it('skips an existing key with insertIgnore() and inserts the rest', async () => {
    await dataSource.query(`${dialect.insertIgnore()} INTO dialect_words (term) VALUES (?)`, ['kept']);
    await dataSource.query(`${dialect.insertIgnore()} INTO dialect_words (term) VALUES (?), (?)`, ['kept', 'added']);
    const rows: Array<{ term: string }> = await dataSource.query(
      `SELECT term FROM dialect_words WHERE term IN ('kept', 'added') ORDER BY term`,
    );
    expect(rows.map((row) => row.term)).toEqual(['added', 'kept']);
  });

  it('reads through the named index with useIndex()', async () => {
    const rows: Array<{ name: string }> = await dataSource.query(
      `SELECT name FROM dialect_names ${dialect.useIndex('ix_dialect_names_name')} WHERE name >= ? ORDER BY ${dialect.binary('name')}`,
      ['a'],
    );
    expect(rows.length).toBeGreaterThan(0);
  });

  it('names a real hint with useIndex(): an unknown index is an error', async () => {
    await expect(
      dataSource.query(`SELECT name FROM dialect_names ${dialect.useIndex('ix_no_such_index')} WHERE name >= ?`, ['a']),
    ).rejects.toThrow();
  });

  it('reads through the primary key with usePrimaryKey()', async () => {
    const rows: Array<{ term: string }> = await dataSource.query(
      `SELECT term FROM dialect_words ${dialect.usePrimaryKey()} WHERE term = ?`,
      ['kept'],
    );
    expect(rows).toEqual([{ term: 'kept' }]);
  });

  it('runs its statistics statements (SQLite only; InnoDB keeps its own)', async () => {
    const statements = dialect.refreshStatisticsStatements();
    expect(statements.length > 0).toBe(!dialect.mysql);
    for (const statement of statements) await dataSource.query(statement);
  });

  it('creates long text, integer and timestamp columns the engine accepts', async () => {
    const queryRunner = dataSource.createQueryRunner();
    const column = new PortableColumns(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'dialect_columns',
        columns: [column.id(), column.text('body'), column.integer('count'), column.timestamp('at')],
      }),
    );
    await queryRunner.release();
    const body = 'x'.repeat(70_000);
    await dataSource.query('INSERT INTO dialect_columns (id, body, count, at) VALUES (?, ?, ?, ?)', [
      'one',
      body,
      7,
      '2026-01-02 03:04:05.678',
    ]);
    const [row]: Array<{ body: string; count: number | string }> = await dataSource.query(
      'SELECT body, count FROM dialect_columns',
    );
    expect(row.body).toHaveLength(70_000);
    expect(Number(row.count)).toBe(7);
  });
});
