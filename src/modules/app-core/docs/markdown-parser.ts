/** A section of a Markdown file: a header and the lines up to the next header. */
export interface MarkdownSection {
  /** `<file path>#<slug>`, unique in the file (`-2`, `-3` … on repeats). */
  id: string;
  file_path: string;
  title: string;
  /** 1–6 for headers; 0 for text before the first header. */
  level: number;
  /** 1-based, inclusive: the header line to the last line of the section. */
  line_start: number;
  line_end: number;
  content: string;
  tags: string[];
}

const ATX = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const SETEXT = /^ {0,3}(=+|-+)[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const TAG = /(?:^|[\s(])#([A-Za-z][\w-]*)/g;
const INLINE_CODE = /`[^`]*`/g;

export function slugify(title: string): string {
  const slug = title
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s-]/gu, '')
    .trim()
    .replace(/\s+/g, '-');
  return slug.length > 0 ? slug : 'section';
}

/** `#tags` in text (outside inline code); header hashes never match because a tag has no space after `#`. */
export function extractTags(text: string): string[] {
  const tags = new Set<string>();
  for (const match of text.replace(INLINE_CODE, ' ').matchAll(TAG)) tags.add(match[1].toLowerCase());
  return [...tags];
}

/**
 * Splits Markdown into sections at ATX (`## Title`) and setext (`Title` over `===`/`---`) headers.
 * Front matter (a leading `---` block) and fenced code blocks are never read as headers or tags;
 * `tags:` in the front matter apply to every section of the file.
 */
export function parseMarkdown(text: string, filePath: string): MarkdownSection[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  let start = 0;
  const fileTags: string[] = [];
  if (lines[0]?.trim() === '---') {
    const end = lines.findIndex((line, index) => index > 0 && (line.trim() === '---' || line.trim() === '...'));
    if (end > 0) {
      fileTags.push(...frontMatterTags(lines.slice(1, end)));
      start = end + 1;
    }
  }

  interface Header {
    line: number; // 0-based index of the first line of the header
    contentStart: number; // first line after the header
    title: string;
    level: number;
  }
  const headers: Header[] = [];
  const inFence: boolean[] = new Array(lines.length).fill(false);
  let fence: { char: string; length: number } | undefined;
  let paragraphStart = -1; // first line of the current paragraph, -1 when none
  for (let index = start; index < lines.length; index++) {
    const line = lines[index];
    if (fence) {
      inFence[index] = true;
      const closing = FENCE.exec(line);
      if (
        closing &&
        closing[1][0] === fence.char &&
        closing[1].length >= fence.length &&
        line.trim() === closing[1].trim()
      )
        fence = undefined;
      continue;
    }
    const opening = FENCE.exec(line);
    if (opening) {
      fence = { char: opening[1][0], length: opening[1].length };
      inFence[index] = true;
      paragraphStart = -1;
      continue;
    }
    const atx = ATX.exec(line);
    if (atx) {
      headers.push({ line: index, contentStart: index + 1, title: (atx[2] ?? '').trim(), level: atx[1].length });
      paragraphStart = -1;
      continue;
    }
    const setext = SETEXT.exec(line);
    if (setext && paragraphStart !== -1) {
      const title = lines
        .slice(paragraphStart, index)
        .map((part) => part.trim())
        .join(' ');
      headers.push({ line: paragraphStart, contentStart: index + 1, title, level: setext[1][0] === '=' ? 1 : 2 });
      paragraphStart = -1;
      continue;
    }
    if (line.trim() === '') paragraphStart = -1;
    else if (
      paragraphStart === -1 &&
      !/^ {0,3}([-*+]|\d+[.)]|>)\s|^ {4}|^\t/.test(line) &&
      !/^ {0,3}([-*_])( *\1){2,} *$/.test(line)
    ) {
      paragraphStart = index;
    }
  }

  const sections: MarkdownSection[] = [];
  const usedIds = new Map<string, number>();
  const makeId = (title: string) => {
    const base = `${filePath}#${slugify(title)}`;
    const seen = usedIds.get(base) ?? 0;
    usedIds.set(base, seen + 1);
    return seen === 0 ? base : `${base}-${seen + 1}`;
  };
  const bodyOf = (from: number, to: number) => {
    const body = lines.slice(from, to);
    const tagText = body.filter((_, offset) => !inFence[from + offset]).join('\n');
    return { content: body.join('\n').trim(), tagText };
  };

  const firstHeader = headers.length > 0 ? headers[0].line : lines.length;
  const preamble = bodyOf(start, firstHeader);
  if (preamble.content.length > 0) {
    const title =
      filePath
        .split('/')
        .pop()
        ?.replace(/\.(md|markdown)$/i, '') ?? filePath;
    sections.push({
      id: makeId(title),
      file_path: filePath,
      title,
      level: 0,
      line_start: start + 1,
      line_end: lastNonBlank(lines, start, firstHeader) + 1,
      content: preamble.content,
      tags: mergeTags(fileTags, extractTags(preamble.tagText)),
    });
  }
  headers.forEach((header, position) => {
    const end = position + 1 < headers.length ? headers[position + 1].line : lines.length;
    const body = bodyOf(header.contentStart, end);
    sections.push({
      id: makeId(header.title),
      file_path: filePath,
      title: header.title,
      level: header.level,
      line_start: header.line + 1,
      line_end: Math.max(header.contentStart, lastNonBlank(lines, header.contentStart, end) + 1),
      content: body.content,
      tags: mergeTags(fileTags, extractTags(`${header.title}\n${body.tagText}`)),
    });
  });
  return sections;
}

function lastNonBlank(lines: string[], from: number, to: number): number {
  for (let index = to - 1; index >= from; index--) if (lines[index].trim() !== '') return index;
  return from - 1;
}

function mergeTags(first: string[], second: string[]): string[] {
  return [...new Set([...first, ...second])];
}

/** `tags: [a, b]`, `tags: a, b` or a `tags:` list of `- a` lines. */
function frontMatterTags(lines: string[]): string[] {
  const tags: string[] = [];
  for (let index = 0; index < lines.length; index++) {
    const match = /^tags\s*:\s*(.*)$/i.exec(lines[index]);
    if (!match) continue;
    const inline = match[1].trim();
    if (inline.length > 0) {
      tags.push(
        ...inline
          .replace(/^\[|\]$/g, '')
          .split(',')
          .map((tag) => tag.trim().replace(/^['"#]+|['"]+$/g, '')),
      );
    } else {
      for (let next = index + 1; next < lines.length && /^\s*-\s+/.test(lines[next]); next++) {
        tags.push(
          lines[next]
            .replace(/^\s*-\s+/, '')
            .trim()
            .replace(/^['"#]+|['"]+$/g, ''),
        );
      }
    }
  }
  return tags.filter((tag) => tag.length > 0).map((tag) => tag.toLowerCase());
}
