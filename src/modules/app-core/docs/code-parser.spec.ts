import { languageOf, parseCode } from './code-parser.js';

const typescript = `import { x } from './x.js';

/** Adds numbers. */
export function add(a: number, b = '}') {
  const inner = () => { return '{'; };
  return a + Number(b);
}

/**
 * A service.
 */
@Injectable()
export class Service extends Base {
  private readonly cache = new Map<string, { a: number }>();

  /** Runs it. */
  @Export({ name: 'run', samples: [{ kwargs: {} }] })
  async run(input: string): Promise<void> {
    if (input) {
      console.log(\`\${input} } {\`);
    }
  }

  private helper() {
    return /[{]/.test('x');
  }
}

export interface Shape {
  name: string;
  nested: { deep: boolean };
}

export type Id = string | number;

export const double = (value: number): number => value * 2;

function hidden() {}
`;

const python = `class Greeter:
    """Greets people."""

    def hello(self, name: str) -> str:
        """Say hello.

        Twice.
        """
        text = """def not_a_function():"""
        return text

    def _private(self):
        pass


async def fetch(url,
                timeout=3):
    def inner():
        pass
    return url
`;

describe('parseCode (TypeScript)', () => {
  const elements = parseCode(typescript, 'src/a.ts', 'typescript');
  const byName = (name: string) => elements.find((element) => element.qualified_name === name)!;

  it('finds classes, functions, methods, interfaces and type aliases', () => {
    expect(elements.map((element) => `${element.element_type}:${element.qualified_name}`)).toEqual([
      'function:add',
      'class:Service',
      'method:Service.run',
      'method:Service.helper',
      'interface:Shape',
      'type:Id',
      'function:double',
      'function:hidden',
    ]);
  });

  it('attaches doc comments across decorators', () => {
    expect([byName('add').docstring, byName('Service').docstring, byName('Service.run').docstring]).toEqual([
      'Adds numbers.',
      'A service.',
      'Runs it.',
    ]);
  });

  it('ends elements at their closing brace despite braces in strings', () => {
    expect([byName('add').line_start, byName('add').line_end]).toEqual([4, 7]);
    expect([byName('Service.run').line_start, byName('Service.run').line_end]).toEqual([18, 22]);
    expect(byName('Service').line_end).toBe(27);
  });

  it('records signatures without the body', () => {
    expect(byName('Service.run').signature).toBe('async run(input: string): Promise<void>');
    expect(byName('Id').signature).toBe('export type Id = string | number');
  });

  it('marks exported elements and private methods', () => {
    expect([
      byName('add').exported,
      byName('hidden').exported,
      byName('Service.run').exported,
      byName('Service.helper').exported,
    ]).toEqual([true, false, true, false]);
  });
});

describe('parseCode (Python)', () => {
  const elements = parseCode(python, 'tool.py', 'python');

  it('finds classes, methods and top-level functions but not nested ones', () => {
    expect(elements.map((element) => `${element.element_type}:${element.qualified_name}`)).toEqual([
      'class:Greeter',
      'method:Greeter.hello',
      'method:Greeter._private',
      'function:fetch',
    ]);
  });

  it('reads docstrings and multi-line signatures', () => {
    expect(elements[1].docstring).toBe('Say hello.\n\nTwice.');
    expect(elements[3].signature).toBe('async def fetch(url, timeout=3)');
  });

  it('computes line ranges by indentation', () => {
    expect([elements[1].line_start, elements[1].line_end, elements[3].line_end]).toEqual([4, 10, 20]);
  });

  it('treats a leading underscore as private', () => {
    expect(elements[2].exported).toBe(false);
  });
});

describe('languageOf', () => {
  it('recognises languages and skips declaration files', () => {
    expect([
      languageOf('a.ts'),
      languageOf('a.mjs'),
      languageOf('a.py'),
      languageOf('a.d.ts'),
      languageOf('a.md'),
    ]).toEqual(['typescript', 'javascript', 'python', undefined, undefined]);
  });
});
