import { Injectable } from '@nestjs/common';
import { Export, Mod } from '../export.decorator.js';
import type { CodeElement } from '../docs/code-parser.js';
import { DocsService, type DocsWriterAction } from '../docs/docs.service.js';

/**
 * Built-in `docs` mod: the docs system as registered functions with the wire names existing clients call
 * (`docs.reader({query, max_results})`), so HTTP, MCP and RPC callers reach it like any mod.
 */
@Mod('docs')
@Injectable()
export class DocsMod {
  constructor(private readonly docs: DocsService) {}

  /** Builds or refreshes the docs index. */
  @Export({
    name: 'init',
    api: true,
    level: 1,
    samples: [{ kwargs: {} }],
    schema: { type: 'object', properties: { force_rebuild: { type: 'boolean', default: false } } },
  })
  init({ force_rebuild = false }: { force_rebuild?: boolean } = {}) {
    return this.docs.docsInit({ forceRebuild: force_rebuild });
  }

  /** Searches the docs (sections and code elements), best first. */
  @Export({
    name: 'reader',
    api: true,
    samples: [{ kwargs: { query: 'function registry', max_results: 5 } }, { kwargs: { max_results: 3 } }],
    schema: {
      type: 'object',
      properties: {
        query: { type: 'string' },
        section_id: { type: 'string' },
        file_path: { type: 'string' },
        tags: { type: 'array', items: { type: 'string' } },
        max_results: { type: 'integer', default: 25 },
        format_type: { type: 'string', enum: ['structured', 'markdown'], default: 'structured' },
      },
    },
  })
  reader({
    query,
    section_id,
    file_path,
    tags,
    max_results = 25,
    format_type = 'structured',
  }: {
    query?: string;
    section_id?: string;
    file_path?: string;
    tags?: string[];
    max_results?: number;
    format_type?: 'structured' | 'markdown';
  } = {}) {
    return this.docs.docsReader({
      query,
      sectionId: section_id,
      filePath: file_path,
      tags,
      maxResults: max_results,
      formatType: format_type,
    });
  }

  /** Creates docs files and adds, updates or deletes sections (inside the docs root only). */
  @Export({
    name: 'writer',
    api: true,
    level: 1,
    test: false,
    schema: {
      type: 'object',
      required: ['action'],
      properties: {
        action: { type: 'string', enum: ['create_file', 'add_section', 'update_section', 'delete_section'] },
        file_path: { type: 'string' },
        section_id: { type: 'string' },
        title: { type: 'string' },
        content: { type: 'string' },
        level: { type: 'integer', minimum: 1, maximum: 6 },
      },
    },
  })
  writer({
    action,
    file_path,
    section_id,
    title,
    content,
    level,
  }: {
    action: DocsWriterAction;
    file_path?: string;
    section_id?: string;
    title?: string;
    content?: string;
    level?: number;
  }) {
    return this.docs.docsWriter({ action, filePath: file_path, sectionId: section_id, title, content, level });
  }

  /** Finds code elements by name, type, file and language. */
  @Export({
    name: 'lookup',
    api: true,
    samples: [{ kwargs: { name: 'Result', max_results: 5 } }],
    schema: {
      type: 'object',
      properties: {
        name: { type: 'string' },
        element_type: { type: 'string', enum: ['class', 'function', 'method', 'interface', 'type'] },
        file_path: { type: 'string' },
        language: { type: 'string', enum: ['typescript', 'javascript', 'python'] },
        include_code: { type: 'boolean', default: false },
        max_results: { type: 'integer', default: 25 },
      },
    },
  })
  lookup({
    name,
    element_type,
    file_path,
    language,
    include_code = false,
    max_results = 25,
  }: {
    name?: string;
    element_type?: CodeElement['element_type'];
    file_path?: string;
    language?: CodeElement['language'];
    include_code?: boolean;
    max_results?: number;
  } = {}) {
    return this.docs.docsLookup({
      name,
      elementType: element_type,
      filePath: file_path,
      language,
      includeCode: include_code,
      maxResults: max_results,
    });
  }

  /** Suggests what to document next. */
  @Export({
    name: 'suggestions',
    api: true,
    samples: [{ kwargs: { max_suggestions: 5 } }],
    schema: { type: 'object', properties: { max_suggestions: { type: 'integer', default: 20 } } },
  })
  suggestions({ max_suggestions = 20 }: { max_suggestions?: number } = {}) {
    return this.docs.docsSuggestions({ maxSuggestions: max_suggestions });
  }
}
