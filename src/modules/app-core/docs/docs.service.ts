import { readFile } from 'node:fs/promises';
import { sep } from 'node:path';
import { writeFileAtomically } from '../../../common/atomic-write.js';
import type { CodeElement } from './code-parser.js';
import { DocsIndex, type DocsIndexOptions } from './docs-index.js';
import { addSectionToText, deleteSectionFromText, resolveDocsPath, updateSectionInText } from './docs-writer.js';
import { parseMarkdown, type MarkdownSection } from './markdown-parser.js';

export type DocsServiceOptions = DocsIndexOptions;

export interface DocsReaderQuery {
  query?: string;
  sectionId?: string;
  /** A path in the index, a docs-relative path, or a directory prefix. */
  filePath?: string;
  /** Sections carrying any of these tags. */
  tags?: string[];
  maxResults?: number;
  /** `structured` (objects, default) or `markdown` (one Markdown text). */
  formatType?: 'structured' | 'markdown';
}

export type DocsWriterAction = 'create_file' | 'add_section' | 'update_section' | 'delete_section';

export interface DocsWriterRequest {
  action: DocsWriterAction;
  /** Docs-relative path (create_file, add_section). */
  filePath?: string;
  /** Section id from the index (update_section, delete_section; add_section: insert after it). */
  sectionId?: string;
  title?: string;
  content?: string;
  /** Header level of a new section (default 2). */
  level?: number;
}

export interface DocsLookupQuery {
  name?: string;
  elementType?: CodeElement['element_type'];
  filePath?: string;
  language?: CodeElement['language'];
  includeCode?: boolean;
  maxResults?: number;
}

export interface DocsSuggestion {
  type: 'missing_docs' | 'empty_section' | 'unknown_reference';
  priority: 'high' | 'medium' | 'low';
  file_path: string;
  line: number;
  target: string;
  message: string;
}

const PRIORITY_ORDER = { high: 0, medium: 1, low: 2 } as const;

const elapsed = (started: number) => Math.round((performance.now() - started) * 100) / 100;

function matchesPath(indexPath: string, filter: string | undefined): boolean {
  if (!filter) return true;
  const wanted = filter.replace(/\\/g, '/').replace(/^\.\//, '');
  return (
    indexPath === wanted ||
    indexPath.endsWith(`/${wanted}`) ||
    indexPath.startsWith(wanted.endsWith('/') ? wanted : `${wanted}/`)
  );
}

/**
 * The docs system (docs_init, docs_reader, docs_writer, docs_lookup, docs_suggestions)
 * over a `DocsIndex`. Results are wire data (snake_case keys); no method throws for bad input:
 * it answers `{error}` instead.
 */
export class DocsService {
  readonly index: DocsIndex;
  private readying: Promise<void> | undefined;

  constructor(options: DocsServiceOptions) {
    this.index = new DocsIndex(options);
  }

  /** Builds or refreshes the index: `{status, sections, elements, time_ms, files_parsed, files_unchanged, files_removed}`. */
  async docsInit(options: { forceRebuild?: boolean } = {}) {
    const started = performance.now();
    if (!options.forceRebuild && !this.index.ready) await this.index.load();
    const report = await this.index.refresh({ force: options.forceRebuild ?? false });
    return {
      status: options.forceRebuild ? 'rebuilt' : 'updated',
      sections: this.index.sections().length,
      elements: this.index.elements().length,
      time_ms: elapsed(started),
      ...report,
    };
  }

  /** Sections (and, for a query, code elements) ranked best first by BM25 with a title boost. */
  async docsReader(request: DocsReaderQuery = {}) {
    const started = performance.now();
    await this.ready();
    const maxResults = Math.max(1, request.maxResults ?? 25);
    const formatType = request.formatType ?? 'structured';
    if (formatType !== 'structured' && formatType !== 'markdown')
      return { error: `unknown format_type '${formatType}'` };
    const wantedTags = (request.tags ?? []).map((tag) => tag.replace(/^#/, '').toLowerCase());
    const accept = (section: MarkdownSection) =>
      matchesPath(section.file_path, request.filePath) &&
      (wantedTags.length === 0 || section.tags.some((tag) => wantedTags.includes(tag)));

    let sections: Array<{ section: MarkdownSection; score: number | null }>;
    let elements: Array<{ element: CodeElement; score: number }> = [];
    if (request.sectionId) {
      const section = this.index.sections().find((candidate) => candidate.id === request.sectionId);
      if (!section) return { error: `section '${request.sectionId}' not found` };
      sections = [{ section, score: null }];
    } else if (request.query && request.query.trim() !== '') {
      sections = this.index
        .sectionSearch()
        .search(request.query, accept)
        .map(({ document, score }) => ({ section: document, score }));
      if (wantedTags.length === 0) {
        elements = this.index
          .elementSearch()
          .search(request.query, (element) => matchesPath(element.file_path, request.filePath))
          .map(({ document, score }) => ({ element: document, score }));
      }
    } else {
      sections = this.index
        .sections()
        .filter(accept)
        .map((section) => ({ section, score: null }));
    }
    const totalSections = sections.length;
    const totalElements = elements.length;
    sections = sections.slice(0, maxResults);
    elements = elements.slice(0, maxResults);
    const round = (score: number | null) => (score === null ? null : Math.round(score * 1000) / 1000);
    if (formatType === 'markdown') {
      const parts = sections.map(
        ({ section }) =>
          `${'#'.repeat(Math.max(2, Math.min(6, section.level + 1)))} ${section.title}\n\n_${section.file_path}:${section.line_start}_\n\n${section.content}`,
      );
      for (const { element } of elements)
        parts.push(
          `### \`${element.qualified_name}\`\n\n_${element.file_path}:${element.line_start}_\n\n\`\`\`\n${element.signature}\n\`\`\`\n\n${element.docstring}`,
        );
      return {
        query: request.query ?? null,
        content: parts.join('\n\n'),
        total_sections: totalSections,
        total_elements: totalElements,
        time_ms: elapsed(started),
      };
    }
    return {
      query: request.query ?? null,
      sections: sections.map(({ section, score }) => ({ ...section, score: round(score) })),
      code_elements: elements.map(({ element, score }) => ({ ...element, score: round(score) })),
      total_sections: totalSections,
      total_elements: totalElements,
      time_ms: elapsed(started),
    };
  }

  /** Creates files and adds, updates or deletes sections, only inside the docs root. */
  async docsWriter(request: DocsWriterRequest): Promise<Record<string, unknown>> {
    await this.ready();
    switch (request.action) {
      case 'create_file': {
        const resolved = await resolveDocsPath(this.index.docsRoot, request.filePath);
        if ('error' in resolved) return resolved;
        const existing = await readFile(resolved.path, 'utf8').catch(() => undefined);
        if (existing !== undefined) return { error: `${request.filePath} already exists` };
        const text = request.content ?? (request.title ? `# ${request.title}\n` : '');
        await this.writeDocument(resolved.path, text.endsWith('\n') || text === '' ? text : `${text}\n`);
        return {
          status: 'created',
          file_path: this.index.relativePath(resolved.path),
          sections: this.sectionsOf(resolved.path).length,
        };
      }
      case 'add_section': {
        const title = request.title;
        if (!title) return { error: 'title is required' };
        let target: string;
        let after: MarkdownSection | undefined;
        if (request.sectionId && !request.filePath) {
          const located = await this.locate(request.sectionId);
          if ('error' in located) return located;
          target = located.path;
          after = located.section;
        } else {
          const resolved = await resolveDocsPath(this.index.docsRoot, request.filePath);
          if ('error' in resolved) return resolved;
          target = resolved.path;
        }
        const text = (await readFile(target, 'utf8').catch(() => '')) ?? '';
        const updated = addSectionToText(
          text,
          title,
          request.content ?? '',
          request.level ?? (after ? Math.max(after.level, 1) : 2),
          after,
        );
        await this.writeDocument(target, updated);
        const added = this.sectionsOf(target).find(
          (section) => section.title === title.trim() && (!after || section.line_start > after.line_start),
        );
        return { status: 'added', file_path: this.index.relativePath(target), section_id: added?.id ?? null };
      }
      case 'update_section': {
        if (!request.sectionId) return { error: 'section_id is required' };
        if (request.title === undefined && request.content === undefined)
          return { error: 'title or content is required' };
        const located = await this.locate(request.sectionId);
        if ('error' in located) return located;
        await this.writeDocument(
          located.path,
          updateSectionInText(located.text, located.section, { title: request.title, content: request.content }),
        );
        const sections = this.sectionsOf(located.path);
        const updated = sections.find((section) => section.line_start === located.section.line_start);
        return { status: 'updated', file_path: this.index.relativePath(located.path), section_id: updated?.id ?? null };
      }
      case 'delete_section': {
        if (!request.sectionId) return { error: 'section_id is required' };
        const located = await this.locate(request.sectionId);
        if ('error' in located) return located;
        await this.writeDocument(located.path, deleteSectionFromText(located.text, located.section));
        return { status: 'deleted', file_path: this.index.relativePath(located.path), section_id: request.sectionId };
      }
      default:
        return { error: `unknown action '${String((request as { action?: unknown }).action)}'` };
    }
  }

  /** Code elements by name (exact, then prefix, then substring), type, path and language. */
  async docsLookup(request: DocsLookupQuery = {}) {
    const started = performance.now();
    await this.ready();
    const maxResults = Math.max(1, request.maxResults ?? 25);
    const wanted = request.name?.trim().toLowerCase();
    const ranked: Array<{ element: CodeElement; rank: number }> = [];
    for (const element of this.index.elements()) {
      if (request.elementType && element.element_type !== request.elementType) continue;
      if (request.language && element.language !== request.language) continue;
      if (!matchesPath(element.file_path, request.filePath)) continue;
      let rank = 0;
      if (wanted) {
        const name = element.name.toLowerCase();
        const qualified = element.qualified_name.toLowerCase();
        if (name === wanted || qualified === wanted) rank = 0;
        else if (name.startsWith(wanted) || qualified.startsWith(wanted)) rank = 1;
        else if (qualified.includes(wanted)) rank = 2;
        else continue;
      }
      ranked.push({ element, rank });
    }
    ranked.sort(
      (first, second) =>
        first.rank - second.rank ||
        first.element.qualified_name.length - second.element.qualified_name.length ||
        first.element.file_path.localeCompare(second.element.file_path),
    );
    const selected = ranked.slice(0, maxResults);
    const results = await Promise.all(
      selected.map(async ({ element }) =>
        request.includeCode ? { ...element, code: await this.codeOf(element) } : { ...element },
      ),
    );
    return { results, total: ranked.length, time_ms: elapsed(started) };
  }

  /**
   * What to document next: exported code without a doc comment, empty sections, and backticked
   * names in the docs that no indexed code defines (stale docs). Highest priority first.
   */
  async docsSuggestions(options: { maxSuggestions?: number } = {}) {
    const started = performance.now();
    await this.ready();
    const suggestions: DocsSuggestion[] = [];
    const elements = this.index.elements();
    for (const element of elements) {
      if (!element.exported || element.docstring.trim() !== '' || element.name === 'constructor') continue;
      suggestions.push({
        type: 'missing_docs',
        priority: element.element_type === 'method' ? 'medium' : 'high',
        file_path: element.file_path,
        line: element.line_start,
        target: element.qualified_name,
        message: `exported ${element.element_type} ${element.qualified_name} has no doc comment`,
      });
    }
    const sections = this.index.sections();
    const knownNames = new Set<string>();
    for (const element of elements) {
      knownNames.add(element.name);
      knownNames.add(element.qualified_name);
    }
    sections.forEach((section, position) => {
      const next = sections[position + 1];
      const hasChildren = next !== undefined && next.file_path === section.file_path && next.level > section.level;
      if (section.level > 0 && section.content.trim() === '' && !hasChildren) {
        suggestions.push({
          type: 'empty_section',
          priority: 'medium',
          file_path: section.file_path,
          line: section.line_start,
          target: section.id,
          message: `section "${section.title}" has no content`,
        });
      }
      if (elements.length === 0) return;
      const reported = new Set<string>();
      for (const match of section.content.matchAll(/`([A-Z][a-z]\w*(?:\.[A-Za-z_]\w*)?|[a-z]+[A-Z]\w*)(?:\(\))?`/g)) {
        const name = match[1];
        if (knownNames.has(name) || reported.has(name)) continue;
        reported.add(name);
        suggestions.push({
          type: 'unknown_reference',
          priority: 'low',
          file_path: section.file_path,
          line: section.line_start,
          target: name,
          message: `section "${section.title}" mentions \`${name}\`, which no indexed code defines`,
        });
      }
    });
    suggestions.sort(
      (first, second) =>
        PRIORITY_ORDER[first.priority] - PRIORITY_ORDER[second.priority] ||
        first.file_path.localeCompare(second.file_path) ||
        first.line - second.line,
    );
    return {
      suggestions: suggestions.slice(0, Math.max(0, options.maxSuggestions ?? 20)),
      total: suggestions.length,
      time_ms: elapsed(started),
    };
  }

  /** Loads the persisted index once and refreshes it (incrementally) on first use. */
  private ready(): Promise<void> {
    if (this.index.ready) return Promise.resolve();
    this.readying ??= (async () => {
      await this.index.load();
      await this.index.refresh();
    })().finally(() => (this.readying = undefined));
    return this.readying;
  }

  private async locate(
    sectionId: string,
  ): Promise<{ path: string; text: string; section: MarkdownSection } | { error: string }> {
    const hash = sectionId.indexOf('#');
    if (hash <= 0) return { error: `section '${sectionId}' not found` };
    const indexPath = sectionId.slice(0, hash);
    const absolute = this.index.absolutePath(indexPath);
    const docsRelative = this.index.relativePath(absolute);
    const rootRelative = absolute.startsWith(this.index.docsRoot + sep)
      ? absolute.slice(this.index.docsRoot.length + 1)
      : '';
    const resolved = await resolveDocsPath(this.index.docsRoot, rootRelative);
    if ('error' in resolved) return { error: `section '${sectionId}' is not in the docs root` };
    const text = await readFile(resolved.path, 'utf8').catch(() => undefined);
    if (text === undefined) return { error: `section '${sectionId}' not found` };
    const section = parseMarkdown(text, docsRelative).find((candidate) => candidate.id === sectionId);
    if (!section) return { error: `section '${sectionId}' not found` };
    return { path: resolved.path, text, section };
  }

  private sectionsOf(absolutePath: string): MarkdownSection[] {
    const indexPath = this.index.relativePath(absolutePath);
    return this.index.sections().filter((section) => section.file_path === indexPath);
  }

  private async writeDocument(absolutePath: string, text: string): Promise<void> {
    await writeFileAtomically(absolutePath, text);
    await this.index.refreshFile(absolutePath, 'markdown');
    await this.index.save();
  }

  private async codeOf(element: CodeElement): Promise<string | null> {
    const text = await readFile(this.index.absolutePath(element.file_path), 'utf8').catch(() => undefined);
    if (text === undefined) return null;
    return text
      .split(/\r?\n/)
      .slice(element.line_start - 1, element.line_end)
      .join('\n');
  }
}
