import { lstat, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, normalize, relative, resolve, sep } from 'node:path';
import type { MarkdownSection } from './markdown-parser.js';

/**
 * Resolves a docs-relative path inside `docsRoot`, or explains why not: absolute paths, `..` escapes,
 * NUL bytes, links (anywhere along the path) and non-Markdown files are refused.
 */
export async function resolveDocsPath(
  docsRoot: string,
  filePath: unknown,
): Promise<{ path: string } | { error: string }> {
  if (typeof filePath !== 'string' || filePath.trim() === '') return { error: 'file_path is required' };
  if (filePath.includes('\0')) return { error: 'file_path contains a NUL byte' };
  if (isAbsolute(filePath) || /^[a-zA-Z]:[\\/]/.test(filePath))
    return { error: 'file_path must be relative to the docs root' };
  if (!/\.(md|markdown)$/i.test(filePath)) return { error: 'only Markdown files (.md) can be written' };
  const root = resolve(docsRoot);
  const target = resolve(root, normalize(filePath));
  const inside = relative(root, target);
  if (inside === '' || inside.startsWith(`..${sep}`) || inside === '..' || isAbsolute(inside)) {
    return { error: 'file_path escapes the docs root' };
  }
  // Links could lead out of the root: refuse the target if it is one, and check the nearest real ancestor.
  let realRoot: string;
  try {
    realRoot = await realpath(root);
  } catch {
    realRoot = root;
  }
  try {
    if ((await lstat(target)).isSymbolicLink()) return { error: 'file_path is a link' };
  } catch {
    // the file does not exist yet
  }
  let ancestor = dirname(target);
  for (;;) {
    try {
      const realAncestor = await realpath(ancestor);
      const fromRoot = relative(realRoot, realAncestor);
      if (fromRoot.startsWith('..') || isAbsolute(fromRoot)) return { error: 'file_path escapes the docs root' };
      break;
    } catch {
      const parent = dirname(ancestor);
      if (parent === ancestor) break;
      ancestor = parent;
    }
  }
  return { path: target };
}

/** The header line of a new section (`## Title`); levels outside 1–6 are clamped. */
export function headerLine(title: string, level: number): string {
  const clamped = Math.min(6, Math.max(1, Math.trunc(level) || 2));
  return `${'#'.repeat(clamped)} ${title.replace(/\s*\n\s*/g, ' ').trim()}`;
}

/** Appends a section at the end, or right after the section `after` when given. */
export function addSectionToText(
  text: string,
  title: string,
  content: string,
  level: number,
  after?: MarkdownSection,
): string {
  const block = [headerLine(title, level), '', content.trimEnd()].join('\n').trimEnd();
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  if (!after) {
    const body = text.replace(/\s+$/, '');
    return `${body.length > 0 ? `${body}\n\n` : ''}${block}\n`;
  }
  const insertAt = after.line_end;
  const before = lines.slice(0, insertAt).join('\n').replace(/\s+$/, '');
  const rest = lines.slice(insertAt).join('\n').replace(/^\s+/, '');
  return `${before}\n\n${block}\n${rest.length > 0 ? `\n${rest}` : ''}`.replace(/\n*$/, '\n');
}

/** Replaces a section's title and/or content in place (its header becomes an ATX header). */
export function updateSectionInText(
  text: string,
  section: MarkdownSection,
  changes: { title?: string; content?: string },
): string {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const replacement: string[] = [];
  if (section.level > 0) replacement.push(headerLine(changes.title ?? section.title, section.level), '');
  replacement.push(...(changes.content ?? section.content).trimEnd().split('\n'));
  const next = [...lines.slice(0, section.line_start - 1), ...replacement, ...lines.slice(section.line_end)];
  return tidy(next);
}

/** Removes a section's header and body (sub-sections stay and join the section before). */
export function deleteSectionFromText(text: string, section: MarkdownSection): string {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  return tidy([...lines.slice(0, section.line_start - 1), ...lines.slice(section.line_end)]);
}

function tidy(lines: string[]): string {
  // Only the edges are trimmed: blank lines inside the text (fenced code) are the author's.
  return `${lines.join('\n').replace(/^\n+/, '').replace(/\s+$/, '')}\n`;
}
