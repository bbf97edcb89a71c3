/**
 * Reads parameter names from a function's source text (`fn.toString()`), because TypeScript keeps no
 * parameter names at run time. Handles defaults, rest parameters, comments, strings and a single
 * destructured object parameter (`method({ query, maxResults = 25 })`), which makes the function take
 * its keyword arguments as one object.
 */
export interface ParameterSignature {
  /** Positional names, or the keys of the destructured object when `style` is `object`. */
  names: string[];
  style: 'positional' | 'object';
  /** A rest parameter (`...rest`) or an object rest (`{ a, ...others }`) accepts any extra keyword. */
  acceptsAny: boolean;
}

export function parseParameterSignature(fn: (...args: any[]) => unknown): ParameterSignature {
  const source = Function.prototype.toString.call(fn);
  const list = extractParameterList(source);
  if (list === undefined) return { names: [], style: 'positional', acceptsAny: false };
  const parameters = splitTopLevel(list)
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
  if (parameters.length === 1 && parameters[0].startsWith('{')) {
    const pattern = parameters[0];
    const inner = pattern.slice(1, matchingClose(pattern, 0));
    const keys = splitTopLevel(inner)
      .map((part) => part.trim())
      .filter((part) => part.length > 0);
    const names: string[] = [];
    let acceptsAny = false;
    for (const key of keys) {
      if (key.startsWith('...')) acceptsAny = true;
      else names.push(stripQuotes(key.split(/[:=]/)[0].trim()));
    }
    return { names, style: 'object', acceptsAny };
  }
  const names: string[] = [];
  let acceptsAny = false;
  for (const parameter of parameters) {
    if (parameter.startsWith('...')) {
      acceptsAny = true;
      continue;
    }
    const name = parameter.split('=')[0].trim();
    // A destructured positional parameter has no name a caller could use; keep its place.
    names.push(/^[\w$]+$/.test(name) ? name : `arg${names.length}`);
  }
  return { names, style: 'positional', acceptsAny };
}

/** Removes comments (keeping strings intact) so they cannot confuse the bracket matching. */
function stripComments(source: string): string {
  let output = '';
  for (let index = 0; index < source.length; index++) {
    const char = source[index];
    if (char === '/' && source[index + 1] === '/') {
      while (index < source.length && source[index] !== '\n') index++;
      output += '\n';
    } else if (char === '/' && source[index + 1] === '*') {
      index = source.indexOf('*/', index + 2);
      if (index === -1) break;
      index++;
      output += ' ';
    } else if (char === '"' || char === "'" || char === '`') {
      const end = skipString(source, index);
      output += source.slice(index, end + 1);
      index = end;
    } else {
      output += char;
    }
  }
  return output;
}

function skipString(source: string, start: number): number {
  const quote = source[start];
  for (let index = start + 1; index < source.length; index++) {
    if (source[index] === '\\') index++;
    else if (source[index] === quote) return index;
  }
  return source.length - 1;
}

function matchingClose(source: string, openIndex: number): number {
  let depth = 0;
  for (let index = openIndex; index < source.length; index++) {
    const char = source[index];
    if (char === '"' || char === "'" || char === '`') index = skipString(source, index);
    else if (char === '(' || char === '[' || char === '{') depth++;
    else if (char === ')' || char === ']' || char === '}') {
      depth--;
      if (depth === 0) return index;
    }
  }
  return source.length;
}

function extractParameterList(rawSource: string): string | undefined {
  const source = stripComments(rawSource);
  // A bare arrow function with one parameter: `x => …`.
  const bareArrow = /^\s*(?:async\s+)?([\w$]+)\s*=>/.exec(source);
  if (bareArrow) return bareArrow[1];
  let open = -1;
  for (let index = 0; index < source.length; index++) {
    const char = source[index];
    if (char === '"' || char === "'" || char === '`') index = skipString(source, index);
    else if (char === '[')
      index = matchingClose(source, index); // computed method names
    else if (char === '(') {
      open = index;
      break;
    }
  }
  if (open === -1) return undefined;
  return source.slice(open + 1, matchingClose(source, open));
}

function splitTopLevel(list: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let index = 0; index < list.length; index++) {
    const char = list[index];
    if (char === '"' || char === "'" || char === '`') index = skipString(list, index);
    else if (char === '(' || char === '[' || char === '{') depth++;
    else if (char === ')' || char === ']' || char === '}') depth--;
    else if (char === '<' && depth >= 0) continue;
    else if (char === ',' && depth === 0) {
      parts.push(list.slice(start, index));
      start = index + 1;
    }
  }
  parts.push(list.slice(start));
  return parts;
}

function stripQuotes(name: string): string {
  return name.replace(/^['"]|['"]$/g, '');
}
