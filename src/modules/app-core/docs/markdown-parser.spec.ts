import { extractTags, parseMarkdown, slugify } from './markdown-parser.js';

const sample = [
  '---',
  'title: Guide',
  'tags: [setup, Intro]',
  '# not a header',
  '---',
  'Preamble text.',
  '',
  '# Getting started',
  'Install it. #install',
  '',
  '```bash',
  '# a shell comment, not a header',
  'echo "#notatag"',
  '```',
  '',
  'Setext title',
  '============',
  'Body under setext.',
  '',
  'Second level',
  '------------',
  '',
  '## Closing hashes ##',
  'text',
  '',
  '#hashtag-only line is not a header',
  '## Getting started',
].join('\n');

describe('parseMarkdown', () => {
  const sections = parseMarkdown(sample, 'docs/guide.md');

  it('finds ATX and setext headers with their levels', () => {
    expect(sections.map((section) => [section.title, section.level])).toEqual([
      ['guide', 0],
      ['Getting started', 1],
      ['Setext title', 1],
      ['Second level', 2],
      ['Closing hashes', 2],
      ['Getting started', 2],
    ]);
  });

  it('skips the front matter', () => {
    expect(sections[0]).toMatchObject({ content: 'Preamble text.', line_start: 6 });
  });

  it('does not read headers or tags inside fenced code', () => {
    const started = sections.find((section) => section.title === 'Getting started')!;
    expect(started.content).toContain('# a shell comment, not a header');
    expect(started.tags).not.toContain('notatag');
  });

  it('collects #tags of the body and tags of the front matter', () => {
    expect(sections[1].tags.sort()).toEqual(['install', 'intro', 'setup']);
  });

  it('keeps a #tag line as content', () => {
    expect(sections[4].content).toContain('#hashtag-only line');
    expect(sections[4].tags).toContain('hashtag-only');
  });

  it('gives repeated titles distinct ids', () => {
    expect(sections.filter((section) => section.title === 'Getting started').map((section) => section.id)).toEqual([
      'docs/guide.md#getting-started',
      'docs/guide.md#getting-started-2',
    ]);
  });

  it('records 1-based line ranges', () => {
    expect(sections[2]).toMatchObject({ line_start: 16, line_end: 18 });
  });

  it('does not take a thematic break after a blank line as a setext header', () => {
    expect(parseMarkdown('Text\n\n---\n\nMore', 'a.md')).toHaveLength(1);
  });
});

describe('markdown helpers', () => {
  it('slugifies titles', () => {
    expect(slugify('Hello, World: API v2!')).toBe('hello-world-api-v2');
  });

  it('ignores tags inside inline code', () => {
    expect(extractTags('use `#private` fields #real')).toEqual(['real']);
  });
});
