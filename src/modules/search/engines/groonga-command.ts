/**
 * Building Groonga commands from untrusted values, for MariaDB's `mroonga_command()` (docs/search.md,
 * "MariaDB Mroonga: ranking inside Groonga"). Three nested syntaxes, each escaped on its own:
 * query syntax (the text of `query()`), script syntax (string literals of `--filter` and dynamic
 * columns) and the command line (each option value).
 */

/** Control characters would end a command line; no value the search engine builds holds one. */
const CONTROL = /[\p{Cc}\u2028\u2029]/u;

function assertNoControl(value: string): string {
  if (CONTROL.test(value)) throw new Error('a Groonga command value may not hold control characters');
  return value;
}

/** A script syntax string literal: `"…"` with `"` and `\` escaped by a backslash. */
export function scriptString(value: string): string {
  return `"${assertNoControl(value).replace(/["\\]/g, '\\$&')}"`;
}

/** A query syntax phrase: every character literal (operators, `OR`, `*`, parentheses, `column:`). */
export function queryPhrase(value: string): string {
  return `"${assertNoControl(value).replace(/["\\]/g, '\\$&')}"`;
}

/** One option value on the command line: single-quoted, `'` and `\` escaped by a backslash. */
export function commandValue(value: string): string {
  return `'${assertNoControl(value).replace(/['\\]/g, '\\$&')}'`;
}

/** `select --table T --filter '…' …`: option names are ours, every value goes through commandValue. */
export function groongaCommand(name: string, options: ReadonlyArray<readonly [string, string | number]>): string {
  return [
    name,
    ...options.map(([option, value]) => {
      if (!/^[a-z_]+(\[[a-z_]+\]\.[a-z_]+)?$/.test(option)) throw new Error(`not a Groonga option name: ${option}`);
      return `--${option} ${commandValue(String(value))}`;
    }),
  ].join(' ');
}

/** The body of a `select` answer: `[[n_hits], [[column, type]…], row…]` inside `[[status…], [body]]` or bare. */
export interface GroongaSelectResult {
  total: number;
  rows: unknown[][];
}

/** mroonga_command() is a binary string function: the driver hands its UTF-8 JSON over as a Buffer. */
export function parseSelectResult(answer: string | Buffer | null): GroongaSelectResult {
  if (answer === null) throw new Error('mroonga_command answered NULL (see the MariaDB warnings)');
  const output = Buffer.isBuffer(answer) ? answer.toString('utf8') : answer;
  return selectResult(JSON.parse(output));
}

/** The hit count and rows of a parsed select answer (a Groonga server's body, or mroonga_command()'s JSON). */
export function selectResult(parsed: unknown): GroongaSelectResult {
  // Command version 1 without a header: [[[n_hits], columns, rows…]]; with one: [[status…], [[…]]].
  const body = Array.isArray(parsed) && isStatus(parsed[0]) ? parsed[1] : parsed;
  const result = Array.isArray(body) ? body[0] : undefined;
  if (!Array.isArray(result) || !Array.isArray(result[0]) || typeof result[0][0] !== 'number')
    throw new Error(`unexpected Groonga select answer: ${JSON.stringify(parsed).slice(0, 200)}`);
  return { total: result[0][0], rows: result.slice(2) as unknown[][] };
}

function isStatus(value: unknown): boolean {
  return Array.isArray(value) && typeof value[0] === 'number' && typeof value[1] === 'number' && value.length >= 3;
}
