import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DocsService } from './docs.service.js';

describe('DocsService', () => {
  let base: string;
  let docs: DocsService;
  const options = () => ({
    docsRoot: join(base, 'docs'),
    sourceRoots: [join(base, 'src')],
    indexPath: join(base, 'data', 'docs-index.json'),
    baseDir: base,
  });

  beforeEach(async () => {
    base = await mkdtemp(join(tmpdir(), 'docs-service-'));
    await mkdir(join(base, 'docs', 'guide'), { recursive: true });
    await mkdir(join(base, 'src'), { recursive: true });
    await writeFile(
      join(base, 'docs', 'guide', 'caching.md'),
      '# Caching\n\nFunctions cache results in memory. #performance\n\n## File cache\n\nResults persist on disk across restarts.\n\n## Empty\n\n## Reference\n\nSee `FunctionRunner` and `GhostThing`.\n',
    );
    await writeFile(
      join(base, 'docs', 'mods.md'),
      '# Mods\n\nA mod is a package with functions; mods may use the memory cache too.\n',
    );
    await writeFile(
      join(base, 'src', 'runner.ts'),
      '/** Runs functions. */\nexport class FunctionRunner {\n  run(name: string) {\n    return name;\n  }\n}\n\nexport function undocumented() {}\n\nexport function runLater() {}\n',
    );
    await writeFile(join(base, 'src', 'runner.spec.ts'), 'export function shouldNotBeIndexed() {}\n');
    await writeFile(join(base, 'src', 'tool.py'), 'def run_tool(x):\n    """Runs a tool."""\n    return x\n');
    docs = new DocsService(options());
  });

  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('indexes sections and code elements and persists the index in the data directory', async () => {
    const report = await docs.docsInit();
    expect(report).toMatchObject({ status: 'updated', sections: 5, elements: 5, files_parsed: 4 });
    expect(typeof report.time_ms).toBe('number');
    expect(JSON.parse(await readFile(join(base, 'data', 'docs-index.json'), 'utf8')).files).toHaveProperty([
      'docs/mods.md',
    ]);
  });

  it('does not re-parse unchanged files, even in a new process', async () => {
    await docs.docsInit();
    const second = await new DocsService(options()).docsInit();
    expect([second.files_parsed, second.files_unchanged]).toEqual([0, 4]);
  });

  it('re-parses only a changed file and forgets a removed one', async () => {
    await docs.docsInit();
    await writeFile(join(base, 'docs', 'mods.md'), '# Mods\n\nChanged.\n\n## New part\n\nMore.\n');
    await rm(join(base, 'src', 'tool.py'));
    const report = await docs.docsInit();
    expect([
      report.files_parsed,
      report.files_unchanged,
      report.files_removed,
      report.sections,
      report.elements,
    ]).toEqual([1, 2, 1, 6, 4]);
  });

  it('re-parses everything on forceRebuild', async () => {
    await docs.docsInit();
    expect(await docs.docsInit({ forceRebuild: true })).toMatchObject({ status: 'rebuilt', files_parsed: 4 });
  });

  it('ranks sections whose title matches above those mentioning the word', async () => {
    const found = (await docs.docsReader({ query: 'cache' })) as { sections: Array<{ title: string; score: number }> };
    expect(found.sections.map((section) => section.title).slice(0, 2)).toEqual(['Caching', 'File cache']);
    expect(found.sections.map((section) => section.title)).toContain('Mods');
  });

  it('returns code elements matching the query next to the sections', async () => {
    const found = (await docs.docsReader({ query: 'runs a tool' })) as {
      code_elements: Array<{ qualified_name: string }>;
    };
    expect(found.code_elements[0].qualified_name).toBe('run_tool');
  });

  it('limits the results to maxResults and reports the total', async () => {
    const found = (await docs.docsReader({ query: 'cache', maxResults: 1 })) as {
      sections: unknown[];
      total_sections: number;
    };
    expect([found.sections.length, found.total_sections]).toEqual([1, 3]);
  });

  it('filters sections by tag and by file path', async () => {
    const tagged = (await docs.docsReader({ tags: ['#performance'] })) as { sections: Array<{ title: string }> };
    const inFile = (await docs.docsReader({ filePath: 'mods.md' })) as { sections: Array<{ title: string }> };
    expect([tagged.sections.map((section) => section.title), inFile.sections.map((section) => section.title)]).toEqual([
      ['Caching'],
      ['Mods'],
    ]);
  });

  it('returns one section by id and an error for an unknown id', async () => {
    const found = (await docs.docsReader({ sectionId: 'docs/guide/caching.md#file-cache' })) as {
      sections: Array<{ content: string }>;
    };
    expect(found.sections[0].content).toBe('Results persist on disk across restarts.');
    expect(await docs.docsReader({ sectionId: 'docs/nothing.md#x' })).toEqual({
      error: "section 'docs/nothing.md#x' not found",
    });
  });

  it('renders Markdown when asked', async () => {
    const found = (await docs.docsReader({ query: 'restarts', formatType: 'markdown' })) as { content: string };
    expect(found.content).toContain('## File cache');
  });

  it('creates a file and refuses to create it twice', async () => {
    expect(await docs.docsWriter({ action: 'create_file', filePath: 'new/page.md', title: 'Page' })).toMatchObject({
      status: 'created',
      file_path: 'docs/new/page.md',
      sections: 1,
    });
    expect(await docs.docsWriter({ action: 'create_file', filePath: 'new/page.md' })).toEqual({
      error: 'new/page.md already exists',
    });
  });

  it('refuses to write outside the docs root', async () => {
    expect(await docs.docsWriter({ action: 'create_file', filePath: '../src/evil.md', content: 'x' })).toEqual({
      error: 'file_path escapes the docs root',
    });
    expect(await docs.docsWriter({ action: 'add_section', filePath: '../../evil.md', title: 'x' })).toHaveProperty(
      'error',
    );
  });

  it('adds a section that the reader finds at once', async () => {
    const added = await docs.docsWriter({
      action: 'add_section',
      filePath: 'mods.md',
      title: 'Publishing',
      content: 'Use tb mods publish.',
    });
    expect(added).toEqual({ status: 'added', file_path: 'docs/mods.md', section_id: 'docs/mods.md#publishing' });
    const found = (await docs.docsReader({ query: 'publish' })) as { sections: Array<{ id: string }> };
    expect(found.sections[0].id).toBe('docs/mods.md#publishing');
  });

  it('updates and deletes sections by id', async () => {
    expect(
      await docs.docsWriter({
        action: 'update_section',
        sectionId: 'docs/guide/caching.md#file-cache',
        content: 'Now on SSD.',
      }),
    ).toMatchObject({ status: 'updated' });
    expect(await readFile(join(base, 'docs', 'guide', 'caching.md'), 'utf8')).toContain('## File cache\n\nNow on SSD.');
    expect(await docs.docsWriter({ action: 'delete_section', sectionId: 'docs/guide/caching.md#empty' })).toMatchObject(
      { status: 'deleted' },
    );
    expect(await readFile(join(base, 'docs', 'guide', 'caching.md'), 'utf8')).not.toContain('## Empty');
  });

  it('answers an unknown action with an error', async () => {
    expect(await docs.docsWriter({ action: 'chmod' as never })).toEqual({ error: "unknown action 'chmod'" });
  });

  it('looks code up by exact name before prefix matches', async () => {
    const found = await docs.docsLookup({ name: 'run' });
    expect(found.results.map((element) => element.qualified_name)).toEqual([
      'FunctionRunner.run',
      'runLater',
      'run_tool',
      'FunctionRunner',
    ]);
  });

  it('filters lookups by type and language and includes code on request', async () => {
    const found = await docs.docsLookup({ elementType: 'function', language: 'python', includeCode: true });
    expect(found.results).toHaveLength(1);
    expect((found.results[0] as { code?: string }).code).toBe('def run_tool(x):\n    """Runs a tool."""\n    return x');
  });

  it('suggests documenting exported code, filling empty sections and fixing unknown references', async () => {
    const found = await docs.docsSuggestions();
    expect(found.suggestions.map((suggestion) => `${suggestion.type}:${suggestion.target}`)).toEqual([
      'missing_docs:undocumented',
      'missing_docs:runLater',
      'empty_section:docs/guide/caching.md#empty',
      'missing_docs:FunctionRunner.run',
      'unknown_reference:GhostThing',
    ]);
    expect(found.total).toBe(5);
  });

  it('limits suggestions to maxSuggestions', async () => {
    const found = await docs.docsSuggestions({ maxSuggestions: 2 });
    expect([found.suggestions.length, found.total]).toEqual([2, 5]);
  });
});
