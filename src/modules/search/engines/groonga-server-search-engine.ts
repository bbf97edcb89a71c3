import { Logger } from '@nestjs/common';
import { rankingMultiplier } from '../search-terms.js';
import { scriptString, selectResult, type GroongaSelectResult } from './groonga-command.js';
import { GroongaRanking } from './groonga-ranking.js';
import type { EnginePage, EngineQuery, EngineSuggest, SearchDocument, SearchEngine } from './search-engine.js';
import { documentRow } from './search-engine-sql.js';
import { DOCUMENTS_TABLE, TEXT_COLUMNS } from './search-schema.js';

/** The lexicons of the Groonga server's schema: words of the text columns, lower-cased names, publishers. */
const WORDS_TABLE = 'package_search_words';
const NAMES_TABLE = 'package_search_names';
const PUBLISHERS_TABLE = 'package_search_publishers';

/**
 * The schema, created when missing (`object_exist` first, so a server that holds it is left as it is).
 * Text is normalized by search-terms.ts before Groonga sees it: TokenDelimit splits at its spaces and no
 * normalizer changes it, so the server indexes exactly the words SQLite and Mroonga index.
 */
type SchemaObject = readonly [object: string, command: string, options: Record<string, string>];

/** An index column on `lexicon` over one column of the documents table. */
function indexColumn(lexicon: string, source: string, flags: string): SchemaObject {
  const name = `${source}_index`;
  return [`${lexicon}.${name}`, 'column_create', { table: lexicon, name, flags, type: DOCUMENTS_TABLE, source }];
}

const SCHEMA: readonly SchemaObject[] = [
  [DOCUMENTS_TABLE, 'table_create', { name: DOCUMENTS_TABLE, flags: 'TABLE_HASH_KEY', key_type: 'ShortText' }],
  ...(
    [
      ['name', 'ShortText'],
      ['name_lower', 'ShortText'],
      ['visibility', 'ShortText'],
      ['publisher_id', 'ShortText'],
      ['package_type', 'ShortText'],
      ['total_downloads', 'Int64'],
      ['verified', 'Bool'],
      ['multiplier', 'Int32'],
      ...TEXT_COLUMNS.map((column) => [column, 'Text'] as const),
    ] as const
  ).map(([column, type]): SchemaObject => [
    `${DOCUMENTS_TABLE}.${column}`,
    'column_create',
    { table: DOCUMENTS_TABLE, name: column, flags: 'COLUMN_SCALAR', type },
  ]),
  [
    WORDS_TABLE,
    'table_create',
    { name: WORDS_TABLE, flags: 'TABLE_PAT_KEY', key_type: 'ShortText', default_tokenizer: 'TokenDelimit' },
  ],
  ...TEXT_COLUMNS.map((column) => indexColumn(WORDS_TABLE, column, 'COLUMN_INDEX|WITH_POSITION')),
  [NAMES_TABLE, 'table_create', { name: NAMES_TABLE, flags: 'TABLE_PAT_KEY', key_type: 'ShortText' }],
  indexColumn(NAMES_TABLE, 'name_lower', 'COLUMN_INDEX'),
  [PUBLISHERS_TABLE, 'table_create', { name: PUBLISHERS_TABLE, flags: 'TABLE_HASH_KEY', key_type: 'ShortText' }],
  indexColumn(PUBLISHERS_TABLE, 'publisher_id', 'COLUMN_INDEX'),
];

/** Documents per `load` (a request body of about a megabyte). */
const DOCUMENTS_PER_LOAD = 2000;

/** A package id as the engine stores it (a UUID); checked before it goes into a filter. */
const PACKAGE_ID = /^[A-Za-z0-9-]{1,64}$/;

/** A Groonga command's answer: `[[return code, start, elapsed, message?…], body]`. */
type GroongaAnswer = [header: [number, number, number, string?, ...unknown[]], body: unknown];

/**
 * A dedicated search server: Groonga over HTTP (`groonga -s --protocol http`, or groonga-httpd), for a
 * registry whose database should not carry search (docs/search.md, "A dedicated engine"). The registry's
 * database stays the source of truth; this engine holds a copy of each package's document, kept in step by
 * the Search module's events, and rebuilt from the database at start-up (every package indexed again, the
 * documents of packages deleted meanwhile removed). Ranking is the same Groonga select as on Mroonga
 * (groonga-ranking.ts), with one weighted `query()` for prefix words where the server weighs them.
 */
export class GroongaServerSearchEngine implements SearchEngine {
  readonly label: string;
  private readonly ranking: GroongaRanking;

  private constructor(
    private readonly baseUrl: URL,
    version: string,
  ) {
    this.label = `Groonga ${version} server at ${baseUrl.origin}`;
    this.ranking = new GroongaRanking({
      select: (options) => this.select(options),
      idColumn: '_key',
      weightedPrefix: weighsPrefixSearches(version),
    });
  }

  /**
   * Connects to the server at `url` (its `/d/` command path), checks that it answers, and creates the
   * schema when it is missing. Fails with the server's answer when it cannot be reached.
   */
  static async connect(url: string, logger = new Logger('Search')): Promise<GroongaServerSearchEngine> {
    let base: URL;
    try {
      base = new URL(url);
    } catch {
      throw new Error(`SEARCH_GROONGA_URL is not a URL: ${url}`);
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:')
      throw new Error(`SEARCH_GROONGA_URL must be http:// or https:// (got ${url})`);
    const status = (await groongaHttp(base, 'status', {})) as { version?: string };
    const engine = new GroongaServerSearchEngine(base, String(status.version ?? '?'));
    let created = 0;
    for (const [object, command, options] of SCHEMA) {
      if ((await engine.command('object_exist', { name: object })) === true) continue;
      await engine.command(command, options);
      created += 1;
    }
    if (created > 0) logger.log(`Groonga server ${base.origin}: created ${created} schema objects`);
    return engine;
  }

  private command(name: string, options: Record<string, string>, body?: string): Promise<unknown> {
    return groongaHttp(this.baseUrl, name, options, body);
  }

  private async select(options: ReadonlyArray<readonly [string, string | number]>): Promise<GroongaSelectResult> {
    // No query cache (a cached answer would outlive a write), and no escalation to partial matches.
    const parameters: Record<string, string> = {
      table: DOCUMENTS_TABLE,
      match_escalation_threshold: '-1',
      cache: 'no',
    };
    for (const [option, value] of options) parameters[option] = String(value);
    return selectResult(await this.command('select', parameters));
  }

  private async load(values: object[]): Promise<void> {
    if (values.length === 0) return;
    await this.command('load', { table: DOCUMENTS_TABLE, input_type: 'json' }, JSON.stringify(values));
  }

  async upsert(documents: SearchDocument[]): Promise<void> {
    for (let start = 0; start < documents.length; start += DOCUMENTS_PER_LOAD) {
      await this.load(
        documents.slice(start, start + DOCUMENTS_PER_LOAD).map((document) => {
          const row = documentRow(document);
          return {
            _key: row.packageId,
            name: row.name,
            name_lower: row.nameLower,
            visibility: row.visibility,
            publisher_id: row.publisherId,
            package_type: row.packageType,
            total_downloads: row.totalDownloads,
            verified: document.verified,
            multiplier: row.multiplier,
            ...Object.fromEntries(TEXT_COLUMNS.map((column, index) => [column, row.text[index]])),
          };
        }),
      );
    }
  }

  async remove(packageId: string): Promise<void> {
    await this.command('delete', { table: DOCUMENTS_TABLE, key: checkedId(packageId) });
  }

  /** The stored verification decides the factor; a package without a document is left without one. */
  async setDownloads(packageId: string, totalDownloads: number): Promise<void> {
    const current = await this.select([
      ['filter', `_key == ${scriptString(checkedId(packageId))}`],
      ['output_columns', 'verified,total_downloads'],
      ['limit', 1],
    ]);
    const row = current.rows[0];
    if (!row || Number(row[1]) === totalDownloads) return;
    await this.load([
      {
        _key: packageId,
        total_downloads: totalDownloads,
        multiplier: rankingMultiplier(totalDownloads, row[0] === true),
      },
    ]);
  }

  async setPublisherVerified(publisherId: string, verified: boolean): Promise<void> {
    const documents = await this.select([
      [
        'filter',
        `publisher_id == ${scriptString(checkedId(publisherId))} && verified == ${verified ? 'false' : 'true'}`,
      ],
      ['output_columns', '_key,total_downloads'],
      ['limit', -1],
    ]);
    await this.load(
      documents.rows.map(([key, downloads]) => ({
        _key: key,
        verified,
        multiplier: rankingMultiplier(Number(downloads), verified),
      })),
    );
  }

  search(query: EngineQuery): Promise<EnginePage> {
    return this.ranking.search(query);
  }

  suggest(query: EngineSuggest): Promise<string[]> {
    return this.ranking.suggest(query);
  }

  matchRelevance(terms: EngineQuery['terms']): Promise<Map<string, number>> {
    return this.ranking.matchRelevance(terms);
  }

  /** Outside the database: every package is indexed again at start-up (what changed while the server was away). */
  missingDocumentSql(): null {
    return null;
  }

  /** Every package id the server holds a document of, for removing those of packages deleted meanwhile. */
  async documentIds(): Promise<string[]> {
    const result = await this.select([
      ['output_columns', '_key'],
      ['limit', -1],
    ]);
    return result.rows.map((row) => String(row[0]));
  }
}

/**
 * Whether a server of this version weighs prefix searches by the match columns' weights: Groonga 13 (Debian
 * 12's, which the contract spec runs against) does, Mroonga's 7.0.7 does not. Older or unknown versions are
 * searched as on Mroonga, once per unit of weight: the same ranking, slower.
 */
export function weighsPrefixSearches(version: string): boolean {
  const major = Number(/^(\d+)\./.exec(version)?.[1]);
  return Number.isInteger(major) && major >= 13;
}

/** One command of the server at `baseUrl`: GET with the options as query parameters, or POST with a body (load). */
async function groongaHttp(
  baseUrl: URL,
  name: string,
  options: Record<string, string>,
  body?: string,
): Promise<unknown> {
  if (!/^[a-z_]+$/.test(name)) throw new Error(`not a Groonga command: ${name}`);
  const url = new URL(`d/${name}`, baseUrl.href.endsWith('/') ? baseUrl : `${baseUrl.href}/`);
  for (const [option, value] of Object.entries(options)) {
    if (!/^[a-z_]+$/.test(option)) throw new Error(`not a Groonga option name: ${option}`);
    url.searchParams.set(option, value);
  }
  let response: Response;
  try {
    response = await fetch(
      url,
      body === undefined ? {} : { method: 'POST', body, headers: { 'content-type': 'application/json' } },
    );
  } catch (error) {
    throw new Error(`Groonga server ${baseUrl.origin} unreachable: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const text = await response.text();
  let answer: GroongaAnswer;
  try {
    answer = JSON.parse(text) as GroongaAnswer;
  } catch {
    throw new Error(`Groonga server ${baseUrl.origin} answered ${response.status} without JSON: ${text.slice(0, 200)}`);
  }
  const [code, , , message] = answer[0] ?? [];
  if (code !== 0) throw new Error(`Groonga ${name} failed (${code}): ${message ?? text.slice(0, 200)}`);
  return answer[1];
}

function checkedId(id: string): string {
  if (!PACKAGE_ID.test(id)) throw new Error(`not an id: ${id}`);
  return id;
}
