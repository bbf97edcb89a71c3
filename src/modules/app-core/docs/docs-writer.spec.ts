import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addSectionToText, deleteSectionFromText, resolveDocsPath, updateSectionInText } from './docs-writer.js';
import { parseMarkdown } from './markdown-parser.js';

describe('resolveDocsPath', () => {
  let root: string;
  let outside: string;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'docs-root-'));
    outside = await mkdtemp(join(tmpdir(), 'docs-outside-'));
    await symlink(outside, join(root, 'escape'));
  });

  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
  });

  it('resolves a relative Markdown path inside the root', async () => {
    expect(await resolveDocsPath(root, 'guide/intro.md')).toEqual({ path: join(root, 'guide', 'intro.md') });
  });

  it('refuses parent-directory escapes', async () => {
    expect(await resolveDocsPath(root, '../evil.md')).toEqual({ error: 'file_path escapes the docs root' });
    expect(await resolveDocsPath(root, 'a/../../evil.md')).toEqual({ error: 'file_path escapes the docs root' });
  });

  it('refuses absolute paths', async () => {
    expect(await resolveDocsPath(root, '/etc/passwd.md')).toEqual({
      error: 'file_path must be relative to the docs root',
    });
  });

  it('refuses paths through a link leading outside', async () => {
    expect(await resolveDocsPath(root, 'escape/evil.md')).toEqual({ error: 'file_path escapes the docs root' });
  });

  it('refuses files that are not Markdown', async () => {
    await mkdir(join(root, 'sub'), { recursive: true });
    expect('error' in (await resolveDocsPath(root, 'sub/script.sh'))).toBe(true);
  });
});

describe('section edits', () => {
  const text = '# Title\n\nIntro.\n\n## First\n\nOne.\n\n## Second\n\nTwo.\n';
  const sections = parseMarkdown(text, 'a.md');
  const first = sections.find((section) => section.title === 'First')!;

  it('appends a section at the end', () => {
    expect(addSectionToText(text, 'Third', 'Three.', 2)).toBe(`${text}\n## Third\n\nThree.\n`);
  });

  it('inserts a section after another one', () => {
    const updated = addSectionToText(text, 'Between', 'Middle.', 2, first);
    expect(parseMarkdown(updated, 'a.md').map((section) => section.title)).toEqual([
      'Title',
      'First',
      'Between',
      'Second',
    ]);
  });

  it('replaces the content of a section and keeps the others', () => {
    const updated = updateSectionInText(text, first, { content: 'Uno.' });
    expect(parseMarkdown(updated, 'a.md').map((section) => section.content)).toEqual(['Intro.', 'Uno.', 'Two.']);
  });

  it('renames a section', () => {
    expect(updateSectionInText(text, first, { title: 'Renamed' })).toContain('## Renamed\n\nOne.');
  });

  it('deletes a section with its body', () => {
    const updated = deleteSectionFromText(text, first);
    expect(parseMarkdown(updated, 'a.md').map((section) => section.title)).toEqual(['Title', 'Second']);
  });
});
