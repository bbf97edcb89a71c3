/** A named element of source code. */
export interface CodeElement {
  /** `<file path>:<qualified name>:<line>`. */
  id: string;
  name: string;
  /** `Class.method` for methods, the name otherwise. */
  qualified_name: string;
  element_type: 'class' | 'function' | 'method' | 'interface' | 'type';
  language: 'typescript' | 'javascript' | 'python';
  file_path: string;
  /** 1-based, inclusive. */
  line_start: number;
  line_end: number;
  signature: string;
  docstring: string;
  parent: string | null;
  /** Exported (TS/JS) or public by naming convention (Python: no leading underscore). */
  exported: boolean;
}

export type SourceLanguage = CodeElement['language'];

export function languageOf(filePath: string): SourceLanguage | undefined {
  if (/\.(ts|tsx|mts|cts)$/.test(filePath) && !filePath.endsWith('.d.ts')) return 'typescript';
  if (/\.(js|jsx|mjs|cjs)$/.test(filePath)) return 'javascript';
  if (filePath.endsWith('.py')) return 'python';
  return undefined;
}

export function parseCode(text: string, filePath: string, language: SourceLanguage): CodeElement[] {
  return language === 'python' ? parsePython(text, filePath) : parseScript(text, filePath, language);
}

/**
 * Replaces the inside of strings, template literals, regular expression literals and comments with
 * spaces (keeping offsets and newlines), so braces and keywords in them are never read as code.
 * Block comments starting with `/**` are returned by their end offset, to attach doc comments.
 */
/** Keywords after which a `/` starts a regular expression rather than a division. */
const REGEX_KEYWORDS = /(?:^|[^\w$])(?:return|typeof|case|do|else|in|of|new|delete|void|throw|yield|await)\s*$/;

export function maskScript(text: string): { masked: string; docComments: Map<number, string> } {
  const output = text.split('');
  const docComments = new Map<number, string>();
  const blank = (from: number, to: number) => {
    for (let index = from; index < to; index++) if (output[index] !== '\n') output[index] = ' ';
  };
  let previousSignificant = '';
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    const next = text[index + 1];
    if (char === '/' && next === '/') {
      const end = text.indexOf('\n', index);
      const stop = end === -1 ? text.length : end;
      blank(index, stop);
      index = stop - 1;
    } else if (char === '/' && next === '*') {
      const end = text.indexOf('*/', index + 2);
      const stop = end === -1 ? text.length : end + 2;
      if (text[index + 2] === '*' && text[index + 3] !== '/')
        docComments.set(lineOfOffset(text, stop - 1), cleanDocComment(text.slice(index, stop)));
      blank(index, stop);
      index = stop - 1;
    } else if (char === '"' || char === "'" || char === '`') {
      let end = index + 1;
      while (end < text.length && text[end] !== char) {
        if (text[end] === '\\') end++;
        else if (char !== '`' && text[end] === '\n') break;
        end++;
      }
      blank(index + 1, end);
      index = end;
      previousSignificant = char;
    } else if (
      char === '/' &&
      (/[=(,:[!&|?{};]|^$/.test(previousSignificant) || REGEX_KEYWORDS.test(text.slice(Math.max(0, index - 12), index)))
    ) {
      // A regular expression literal can only follow an operator or an opening bracket.
      let end = index + 1;
      let inClass = false;
      while (end < text.length && text[end] !== '\n' && (inClass || text[end] !== '/')) {
        if (text[end] === '\\') end++;
        else if (text[end] === '[') inClass = true;
        else if (text[end] === ']') inClass = false;
        end++;
      }
      if (text[end] === '/') {
        blank(index + 1, end);
        index = end;
      }
      previousSignificant = '/';
    } else if (!/\s/.test(char)) {
      previousSignificant = char;
    }
  }
  return { masked: output.join(''), docComments };
}

function lineOfOffset(text: string, offset: number): number {
  let line = 0;
  for (let index = 0; index < offset && index < text.length; index++) if (text[index] === '\n') line++;
  return line;
}

function cleanDocComment(comment: string): string {
  return comment
    .replace(/^\/\*\*/, '')
    .replace(/\*\/$/, '')
    .split('\n')
    .map((line) => line.replace(/^\s*\* ?/, '').trimEnd())
    .join('\n')
    .trim();
}

const MODIFIERS =
  '(?:(?:public|private|protected|static|async|readonly|override|abstract|declare|get|set|accessor)\\s+)*';
const CLASS_LINE = /^\s*(export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?class\s+([A-Za-z_$][\w$]*)/;
const FUNCTION_LINE = /^\s*(export\s+)?(?:default\s+)?(?:declare\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)/;
const ARROW_LINE =
  /^\s*(export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*(?:async\s+)?(?:\([^)]*\)|[A-Za-z_$][\w$]*|\()\s*(?::[^=]*)?=>?/;
const INTERFACE_LINE = /^\s*(export\s+)?(?:declare\s+)?interface\s+([A-Za-z_$][\w$]*)/;
const TYPE_LINE = /^\s*(export\s+)?(?:declare\s+)?type\s+([A-Za-z_$][\w$]*)\s*(?:<[^=]*>)?\s*=/;
const METHOD_LINE = new RegExp(`^\\s*${MODIFIERS}\\*?\\s*(#?[A-Za-z_$][\\w$]*)\\s*[?!]?\\s*(?:<[^(]*>)?\\s*\\(`);
const NOT_METHODS = new Set([
  'if',
  'for',
  'while',
  'switch',
  'catch',
  'return',
  'function',
  'new',
  'await',
  'typeof',
  'super',
  'this',
  'else',
  'do',
  'yield',
  'throw',
  'delete',
  'void',
]);

function parseScript(text: string, filePath: string, language: 'typescript' | 'javascript'): CodeElement[] {
  const { masked, docComments } = maskScript(text.replace(/\r\n?/g, '\n'));
  const maskedLines = masked.split('\n');
  const lineOffsets: number[] = [];
  let offset = 0;
  for (const line of maskedLines) {
    lineOffsets.push(offset);
    offset += line.length + 1;
  }
  const elements: CodeElement[] = [];
  // Depth of braces at the start of each line, and the class whose body a depth belongs to.
  const classBodies: Array<{ name: string; depth: number; endLine: number }> = [];
  let depth = 0;
  let docLine = -1; // line on which the last doc comment ended
  let pendingDoc = '';
  for (let lineIndex = 0; lineIndex < maskedLines.length; lineIndex++) {
    const line = maskedLines[lineIndex];
    while (classBodies.length > 0 && lineIndex > classBodies[classBodies.length - 1].endLine) classBodies.pop();
    if (docComments.has(lineIndex)) {
      pendingDoc = docComments.get(lineIndex)!;
      docLine = lineIndex;
    }
    const trimmed = line.trim();
    const enclosingClass = classBodies[classBodies.length - 1];
    let match: RegExpExecArray | null = null;
    let elementType: CodeElement['element_type'] | undefined;
    let exported = false;
    let name = '';
    if (trimmed.length > 0 && !trimmed.startsWith('@')) {
      if (enclosingClass && depth === enclosingClass.depth + 1) {
        match = METHOD_LINE.exec(line);
        if (match && !NOT_METHODS.has(match[1])) {
          elementType = 'method';
          name = match[1];
          exported = !name.startsWith('#') && !/^\s*(private|protected)\s/.test(line);
        }
      } else if (depth === 0 || !enclosingClass) {
        for (const [pattern, type] of [
          [CLASS_LINE, 'class'],
          [FUNCTION_LINE, 'function'],
          [INTERFACE_LINE, 'interface'],
          [TYPE_LINE, 'type'],
          [ARROW_LINE, 'function'],
        ] as const) {
          match = pattern.exec(line);
          if (match && (depth === 0 || type !== 'function' || pattern === FUNCTION_LINE)) {
            elementType = type;
            name = match[2];
            exported = Boolean(match[1]);
            break;
          }
        }
        if (depth > 0 && elementType !== undefined && elementType !== 'class' && elementType !== 'function')
          elementType = undefined;
        if (depth > 0 && elementType === 'function') elementType = undefined; // nested helpers are not API
        if (depth > 0 && elementType === 'class') elementType = undefined;
      }
    }
    if (elementType !== undefined) {
      const startOffset = lineOffsets[lineIndex];
      const { endOffset, bodyOffset } = findElementEnd(masked, startOffset);
      const endLine = lineOfOffsetFromTable(lineOffsets, endOffset);
      const signatureEnd = bodyOffset ?? endOffset + 1;
      const signature = text
        .replace(/\r\n?/g, '\n')
        .slice(startOffset, signatureEnd)
        .replace(/\s+/g, ' ')
        .replace(/[\s{;=]+$/, '')
        .trim();
      const docstring = docLine >= 0 && onlyDecoratorsBetween(maskedLines, docLine, lineIndex) ? pendingDoc : '';
      const parent = elementType === 'method' ? enclosingClass!.name : null;
      const qualifiedName = parent ? `${parent}.${name}` : name;
      elements.push({
        id: `${filePath}:${qualifiedName}:${lineIndex + 1}`,
        name,
        qualified_name: qualifiedName,
        element_type: elementType,
        language,
        file_path: filePath,
        line_start: lineIndex + 1,
        line_end: endLine + 1,
        signature: signature.length > 300 ? `${signature.slice(0, 297)}...` : signature,
        docstring,
        parent,
        exported: elementType === 'method' ? exported && Boolean(classExported(elements, parent)) : exported,
      });
      if (elementType === 'class' && bodyOffset !== undefined) {
        classBodies.push({ name, depth, endLine });
      }
      pendingDoc = '';
      docLine = -1;
    } else if (trimmed.length > 0 && !trimmed.startsWith('@') && !docComments.has(lineIndex) && docLine !== lineIndex) {
      pendingDoc = '';
      docLine = -1;
    }
    for (const char of line) {
      if (char === '{') depth++;
      else if (char === '}') depth = Math.max(0, depth - 1);
    }
  }
  return elements;
}

function classExported(elements: CodeElement[], parent: string | null): boolean {
  if (!parent) return false;
  for (let index = elements.length - 1; index >= 0; index--) {
    if (elements[index].element_type === 'class' && elements[index].name === parent) return elements[index].exported;
  }
  return false;
}

function onlyDecoratorsBetween(lines: string[], docLine: number, declarationLine: number): boolean {
  let decoratorDepth = 0;
  for (let index = docLine + 1; index < declarationLine; index++) {
    const trimmed = lines[index].trim();
    if (trimmed === '') continue;
    if (trimmed.startsWith('@') || decoratorDepth > 0) {
      for (const char of trimmed) {
        if (char === '(' || char === '{' || char === '[') decoratorDepth++;
        else if (char === ')' || char === '}' || char === ']') decoratorDepth--;
      }
      continue;
    }
    return false;
  }
  return true;
}

function lineOfOffsetFromTable(lineOffsets: number[], offset: number): number {
  let low = 0;
  let high = lineOffsets.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (lineOffsets[middle] <= offset) low = middle;
    else high = middle - 1;
  }
  return low;
}

/**
 * From a declaration's first character: the end is the brace closing the first `{` opened at
 * bracket depth 0 (a body), or a `;` at depth 0, or the end of a line at depth 0 that does not
 * continue on the next line.
 */
function findElementEnd(masked: string, start: number): { endOffset: number; bodyOffset: number | undefined } {
  let depth = 0;
  let bodyOffset: number | undefined;
  let sawArrow = false;
  // Type arguments in the head (`Promise<{ a: 1 }>`) hold braces that are not the body.
  let angle = 0;
  for (let index = start; index < masked.length; index++) {
    const char = masked[index];
    if (char === '=' && masked[index + 1] === '>') sawArrow = true;
    if (bodyOffset === undefined && char === '<' && masked[index + 1] !== '=') angle++;
    else if (bodyOffset === undefined && char === '>' && angle > 0 && masked[index - 1] !== '=') angle--;
    if (char === '(' || char === '[' || char === '{') {
      if (char === '{' && depth === 0 && angle === 0 && bodyOffset === undefined) bodyOffset = index;
      depth++;
    } else if (char === ')' || char === ']' || char === '}') {
      depth--;
      if (depth === 0 && char === '}' && bodyOffset !== undefined) {
        // `const x = () => { … };` and `type X = { … } & Y;` may go on after the brace.
        const rest = /^[ \t]*([;,)]|[&|]|$)/m.exec(masked.slice(index + 1));
        if (!rest || rest[1] === '' || rest[1] === ';' || rest[1] === ',' || rest[1] === ')')
          return { endOffset: index, bodyOffset };
      }
      if (depth < 0) return { endOffset: index, bodyOffset };
    } else if (char === ';' && depth === 0) {
      return { endOffset: index, bodyOffset };
    } else if (char === '\n' && depth === 0 && index > start) {
      const before = masked.slice(start, index).trimEnd();
      const after = masked.slice(index + 1).match(/^\s*(\S)/)?.[1] ?? '';
      const continues =
        angle > 0 ||
        /[=|&,(:<>+\-*/?.]$/.test(before) ||
        /^[|&.?:=)>]/.test(after) ||
        (sawArrow && bodyOffset === undefined && /=>$/.test(before));
      if (!continues && bodyOffset === undefined && before.length > 0 && !/^\s*$/.test(before)) {
        // A declaration head without body yet (`class X extends Y` with `{` on the next line).
        if (after === '{') continue;
        return { endOffset: index - 1, bodyOffset };
      }
    }
  }
  return { endOffset: masked.length - 1, bodyOffset };
}

const PYTHON_DEF = /^(\s*)(async\s+)?def\s+([A-Za-z_]\w*)\s*\(/;
const PYTHON_CLASS = /^(\s*)class\s+([A-Za-z_]\w*)/;

function parsePython(text: string, filePath: string): CodeElement[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  // Lines inside triple-quoted strings are not code.
  const inString: boolean[] = new Array(lines.length).fill(false);
  let quote: string | undefined;
  lines.forEach((line, index) => {
    if (quote) inString[index] = true;
    let position = 0;
    for (;;) {
      const triple = quote ? line.indexOf(quote, position) : line.search(/"""|'''/);
      if (triple === -1 || triple < position) break;
      if (!quote) {
        quote = line.slice(triple, triple + 3);
        position = triple + 3;
      } else {
        quote = undefined;
        position = triple + 3;
      }
    }
  });
  const indentOf = (line: string) => line.length - line.trimStart().length;
  const elements: CodeElement[] = [];
  const scopes: Array<{ name: string; indent: number; kind: 'class' | 'def' }> = [];
  for (let index = 0; index < lines.length; index++) {
    if (inString[index]) continue;
    const line = lines[index];
    if (line.trim() === '' || line.trim().startsWith('#')) continue;
    const indent = indentOf(line);
    while (scopes.length > 0 && scopes[scopes.length - 1].indent >= indent) scopes.pop();
    const definition = PYTHON_DEF.exec(line);
    const classMatch = definition ? null : PYTHON_CLASS.exec(line);
    if (!definition && !classMatch) continue;
    const name = definition ? definition[3] : classMatch![2];
    const enclosing = scopes[scopes.length - 1];
    // Functions nested in functions are implementation details.
    const nestedInFunction = scopes.some((scope) => scope.kind === 'def');
    scopes.push({ name, indent, kind: definition ? 'def' : 'class' });
    if (nestedInFunction) continue;
    const elementType: CodeElement['element_type'] = classMatch
      ? 'class'
      : enclosing?.kind === 'class'
        ? 'method'
        : 'function';
    // The header ends at the `:` outside brackets.
    let headerEnd = index;
    let depth = 0;
    let header = '';
    for (let lineIndex = index; lineIndex < lines.length; lineIndex++) {
      const part = lines[lineIndex];
      let done = false;
      for (const char of part) {
        if (char === '(' || char === '[' || char === '{') depth++;
        else if (char === ')' || char === ']' || char === '}') depth--;
        else if (char === ':' && depth === 0) done = true;
      }
      header += `${part.trim()} `;
      headerEnd = lineIndex;
      if (done) break;
    }
    let end = headerEnd;
    for (let lineIndex = headerEnd + 1; lineIndex < lines.length; lineIndex++) {
      const part = lines[lineIndex];
      if (part.trim() === '') continue;
      if (!inString[lineIndex] && indentOf(part) <= indent) break;
      end = lineIndex;
    }
    const docstring = pythonDocstring(lines, headerEnd + 1, end);
    const parent = elementType === 'method' ? enclosing!.name : null;
    const qualifiedName = parent ? `${parent}.${name}` : name;
    elements.push({
      id: `${filePath}:${qualifiedName}:${index + 1}`,
      name,
      qualified_name: qualifiedName,
      element_type: elementType,
      language: 'python',
      file_path: filePath,
      line_start: index + 1,
      line_end: end + 1,
      signature: header.trim().replace(/:\s*$/, '').replace(/\s+/g, ' '),
      docstring,
      parent,
      exported: !name.startsWith('_') || (name.startsWith('__') && name.endsWith('__')),
    });
  }
  return elements;
}

function pythonDocstring(lines: string[], from: number, to: number): string {
  for (let index = from; index <= to && index < lines.length; index++) {
    const trimmed = lines[index].trim();
    if (trimmed === '') continue;
    const opening = /^[rRuU]?("""|''')/.exec(trimmed);
    if (!opening) return '';
    const quote = opening[1];
    const rest = trimmed.slice(opening[0].length);
    if (rest.includes(quote)) return rest.slice(0, rest.indexOf(quote)).trim();
    const collected = [rest];
    for (let next = index + 1; next <= to && next < lines.length; next++) {
      const line = lines[next];
      if (line.includes(quote)) {
        collected.push(line.slice(0, line.indexOf(quote)));
        break;
      }
      collected.push(line);
    }
    return dedent(collected).trim();
  }
  return '';
}

function dedent(lines: string[]): string {
  const indents = lines
    .slice(1)
    .filter((line) => line.trim() !== '')
    .map((line) => line.length - line.trimStart().length);
  const common = indents.length > 0 ? Math.min(...indents) : 0;
  return [lines[0], ...lines.slice(1).map((line) => line.slice(common))].join('\n');
}
