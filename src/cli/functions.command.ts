import { loadConfig } from '../config/config.js';
import {
  AppCoreService,
  FunctionRegistryService,
  LOCAL_CALLER,
  Result,
  formatTestTable,
  testRunFailed,
  type FunctionDescription,
} from '../modules/app-core/index.js';
import { ModsLoaderService } from '../modules/mods/index.js';
import { withAppCore } from '../apps/app-core.app-module.js';
import { UsageError } from '../common/errors.js';
import { parseCommandArgs } from './cli-args.js';
import { processIo, reportingDomainErrors, type CommandIo } from './command-io.js';

const USAGE = `usage: tb functions list [--json]
       tb functions run Module.function [--kwargs JSON] [--args JSON] [--json]
       tb functions test [--module M] [--timeout SECONDS] [--json]`;

/** `tb functions list|run|test`: the function registry of the application core, with the installed mods loaded. */
export async function runFunctionsCommand(argv: string[], io: CommandIo = processIo()): Promise<number> {
  const [action, ...rest] = argv;
  const { values, positionals } = parseCommandArgs(rest, {
    json: { type: 'boolean', default: false },
    kwargs: { type: 'string' },
    args: { type: 'string' },
    module: { type: 'string' },
    timeout: { type: 'string' },
    'data-dir': { type: 'string' },
  });
  if (action !== 'list' && action !== 'run' && action !== 'test') throw new UsageError(USAGE);
  const config = loadConfig(io.env, { dataDir: values['data-dir'] });
  const timeoutSeconds = values.timeout === undefined ? undefined : Number(values.timeout);
  if (timeoutSeconds !== undefined && !(timeoutSeconds > 0))
    throw new UsageError(`--timeout must be a positive number of seconds (got "${values.timeout}")`);
  const call = action === 'run' ? parseCall(positionals, values.kwargs, values.args) : undefined;

  return reportingDomainErrors(io, () =>
    withAppCore(
      config,
      async (app) => {
        for (const failure of app.get(ModsLoaderService).report().failed)
          io.err(`warning: mod ${failure.name} not loaded: ${failure.error}`);
        const core = app.get(AppCoreService);
        if (action === 'list') {
          const functions = app.get(FunctionRegistryService).list();
          io.out(values.json ? JSON.stringify(functions) : formatFunctionList(functions));
          return 0;
        }
        if (action === 'run') {
          // The operator at the terminal is the one trusted in-process caller.
          const outcome = await core.aRunFunction(call!.name, {
            args: call!.args,
            kwargs: call!.kwargs,
            caller: LOCAL_CALLER,
          });
          const result = outcome instanceof Result ? outcome : Result.ok(outcome);
          io.out(JSON.stringify(result, null, values.json ? undefined : 2));
          return result.isError() ? 1 : 0;
        }
        const rows = await core.runTests({
          module: values.module,
          timeoutMs: timeoutSeconds === undefined ? undefined : Math.round(timeoutSeconds * 1000),
        });
        io.out(values.json ? JSON.stringify({ failed: testRunFailed(rows), functions: rows }) : formatTestTable(rows));
        return testRunFailed(rows) ? 1 : 0;
        // Mod load failures are printed above as warnings of this command; Nest's logger would repeat them.
      },
      { logger: ['error'] },
    ),
  );
}

function parseCall(positionals: string[], kwargsText: string | undefined, argsText: string | undefined) {
  const [name] = positionals;
  if (!name || positionals.length > 1 || !/^[^.\s]+\.[^\s]+$/.test(name)) throw new UsageError(USAGE);
  const kwargs = kwargsText === undefined ? undefined : parseJson(kwargsText, '--kwargs');
  if (kwargs !== undefined && (kwargs === null || typeof kwargs !== 'object' || Array.isArray(kwargs)))
    throw new UsageError('--kwargs must be a JSON object');
  const args = argsText === undefined ? undefined : parseJson(argsText, '--args');
  if (args !== undefined && !Array.isArray(args)) throw new UsageError('--args must be a JSON array');
  return { name, kwargs: kwargs as Record<string, unknown> | undefined, args: args as unknown[] | undefined };
}

function parseJson(text: string, flag: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${flag} is not valid JSON: ${(error as Error).message}`);
  }
}

function formatFunctionList(functions: FunctionDescription[]): string {
  if (functions.length === 0) return 'no functions registered';
  const rows = functions.map((item) => [
    item.key,
    `(${item.parameters.join(', ')})`,
    item.options.api ? item.http_methods.join('|') : '-',
    String(item.options.level),
    String(item.options.helper ?? ''),
  ]);
  const header = ['FUNCTION', 'PARAMETERS', 'HTTP', 'LEVEL', 'HELP'];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  return [header, ...rows]
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
