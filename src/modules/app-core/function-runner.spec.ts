import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Export, Mod } from './export.decorator.js';
import { FunctionRegistry } from './function-registry.js';
import { FunctionRunner } from './function-runner.js';
import { Result } from './result.js';
import { LOCAL_CALLER, anonymousCaller, currentCaller, type Caller } from './caller.js';

const silent = { log: () => undefined, error: () => undefined };

let memoryCalls = 0;
let fileCalls = 0;

@Mod('Calc')
class CalcMod {
  factor = 10;

  @Export()
  add(first: number, second = 1) {
    return first + second;
  }

  @Export()
  async slowAdd(first: number, second: number) {
    await new Promise((resolve) => setTimeout(resolve, 1));
    return first + second;
  }

  @Export()
  fail() {
    throw new Error('boom');
  }

  @Export()
  async failLater() {
    throw new Error('late boom');
  }

  @Export()
  custom() {
    return Result.text('already a result');
  }

  @Export({ row: true })
  raw() {
    return { raw: true };
  }

  @Export({ preCompute: (args, kwargs) => ({ args: args.map((value) => Number(value) * 2), kwargs }) })
  doubledInput(value: number) {
    return value;
  }

  @Export({ postCompute: (result: Result) => Result.ok(`${result.get()}!`) })
  shout() {
    return 'hey';
  }

  @Export({ level: 1 })
  members() {
    return 'members only';
  }

  @Export({ level: -1 })
  admins() {
    return 'admins only';
  }

  @Export({ restrictInVirtualMode: true })
  touchDisk() {
    return 'touched';
  }

  @Export({ memoryCache: true, memoryCacheMaxSize: 2, memoryCacheTtl: 60 })
  memo(value: number) {
    memoryCalls++;
    return { value, call: memoryCalls };
  }

  @Export({ memoryCache: true, memoryCacheTtl: 0.05 })
  shortLived(value: number) {
    memoryCalls++;
    return { value, call: memoryCalls };
  }

  @Export({ fileCache: true })
  persisted(value: number) {
    fileCalls++;
    return { value, call: fileCalls };
  }

  @Export({ requestAsKwarg: true })
  whoAsks(request?: { user: string }) {
    return request?.user ?? 'nobody';
  }

  @Export()
  scaled(value: number) {
    return value * (this?.factor ?? 1);
  }

  @Export({ state: true })
  alwaysScaled(value: number) {
    return value * this.factor;
  }

  @Export()
  options({ query, limit = 3 }: { query?: string; limit?: number } = {}) {
    return { query, limit };
  }
}

@Mod('Nested')
class NestedMod {
  constructor(private readonly app: FunctionRunner) {}

  /** Calls the admin-only function the way a JavaScript mod does: without options. */
  @Export()
  async callAdmins() {
    const seen = currentCaller()?.transport;
    await new Promise((resolve) => setTimeout(resolve, 1));
    const inner = await this.app.aRunFunction('Calc.admins', undefined as never);
    return { seen, exec_code: inner.info.exec_code, data: inner.get() };
  }
}

/** What a function schedules and what it runs as another caller, seen from inside (the context is entered per run). */
@Mod('Scheduling')
class SchedulingMod {
  /** Settles with what the timer the last `later` call scheduled saw. */
  scheduled: Promise<{ seen: Caller | undefined; exec_code: number }> | undefined;

  constructor(private readonly app: FunctionRunner) {}

  /** Synchronous: returns at once; its timer calls the admin-only function without a caller. */
  @Export()
  later() {
    this.scheduled = new Promise((resolve) =>
      setTimeout(() => {
        const inner = this.app.runFunction('Calc.admins', undefined as never) as Result;
        resolve({ seen: currentCaller(), exec_code: inner.info.exec_code });
      }, 1),
    );
    return 'scheduled';
  }

  /** Runs `whoAmI` as `caller`, then reports who it runs as itself. */
  @Export({ level: -1 })
  asOther(caller: Caller) {
    const inner = (this.app.runFunction('Scheduling.whoAmI', { caller }) as Result).get() as Record<string, unknown>;
    return { inner, after: currentCaller() };
  }

  /** Who runs it, and what its nested admin-only call without a caller gets. */
  @Export()
  whoAmI() {
    const nested = this.app.runFunction('Calc.admins', undefined as never) as Result;
    return { seen: currentCaller(), exec_code: nested.info.exec_code };
  }

  @Export()
  throws() {
    throw new Error('thrown inside');
  }
}

enum Functions {
  add = 'Calc.add',
}

describe('FunctionRunner', () => {
  let dataDir: string;
  let registry: FunctionRegistry;
  let runner: FunctionRunner;

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'runner-'));
    registry = new FunctionRegistry({ appId: 'main', logger: silent });
    registry.registerInstance(new CalcMod());
    runner = new FunctionRunner(registry, { dataDir, logger: silent });
  });

  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('runs a sync function synchronously and wraps its value in Result.ok', () => {
    const result = runner.runFunction(['Calc', 'add'], { args: [1, 2], caller: LOCAL_CALLER }) as Result;
    expect(result).toBeInstanceOf(Result);
    expect([result.error, result.get()]).toEqual(['none', 3]);
  });

  it('accepts Module.function strings and enum members', () => {
    expect((runner.runFunction(Functions.add, { args: [4], caller: LOCAL_CALLER }) as Result).get()).toBe(5);
  });

  it('maps kwargs onto parameter names', () => {
    expect(
      (runner.runFunction('Calc.add', { kwargs: { second: 5, first: 1 }, caller: LOCAL_CALLER }) as Result).get(),
    ).toBe(6);
  });

  it('answers an unknown keyword with an InputError', () => {
    const result = runner.runFunction('Calc.add', { kwargs: { third: 1 }, caller: LOCAL_CALLER }) as Result;
    expect([result.error, result.info.exec_code]).toEqual(['InputError', -3]);
    expect(result.info.help_text).toContain("unexpected keyword argument 'third'");
  });

  it('answers an unknown function with InputError 404 function not found', () => {
    const result = runner.runFunction('Calc.nothing', { caller: LOCAL_CALLER }) as Result;
    expect([result.error, result.info.exec_code, result.info.help_text, result.result.data_info]).toEqual([
      'InputError',
      404,
      'function not found',
      'Calc.nothing',
    ]);
  });

  it('turns an exception into InternalError -2 carrying the message', () => {
    const result = runner.runFunction('Calc.fail', { caller: LOCAL_CALLER }) as Result;
    expect([result.error, result.info.exec_code, result.info.help_text]).toEqual(['InternalError', -2, 'boom']);
  });

  it('turns a rejected promise into InternalError -2', async () => {
    const result = await runner.aRunFunction('Calc.failLater', { caller: LOCAL_CALLER });
    expect([result.error, result.info.exec_code, result.info.help_text]).toEqual(['InternalError', -2, 'late boom']);
  });

  it('awaits async functions in aRunFunction', async () => {
    expect((await runner.aRunFunction('Calc.slowAdd', { args: [2, 3], caller: LOCAL_CALLER })).get()).toBe(5);
  });

  it('passes a returned Result through unchanged', () => {
    expect((runner.runFunction('Calc.custom', { caller: LOCAL_CALLER }) as Result).result.data_type).toBe('text');
  });

  it('returns the raw value of a row function', () => {
    expect(runner.runFunction('Calc.raw', { caller: LOCAL_CALLER })).toEqual({ raw: true });
  });

  it('lets preCompute rewrite the arguments', () => {
    expect((runner.runFunction('Calc.doubledInput', { args: [4], caller: LOCAL_CALLER }) as Result).get()).toBe(8);
  });

  it('lets postCompute rewrite the result', () => {
    expect((runner.runFunction('Calc.shout', { caller: LOCAL_CALLER }) as Result).get()).toBe('hey!');
  });

  const member: Caller = { level: 1, userId: 'u-1', transport: 'http' };
  const trusted: Caller = { level: 2, userId: 'u-2', transport: 'mcp' };
  const admin: Caller = { level: -1, userId: 'u-0', transport: 'rpc' };

  it('refuses a caller below the required level with InputError 403', () => {
    const result = runner.runFunction('Calc.members', { caller: anonymousCaller('http') }) as Result;
    expect([result.error, result.info.exec_code]).toEqual(['InputError', 403]);
  });

  it('lets a caller at the required level through', () => {
    expect((runner.runFunction('Calc.members', { caller: member }) as Result).get()).toBe('members only');
  });

  it('ranks admin (-1) above trusted callers', () => {
    expect((runner.runFunction('Calc.admins', { caller: trusted }) as Result).info.exec_code).toBe(403);
    expect((runner.runFunction('Calc.admins', { caller: admin }) as Result).get()).toBe('admins only');
  });

  it('refuses a call without a caller with exec_code 403 instead of trusting it', () => {
    const result = runner.runFunction('Calc.admins', undefined as never) as Result;
    expect([result.error, result.info.exec_code, result.info.help_text]).toEqual([
      'InputError',
      403,
      'refused: no caller given',
    ]);
  });

  it('refuses options without a caller even for a level-0 function', () => {
    const result = runner.runFunction('Calc.add', { args: [1] } as never) as Result;
    expect([result.info.exec_code, result.isError()]).toEqual([403, true]);
  });

  it('refuses a caller whose level is not a platform level', () => {
    const result = runner.runFunction('Calc.add', {
      args: [1],
      caller: { level: 7, userId: null, transport: 'http' },
    }) as Result;
    expect(result.info.exec_code).toBe(403);
  });

  it('refuses a caller without a transport', () => {
    const result = runner.runFunction('Calc.add', {
      args: [1],
      caller: { level: -1, userId: null } as never,
    }) as Result;
    expect(result.info.help_text).toBe('refused: caller has no transport');
  });

  it('checks a caller object again on every call, so one changed after a good call is refused', () => {
    const caller: Caller = { level: 1, userId: 'u1', transport: 'http' };
    expect((runner.runFunction('Calc.add', { args: [1], caller }) as Result).isError()).toBe(false);
    (caller as { level: number }).level = 7;
    const result = runner.runFunction('Calc.add', { args: [1], caller }) as Result;
    expect(result.info.help_text).toBe('refused: caller level 7 is not one of -1, 0, 1, 2');
  });

  it('trusts an explicit local caller in process', () => {
    expect((runner.runFunction('Calc.admins', { caller: LOCAL_CALLER }) as Result).get()).toBe('admins only');
  });

  it('checks the level of every transport other than exactly local', () => {
    const result = runner.runFunction('Calc.admins', {
      caller: { level: 0, userId: null, transport: 'Local' },
    }) as Result;
    expect(result.info.exec_code).toBe(403);
  });

  it('runs a nested call without a caller as the caller of the running function', async () => {
    const nested = new NestedMod(runner);
    registry.registerInstance(nested);
    const anonymous = await runner.aRunFunction('Nested.callAdmins', { caller: anonymousCaller('ws') });
    const asAdmin = await runner.aRunFunction('Nested.callAdmins', { caller: admin });
    expect([anonymous.get('exec_code'), anonymous.get('seen'), asAdmin.get('data')]).toEqual([
      403,
      'ws',
      'admins only',
    ]);
  });

  it('runs what a synchronous function schedules as its caller, after the run has returned', async () => {
    const scheduling = new SchedulingMod(runner);
    registry.registerInstance(scheduling);
    const anonymous = anonymousCaller('http');
    expect((runner.runFunction('Scheduling.later', { caller: anonymous }) as Result).get()).toBe('scheduled');
    expect(currentCaller()).toBeUndefined();
    const asAnonymous = await scheduling.scheduled;
    runner.runFunction('Scheduling.later', { caller: admin });
    const asAdmin = await scheduling.scheduled;
    expect([asAnonymous, asAdmin]).toEqual([
      { seen: anonymous, exec_code: 403 },
      { seen: admin, exec_code: 0 },
    ]);
  });

  it('runs a function called as another user inside an admin function as that user only', () => {
    registry.registerInstance(new SchedulingMod(runner));
    const result = runner.runFunction('Scheduling.asOther', { args: [member], caller: admin }) as Result;
    expect(result.get()).toEqual({ inner: { seen: member, exec_code: 403 }, after: admin });
    expect(currentCaller()).toBeUndefined();
  });

  it('leaves no caller behind after a function that throws, nor after a refused call', () => {
    registry.registerInstance(new SchedulingMod(runner));
    expect((runner.runFunction('Scheduling.throws', { caller: member }) as Result).error).toBe('InternalError');
    expect(currentCaller()).toBeUndefined();
    expect((runner.runFunction('Calc.admins', { caller: member }) as Result).info.exec_code).toBe(403);
    expect(currentCaller()).toBeUndefined();
  });

  it('has no current caller outside a run', () => {
    expect(currentCaller()).toBeUndefined();
  });

  it('refuses restrictInVirtualMode functions in virtual mode only', () => {
    const virtualRunner = new FunctionRunner(registry, { dataDir, virtualMode: true, logger: silent });
    expect((virtualRunner.runFunction('Calc.touchDisk', { caller: LOCAL_CALLER }) as Result).info.exec_code).toBe(403);
    expect((runner.runFunction('Calc.touchDisk', { caller: LOCAL_CALLER }) as Result).get()).toBe('touched');
  });

  it('serves repeated calls with equal arguments from the memory cache', () => {
    const first = (runner.runFunction('Calc.memo', { kwargs: { value: 1 }, caller: LOCAL_CALLER }) as Result).get(
      'call',
    );
    const second = (runner.runFunction('Calc.memo', { args: [1], caller: LOCAL_CALLER }) as Result).get('call');
    expect(second).toBe(first);
  });

  it('keeps at most memoryCacheMaxSize entries per function', () => {
    for (const value of [1, 2, 3]) runner.runFunction('Calc.memo', { args: [value], caller: LOCAL_CALLER });
    expect(runner.memoryCache.size('Calc.memo')).toBe(2);
  });

  it('expires memory cache entries after memoryCacheTtl seconds', async () => {
    const first = (runner.runFunction('Calc.shortLived', { args: [7], caller: LOCAL_CALLER }) as Result).get('call');
    const cached = (runner.runFunction('Calc.shortLived', { args: [7], caller: LOCAL_CALLER }) as Result).get('call');
    await new Promise((resolve) => setTimeout(resolve, 80));
    const expired = (runner.runFunction('Calc.shortLived', { args: [7], caller: LOCAL_CALLER }) as Result).get('call');
    expect([cached, expired === first]).toEqual([first, false]);
  });

  it('persists file-cached results under the data directory across runners', async () => {
    const first = await runner.aRunFunction('Calc.persisted', { args: [3], caller: LOCAL_CALLER });
    const restarted = new FunctionRunner(registry, { dataDir, logger: silent });
    const second = await restarted.aRunFunction('Calc.persisted', { args: [3], caller: LOCAL_CALLER });
    expect(second.get('call')).toBe(first.get('call'));
    expect(await readdir(join(dataDir, 'cache', 'functions', 'Calc', 'persisted'))).toHaveLength(1);
  });

  it('does not cache errors', async () => {
    const result = runner.runFunction('Calc.memo', { kwargs: { wrong: 1 }, caller: LOCAL_CALLER }) as Result;
    expect(result.isError()).toBe(true);
    expect(runner.memoryCache.size('Calc.memo')).toBe(0);
  });

  it('passes the request to requestAsKwarg functions', () => {
    expect(
      (runner.runFunction('Calc.whoAsks', { request: { user: 'ada' }, caller: LOCAL_CALLER }) as Result).get(),
    ).toBe('ada');
  });

  it('calls on the mod instance with state and without it when withState is false', () => {
    expect((runner.runFunction('Calc.scaled', { args: [2], caller: LOCAL_CALLER }) as Result).get()).toBe(20);
    expect(
      (runner.runFunction('Calc.scaled', { args: [2], withState: false, caller: LOCAL_CALLER }) as Result).get(),
    ).toBe(2);
  });

  it('keeps the instance for state: true functions even when withState is false', () => {
    expect(
      (runner.runFunction('Calc.alwaysScaled', { args: [2], withState: false, caller: LOCAL_CALLER }) as Result).get(),
    ).toBe(20);
  });

  it('gives kwargs to a function taking one options object', () => {
    expect(
      (runner.runFunction('Calc.options', { kwargs: { query: 'q' }, caller: LOCAL_CALLER }) as Result).get(),
    ).toEqual({ query: 'q', limit: 3 });
  });

  it('refuses an unknown specification', () => {
    expect(
      (runner.runFunction('Calc.add', { args: [1], specification: 'other', caller: LOCAL_CALLER }) as Result).error,
    ).toBe('InputError');
  });

  it('returns bare data from runAny and the Result with getResults', async () => {
    expect(runner.runAny('Calc.add', { args: [1, 1], caller: LOCAL_CALLER })).toBe(2);
    expect(await runner.aRunAny(['Calc', 'slowAdd'], { args: [1, 1], caller: LOCAL_CALLER })).toBe(2);
    expect(runner.runAny('Calc.raw', { getResults: true, caller: LOCAL_CALLER })).toBeInstanceOf(Result);
  });
});
