/**
 * The names of the search index's tables and columns, as migration 1763800001500-search-fulltext
 * creates them (docs/search.md). Migrations may not import modules, so the DDL lives there.
 */
export const DOCUMENTS_TABLE = 'package_search_documents';
export const FTS_TABLE = 'package_search_fts';
export const FULLTEXT_INDEX = 'ft_package_search_documents_text';
/** The text columns, in the order of their weights (COLUMN_WEIGHTS). */
export const TEXT_COLUMNS = ['name_words', 'display_words', 'keyword_words', 'description_words'] as const;

export type MysqlFulltextEngine = 'Mroonga' | 'InnoDB';
