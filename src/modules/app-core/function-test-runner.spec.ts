import { Export, Mod } from './export.decorator.js';
import { FunctionRegistry } from './function-registry.js';
import { FunctionRunner } from './function-runner.js';
import { formatTestTable, runFunctionTests, testCallsFor, testRunFailed } from './function-test-runner.js';

const silent = { log: () => undefined, error: () => undefined };
let abortedBySignal = false;

@Mod('T')
class TestedMod {
  @Export({ samples: [{ args: [1, 2] }, { kwargs: { first: 3 } }] })
  add(first: number, second = 0) {
    return first + second;
  }

  @Export({ samples: { value: 'x' } })
  failing(value: string) {
    throw new Error(`bad ${value}`);
  }

  @Export({ samples: [{}] })
  async slow(signal?: AbortSignal) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    abortedBySignal = signal?.aborted ?? false;
    return 'late';
  }

  @Export()
  typed(name: string, count: number, flag: boolean) {
    return `${name}${count}${flag}`;
  }

  @Export({
    schema: { type: 'object', properties: { query: { type: 'string' }, limit: { type: 'integer', default: 5 } } },
  })
  searched({ query, limit }: { query: string; limit: number }) {
    return { query, limit };
  }

  @Export({ test: false })
  skipped() {
    throw new Error('never called');
  }

  @Export({ exitF: true })
  shutdown() {
    throw new Error('never called by tests');
  }
}

@Mod('Admin')
class AdminMod {
  @Export({ level: -1, samples: [{}] })
  rotateKeys() {
    return 'rotated';
  }
}

describe('function test run', () => {
  const registry = new FunctionRegistry({ appId: 'test', logger: silent });
  registry.registerInstance(new TestedMod());
  const runner = new FunctionRunner(registry, { dataDir: '/nonexistent', logger: silent });

  it('uses samples as calls, plain objects as kwargs', () => {
    expect(testCallsFor(registry.get('T.failing')!)).toEqual([{ kwargs: { value: 'x' } }]);
  });

  it('generates calls from the parameter types', () => {
    expect(testCallsFor(registry.get('T.typed')!)).toEqual([{ args: ['test', 1, true] }]);
  });

  it('generates calls from the schema, preferring defaults', () => {
    expect(testCallsFor(registry.get('T.searched')!)).toEqual([{ kwargs: { query: 'test', limit: 5 } }]);
  });

  it('counts ok calls, errors and timeouts per function and skips test: false and exit functions', async () => {
    const rows = await runFunctionTests(registry, runner, { timeoutMs: 100 });
    const summary = Object.fromEntries(
      rows.map((row) => [row.function, [row.calls, row.ok, row.errors, row.timeouts]]),
    );
    expect(summary).toEqual({
      add: [2, 2, 0, 0],
      failing: [1, 0, 1, 0],
      slow: [1, 0, 0, 1],
      typed: [1, 1, 0, 0],
      searched: [1, 1, 0, 0],
    });
  });

  it('aborts the signal of a function that runs past its budget', async () => {
    await runFunctionTests(registry, runner, { timeoutMs: 50, module: 'T' });
    await new Promise((resolve) => setTimeout(resolve, 350));
    expect(abortedBySignal).toBe(true);
  });

  it('reports parameter coverage and the failure message', async () => {
    const rows = await runFunctionTests(registry, runner, { timeoutMs: 100 });
    expect(rows.find((row) => row.function === 'add')!.coverage).toBe(1);
    expect(rows.find((row) => row.function === 'failing')!.failures[0].message).toBe('InternalError -2: bad x');
    expect(testRunFailed(rows)).toBe(true);
  });

  it('formats a table with a totals line', async () => {
    const rows = await runFunctionTests(registry, runner, { timeoutMs: 100, module: 'T' });
    const table = formatTestTable(rows).split('\n');
    expect(table[0]).toMatch(/^module\s+function\s+calls\s+ok\s+errors\s+timeouts\s+coverage$/);
    expect(table.at(-1)).toMatch(/^total\s+5 functions\s+6\s+4\s+1\s+1$/);
  });

  it('runs functions of every level as the local caller (the test run is in process)', async () => {
    const adminRegistry = new FunctionRegistry({ appId: 'test', logger: silent });
    adminRegistry.registerInstance(new AdminMod());
    const rows = await runFunctionTests(
      adminRegistry,
      new FunctionRunner(adminRegistry, { dataDir: '/nonexistent', logger: silent }),
    );
    expect(rows.map((row) => [row.function, row.ok, row.failures])).toEqual([['rotateKeys', 1, []]]);
  });
});
