import { join } from 'node:path';
import { loadConfig } from '../config/config.js';
import { DocsService } from '../modules/app-core/index.js';
import { appCoreOptionsFrom } from '../apps/app-core.app-module.js';
import { UsageError } from '../common/errors.js';
import { parseCommandArgs } from './cli-args.js';
import { processIo, type CommandIo } from './command-io.js';

const USAGE = `usage: tb docs init [--force] [--json]
       tb docs search QUERY [--max N] [--tag T]… [--file PATH] [--json]
       tb docs lookup NAME [--type class|function|method|interface|type] [--language typescript|javascript|python] [--code] [--max N] [--json]
       tb docs suggest [--max N] [--json]
  (DOCS_ROOT and DOCS_SOURCE_ROOTS choose what is indexed; default ./docs and ./src)`;

type ElementType = 'class' | 'function' | 'method' | 'interface' | 'type';
type Language = 'typescript' | 'javascript' | 'python';

/** `tb docs init|search|lookup|suggest`: the docs system from the command line. */
export async function runDocsCommand(argv: string[], io: CommandIo = processIo()): Promise<number> {
  const [action, ...rest] = argv;
  const { values, positionals } = parseCommandArgs(rest, {
    json: { type: 'boolean', default: false },
    force: { type: 'boolean', default: false },
    max: { type: 'string' },
    tag: { type: 'string', multiple: true },
    file: { type: 'string' },
    type: { type: 'string' },
    language: { type: 'string' },
    code: { type: 'boolean', default: false },
    'data-dir': { type: 'string' },
  });
  const config = loadConfig(io.env, { dataDir: values['data-dir'] });
  const options = appCoreOptionsFrom(config);
  // The same defaults as AppCoreModule, so the CLI and the running core share one index file.
  const docs = new DocsService({
    docsRoot: options.docsRoot ?? join(process.cwd(), 'docs'),
    sourceRoots: options.sourceRoots ?? [join(process.cwd(), 'src')],
    indexPath: join(options.dataDir, 'docs-index.json'),
  });
  const max = values.max === undefined ? undefined : Number(values.max);
  if (max !== undefined && !(Number.isInteger(max) && max > 0))
    throw new UsageError(`--max must be a positive whole number (got "${values.max}")`);
  const emit = (data: Record<string, unknown>, text: () => string) => {
    io.out(values.json ? JSON.stringify(data) : text());
    return 'error' in data ? 1 : 0;
  };

  switch (action) {
    case 'init': {
      const outcome = await docs.docsInit({ forceRebuild: values.force });
      return emit(
        outcome,
        () =>
          `docs index ${outcome.status}: ${outcome.sections} sections, ${outcome.elements} code elements in ${outcome.time_ms} ms`,
      );
    }
    case 'search': {
      const query = positionals.join(' ').trim();
      if (!query) throw new UsageError(USAGE);
      const outcome = (await docs.docsReader({
        query,
        maxResults: max ?? 10,
        tags: values.tag,
        filePath: values.file,
      })) as Record<string, unknown>;
      return emit(outcome, () => formatSearch(outcome));
    }
    case 'lookup': {
      const name = positionals[0];
      if (!name || positionals.length > 1) throw new UsageError(USAGE);
      const outcome = await docs.docsLookup({
        name,
        elementType: values.type as ElementType | undefined,
        language: values.language as Language | undefined,
        includeCode: values.code,
        maxResults: max ?? 25,
      });
      return emit(outcome, () =>
        outcome.results.length === 0
          ? `no code element named ${name}`
          : outcome.results
              .map(
                (element) =>
                  `${element.element_type} ${element.qualified_name}  ${element.file_path}:${element.line_start}\n  ${element.signature}${'code' in element && element.code ? `\n${element.code}` : ''}`,
              )
              .join('\n'),
      );
    }
    case 'suggest': {
      const outcome = await docs.docsSuggestions({ maxSuggestions: max ?? 20 });
      return emit(outcome, () =>
        [
          ...outcome.suggestions.map((item) => `[${item.priority}] ${item.file_path}:${item.line}  ${item.message}`),
          `${outcome.suggestions.length} of ${outcome.total} suggestions`,
        ].join('\n'),
      );
    }
    default:
      throw new UsageError(USAGE);
  }
}

function formatSearch(outcome: Record<string, unknown>): string {
  const sections = (outcome.sections ?? []) as Array<{
    score: number | null;
    file_path: string;
    line_start: number;
    title: string;
    id: string;
  }>;
  const elements = (outcome.code_elements ?? []) as Array<{
    score: number;
    file_path: string;
    line_start: number;
    qualified_name: string;
    element_type: string;
  }>;
  if (sections.length === 0 && elements.length === 0) return 'no matches';
  return [
    ...sections.map(
      (section) =>
        `${(section.score ?? 0).toFixed(3)}  ${section.file_path}:${section.line_start}  ${section.title}  (${section.id})`,
    ),
    ...elements.map(
      (element) =>
        `${element.score.toFixed(3)}  ${element.file_path}:${element.line_start}  ${element.element_type} ${element.qualified_name}`,
    ),
  ].join('\n');
}
