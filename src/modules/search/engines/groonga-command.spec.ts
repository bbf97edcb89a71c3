import {
  commandValue,
  groongaCommand,
  parseSelectResult,
  queryPhrase,
  scriptString,
  selectResult,
} from './groonga-command.js';

describe('groonga-command', () => {
  it('quotes a script string, escaping quotes and backslashes', () => {
    expect(scriptString('a"b\\c')).toBe('"a\\"b\\\\c"');
  });

  it('quotes a query phrase so operators are plain characters', () => {
    expect(queryPhrase('x OR -y "z" \\')).toBe('"x OR -y \\"z\\" \\\\"');
  });

  it('quotes a command value, escaping single quotes and backslashes', () => {
    expect(commandValue(`it's --limit 1 \\`)).toBe(`'it\\'s --limit 1 \\\\'`);
  });

  it('escapes each layer in turn: a phrase inside a script string inside a command value', () => {
    const value = commandValue(`query("c", ${scriptString(queryPhrase(`a"'\\`))})`);
    expect(value).toBe(`'query("c", "\\\\"a\\\\\\\\\\\\"\\'\\\\\\\\\\\\\\\\\\\\"")'`);
  });

  it('refuses control characters, which would end the command line', () => {
    expect(() => scriptString('a\nb')).toThrow('control characters');
    expect(() => commandValue('a\u0000')).toThrow('control characters');
  });

  it('refuses an option name that is not a plain name', () => {
    expect(() => groongaCommand('select', [['limit 1 --cache', 'no']])).toThrow('not a Groonga option name');
    expect(groongaCommand('select', [['columns[tier].stage', 'filtered']])).toBe(
      `select --columns[tier].stage 'filtered'`,
    );
  });

  it('reads the hit count and rows of a select answer, as a string or a Buffer', () => {
    const answer = '[[[2],[["package_id","ShortText"]],["a"],["b"]]]';
    expect(parseSelectResult(answer)).toEqual({ total: 2, rows: [['a'], ['b']] });
    expect(parseSelectResult(Buffer.from(answer))).toEqual({ total: 2, rows: [['a'], ['b']] });
    expect(parseSelectResult('[[0,1.5,0.1],[[[1],[["_key","ShortText"]],["k"]]]]')).toEqual({
      total: 1,
      rows: [['k']],
    });
    expect(() => parseSelectResult(null)).toThrow('NULL');
    expect(() => parseSelectResult('[true]')).toThrow('unexpected Groonga select answer');
  });

  it("reads a Groonga server's parsed select body, and refuses anything else", () => {
    expect(selectResult([[[1], [['_key', 'ShortText']], ['k']]])).toEqual({ total: 1, rows: [['k']] });
    expect(() => selectResult([])).toThrow('unexpected Groonga select answer');
    expect(() => selectResult({ total: 1 })).toThrow('unexpected Groonga select answer');
  });
});
