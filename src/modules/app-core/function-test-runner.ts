import { LOCAL_CALLER } from './caller.js';
import type { SampleCall } from './export.decorator.js';
import type { FunctionEntry } from './function-entry.js';
import type { FunctionRegistry } from './function-registry.js';
import type { FunctionRunner } from './function-runner.js';
import { Result } from './result.js';

/** Budget of one test call: cancelled and counted as a timeout after 15 seconds. */
export const DEFAULT_TEST_TIMEOUT_MS = 15_000;

export interface FunctionTestRow {
  module: string;
  function: string;
  calls: number;
  ok: number;
  errors: number;
  timeouts: number;
  /** Share of the declared parameters given a value by at least one call, 0–1 (1 without parameters). */
  coverage: number;
  failures: Array<{ call: SampleCall; message: string }>;
}

export interface FunctionTestOptions {
  /** Only this module. */
  module?: string;
  /** Budget of one call in milliseconds (default 15 000). */
  timeoutMs?: number;
}

/**
 * The calls a function is tested with: its `samples`, else cases generated from its JSON schema, else
 * from its design-time parameter types, else one call without arguments.
 */
export function testCallsFor(entry: FunctionEntry): SampleCall[] {
  const samples = entry.options.samples;
  if (samples !== null && samples !== undefined) {
    const list = Array.isArray(samples) ? samples : [samples];
    return list.map((sample) => (isSampleCall(sample) ? sample : { kwargs: sample as Record<string, unknown> }));
  }
  const properties = entry.schema?.properties as Record<string, Record<string, unknown>> | undefined;
  if (properties && typeof properties === 'object') {
    const kwargs: Record<string, unknown> = {};
    for (const [name, property] of Object.entries(properties)) kwargs[name] = valueForSchema(property);
    return [{ kwargs }];
  }
  const visible = entry.parameters.filter((name) => name !== 'request' && name !== 'signal');
  if (entry.parameterStyle === 'positional' && entry.parameterTypes && visible.length > 0) {
    return [{ args: entry.parameterTypes.slice(0, visible.length).map(valueForType) }];
  }
  return [{}];
}

function isSampleCall(value: unknown): value is SampleCall {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length > 0 && keys.every((key) => key === 'args' || key === 'kwargs');
}

function valueForSchema(property: Record<string, unknown>): unknown {
  if ('default' in property) return property.default;
  if (Array.isArray(property.examples) && property.examples.length > 0) return property.examples[0];
  if (Array.isArray(property.enum) && property.enum.length > 0) return property.enum[0];
  const type = Array.isArray(property.type) ? property.type[0] : property.type;
  switch (type) {
    case 'string':
      return 'test';
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'object':
      return {};
    default:
      return null;
  }
}

function valueForType(typeName: string): unknown {
  switch (typeName) {
    case 'String':
      return 'test';
    case 'Number':
      return 1;
    case 'Boolean':
      return true;
    case 'Array':
      return [];
    case 'Object':
      return {};
    default:
      return undefined;
  }
}

const TIMED_OUT = Symbol('timed out');

/**
 * Runs every registered function with `test: true` (exit functions excluded) through the runner,
 * one call at a time, each on its own budget. A function that takes a `signal` parameter receives an
 * AbortSignal that fires at the deadline; others are abandoned (a synchronous function that never
 * returns cannot be interrupted in JavaScript).
 */
export async function runFunctionTests(
  registry: FunctionRegistry,
  runner: FunctionRunner,
  options: FunctionTestOptions = {},
): Promise<FunctionTestRow[]> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TEST_TIMEOUT_MS;
  const rows: FunctionTestRow[] = [];
  for (const entry of registry.entries()) {
    if (!entry.options.test || entry.options.exitF) continue;
    if (options.module && entry.module !== options.module) continue;
    const row: FunctionTestRow = {
      module: entry.module,
      function: entry.functionName,
      calls: 0,
      ok: 0,
      errors: 0,
      timeouts: 0,
      coverage: 1,
      failures: [],
    };
    const covered = new Set<string>();
    for (const call of testCallsFor(entry)) {
      row.calls++;
      (call.args ?? []).forEach((_, index) => entry.parameters[index] && covered.add(entry.parameters[index]));
      Object.keys(call.kwargs ?? {}).forEach((name) => covered.add(name));
      const controller = new AbortController();
      const kwargs = entry.parameters.includes('signal') ? { ...call.kwargs, signal: controller.signal } : call.kwargs;
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<typeof TIMED_OUT>((resolve) => {
        timer = setTimeout(() => {
          controller.abort(new Error(`test call exceeded ${timeoutMs} ms`));
          resolve(TIMED_OUT);
        }, timeoutMs);
      });
      const outcome = await Promise.race([
        runner.aRunFunction(entry.key, { args: call.args, kwargs, caller: LOCAL_CALLER }),
        deadline,
      ]);
      clearTimeout(timer);
      if (outcome === TIMED_OUT) {
        row.timeouts++;
        row.failures.push({ call, message: `timed out after ${timeoutMs} ms` });
      } else if (outcome instanceof Result && outcome.isError()) {
        row.errors++;
        row.failures.push({ call, message: `${outcome.error} ${outcome.info.exec_code}: ${outcome.info.help_text}` });
      } else {
        row.ok++;
      }
    }
    const visible = entry.parameters.filter((name) => name !== 'request' && name !== 'signal');
    row.coverage = visible.length === 0 ? 1 : visible.filter((name) => covered.has(name)).length / visible.length;
    rows.push(row);
  }
  return rows;
}

/** A plain-text table of test rows with a totals line. */
export function formatTestTable(rows: readonly FunctionTestRow[]): string {
  const header = ['module', 'function', 'calls', 'ok', 'errors', 'timeouts', 'coverage'];
  const body = rows.map((row) => [
    row.module,
    row.function,
    String(row.calls),
    String(row.ok),
    String(row.errors),
    String(row.timeouts),
    `${Math.round(row.coverage * 100)}%`,
  ]);
  const total = (key: 'calls' | 'ok' | 'errors' | 'timeouts') => String(rows.reduce((sum, row) => sum + row[key], 0));
  body.push(['total', `${rows.length} functions`, total('calls'), total('ok'), total('errors'), total('timeouts'), '']);
  const widths = header.map((title, column) => Math.max(title.length, ...body.map((line) => line[column].length)));
  const format = (line: string[]) =>
    line
      .map((cell, column) => (column >= 2 ? cell.padStart(widths[column]) : cell.padEnd(widths[column])))
      .join('  ')
      .trimEnd();
  return [
    format(header),
    widths.map((width) => '-'.repeat(width)).join('  '),
    ...body.slice(0, -1).map(format),
    widths.map((width) => '-'.repeat(width)).join('  '),
    format(body[body.length - 1]),
  ].join('\n');
}

/** Whether a test run failed (any error or timeout); the command exits non-zero then. */
export function testRunFailed(rows: readonly FunctionTestRow[]): boolean {
  return rows.some((row) => row.errors > 0 || row.timeouts > 0);
}
