import { Entity, PrimaryColumn } from 'typeorm';

/**
 * One distinct word of the search index's text fields, so a query prefix expands to its words with
 * one range read. Only ever added to by the Search module: a word no package holds any more expands
 * to nothing, which costs an empty index read.
 */
@Entity('package_search_vocabulary')
export class PackageSearchWordEntity {
  @PrimaryColumn({ type: 'varchar', length: 64 })
  term: string;
}
