import { jest } from '@jest/globals';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { backends } from '../../support/backends.js';
import { eventually } from '../../support/eventually.js';
import { startMcp, type McpUnderTest } from '../../support/mcp-under-test.js';

// Every call gets a fresh interpreter; on a busy 2-core machine one takes up to half a minute to load.
jest.setTimeout(240_000);

/** The server's limit (room for a slow machine's page faults), and the shorter one the timed calls ask for. */
const SERVER_TIMEOUT_SECONDS = 20;
const TIMEOUT_SECONDS = 2;

/** Processes whose command line holds `marker`, anywhere on this machine. */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) found.push(Number(entry));
    } catch {
      // ended while we looked
    }
  }
  return found;
}

/** The children of this (the server's) process. */
function childProcesses(): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === process.pid) children.push(Number(entry));
    } catch {
      // ended while we looked
    }
  }
  return children;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Python that tries `attempts` (name → expression) and prints {name: result or the exception's type} as JSON. */
function probe(attempts: Record<string, string>, prelude = ''): string {
  const lines = ['import json', prelude, 'outcomes = {}'];
  for (const [name, expression] of Object.entries(attempts))
    lines.push(
      'try:',
      `    outcomes[${JSON.stringify(name)}] = repr(${expression})`,
      'except BaseException as error:',
      `    outcomes[${JSON.stringify(name)}] = type(error).__name__`,
    );
  lines.push('print(json.dumps(outcomes))');
  return lines.join('\n');
}

describe.each(backends())('python_execute in its sandbox, on $name', (backend) => {
  let mcp: McpUnderTest;
  let executor: string;
  const canary = `canary-${process.pid}-${Date.now()}`;
  let databaseFile: string;

  async function execute(code: string, timeout?: number) {
    const started = Date.now();
    const response = await fetch(`${mcp.baseUrl}/mcp/tools/call`, {
      method: 'POST',
      headers: { authorization: `Bearer ${executor}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'python_execute', arguments: { code, ...(timeout ? { timeout } : {}) } }),
    });
    return { status: response.status, body: (await response.json()) as any, elapsedMs: Date.now() - started };
  }
  const outcomesOf = (answer: { body: any }) => JSON.parse(answer.body.structuredContent.stdout);
  const health = async () => (await fetch(`${mcp.baseUrl}/health`)).status;
  /** Waits until an interpreter is loaded, so a timed call measures the code and not the start-up. */
  const sandboxReady = () =>
    eventually(
      async () => {
        const response = await fetch(`${mcp.baseUrl}/status`, { headers: { authorization: `Bearer ${executor}` } });
        return ((await response.json()) as any).python_sandboxes;
      },
      (sandboxes) => sandboxes?.ready === 1,
      120_000,
    );

  beforeAll(async () => {
    Logger.overrideLogger(false);
    mcp = await startMcp(backend, {
      MCP_PYTHON: 'pyodide',
      MCP_PYTHON_TIMEOUT_SECONDS: String(SERVER_TIMEOUT_SECONDS),
    });
    executor = await mcp.key('executor', ['read', 'execute']);
    // What the probe found readable: the secret, the gateway's admin key and the database, in DATA_DIR.
    await writeFile(join(mcp.workspace, 'jwt-secret'), canary);
    await mkdir(join(mcp.workspace, 'gateway'), { recursive: true });
    await writeFile(join(mcp.workspace, 'gateway', 'config.json'), JSON.stringify({ admin_key: canary }));
    databaseFile =
      mcp.config.database.type === 'sqlite' ? mcp.config.database.location : join(mcp.workspace, 'platform.sqlite');
    if (!existsSync(databaseFile)) await writeFile(databaseFile, canary);
    await sandboxReady(); // the first start precompiles the standard library, then loads the spare
  }, 300_000);

  afterAll(async () => {
    await mcp?.close();
  });

  it("cannot read the server's environment through /proc", async () => {
    expect(readFileSync(`/proc/${process.pid}/environ`, 'utf8')).toContain('PATH='); // what the code would get
    const answer = await execute(
      probe(
        {
          server: `open('/proc/${process.pid}/environ', 'rb').read()`,
          parent: "open('/proc/%d/environ' % os.getppid(), 'rb').read()",
          self: "open('/proc/self/environ', 'rb').read()",
        },
        'import os',
      ),
    );
    expect(answer.status).toBe(200);
    expect(outcomesOf(answer)).toEqual({
      server: 'FileNotFoundError',
      parent: 'FileNotFoundError',
      self: 'FileNotFoundError',
    });
  });

  it('has an environment of its own, none of the server’s variables', async () => {
    const answer = await execute('import json, os\nprint(json.dumps(dict(os.environ)))');
    expect(answer.status).toBe(200);
    const environment = outcomesOf(answer) as Record<string, string>;
    // (LANG=C.UTF-8 may be the server's as well: a value, not a variable taken from it.)
    const shared = Object.entries(environment).filter(
      ([name, value]) => name !== 'LANG' && process.env[name] === value,
    );
    expect(shared).toEqual([]);
  });

  it('cannot read DATA_DIR/jwt-secret, the gateway config or the database file by absolute path', async () => {
    const answer = await execute(
      probe(
        {
          secret: `open(${JSON.stringify(join(mcp.workspace, 'jwt-secret'))}).read()`,
          gateway: `open(${JSON.stringify(join(mcp.workspace, 'gateway', 'config.json'))}).read()`,
          database: `open(${JSON.stringify(databaseFile)}, 'rb').read(16)`,
          listing: `os.listdir(${JSON.stringify(mcp.workspace)})`,
        },
        'import os',
      ),
    );
    expect(answer.status).toBe(200);
    expect(outcomesOf(answer)).toEqual({
      secret: 'FileNotFoundError',
      gateway: 'FileNotFoundError',
      database: 'FileNotFoundError',
      listing: 'FileNotFoundError',
    });
    expect(JSON.stringify(answer.body)).not.toContain(canary);
  });

  it('cannot write into DATA_DIR/mods: a mod written there exists only in the call’s memory', async () => {
    const target = join(mcp.modsDir, 'evil-mod');
    const answer = await execute(
      [
        'import os',
        `os.makedirs(${JSON.stringify(target)}, exist_ok=True)`,
        `open(${JSON.stringify(join(target, 'index.js'))}, 'w').write('export class Evil {}')`,
        `print(sorted(os.listdir(${JSON.stringify(target)})))`,
      ].join('\n'),
    );
    expect([answer.status, answer.body.structuredContent.exit_code]).toEqual([200, 0]);
    expect(answer.body.structuredContent.stdout).toContain("['index.js']");
    expect(existsSync(target)).toBe(false);
  });

  describe('network', () => {
    let server: Server;
    let port: number;
    let connections = 0;

    beforeAll(async () => {
      server = createServer((socket) => {
        connections += 1;
        socket.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as { port: number }).port;
    });

    afterAll(async () => {
      await new Promise((resolve) => server.close(resolve));
    });

    it('opens no connection to a loopback port the server could reach', async () => {
      const answer = await execute(
        probe(
          {
            socket: `socket.create_connection(('127.0.0.1', ${port}), timeout=1).recv(2)`,
            urllib: `urllib.request.urlopen('http://127.0.0.1:${port}/', timeout=1).read()`,
            http: `(lambda c: (c.request('GET', '/'), c.getresponse().read()))(http.client.HTTPConnection('127.0.0.1', ${port}, timeout=1))`,
          },
          'import socket, urllib.request, http.client',
        ),
      );
      expect(answer.status).toBe(200);
      const outcomes = outcomesOf(answer);
      for (const name of ['socket', 'urllib', 'http']) expect(outcomes[name]).not.toContain('ok');
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(connections).toBe(0);
    });
  });

  describe('processes', () => {
    it('starts no process: os.system, subprocess and fork fail, and nothing is left running', async () => {
      const marker = `31.${process.pid}`;
      const answer = await execute(
        probe(
          {
            system: `os.system('sleep ${marker} &')`,
            subprocess: `subprocess.Popen(['sleep', '${marker}'], start_new_session=True).pid`,
            fork: 'os.fork()',
            setsid: 'os.setsid()',
          },
          'import os, subprocess',
        ),
      );
      expect(answer.status).toBe(200);
      const outcomes = outcomesOf(answer);
      expect(outcomes.system).not.toBe('0');
      expect(outcomes.subprocess).toMatch(/Error$/);
      expect(outcomes.fork).toMatch(/Error$/);
      // (setsid is a no-op of the emulated system: there is no process to detach.)
      expect(processesWith(marker)).toEqual([]);
    });

    it('leaves nothing behind: the process that ran the code is gone when the call returns', async () => {
      await sandboxReady();
      const before = childProcesses();
      expect(before.length).toBe(1); // the spare sandbox, its interpreter loaded
      const answer = await execute('print("ran")');
      expect([answer.status, answer.body.structuredContent.stdout]).toEqual([200, 'ran\n']);
      // That spare ran this call and ended with it; the one loading now was started for the next call.
      expect(before.filter(alive)).toEqual([]);
    });
  });

  describe('memory', () => {
    it('ends a Python allocation of 2 GiB with MemoryError and stays healthy', async () => {
      const answer = await execute('chunks = [bytearray(64 * 1024 * 1024) for _ in range(32)]\nprint(len(chunks))');
      expect(answer.status).toBe(200);
      expect(answer.body.structuredContent).toMatchObject({ exit_code: 1, memory_exceeded: false });
      expect(answer.body.structuredContent.stderr).toContain('MemoryError');
      expect(await health()).toBe(200);
      expect((await execute('print(6 * 7)')).body.structuredContent.stdout).toBe('42\n');
    });

    it('stops an allocation of 2 GiB through the JavaScript bridge at the memory limit and stays healthy', async () => {
      const answer = await execute('import js\nbuffer = js.Uint8Array.new(2 ** 31)\nbuffer.fill(1)\nprint("filled")');
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({
        isError: true,
        structuredContent: { memory_exceeded: true, exit_code: null },
      });
      expect(answer.body.content[0].text).toContain('MiB memory limit');
      expect(await health()).toBe(200);
    });
  });

  describe('time', () => {
    it('returns within the timeout plus a second from a busy loop', async () => {
      await sandboxReady();
      const answer = await execute('while True: pass', TIMEOUT_SECONDS);
      expect(answer.body.structuredContent).toMatchObject({ timed_out: true, exit_code: null });
      expect(answer.elapsedMs).toBeLessThan((TIMEOUT_SECONDS + 1) * 1000);
    });

    it('returns within the timeout plus a second when the code leaves something holding its output', async () => {
      await sandboxReady();
      const answer = await execute(
        [
          'import subprocess, sys, time',
          'try:',
          "    subprocess.Popen(['sleep', '30'])",
          'except Exception:',
          '    pass',
          "sys.stdout.write('partial')",
          'sys.stdout.flush()',
          'time.sleep(60)',
        ].join('\n'),
        TIMEOUT_SECONDS,
      );
      expect(answer.body.structuredContent).toMatchObject({ timed_out: true, stdout: 'partial' });
      expect(answer.elapsedMs).toBeLessThan((TIMEOUT_SECONDS + 1) * 1000);
    });
  });

  it('gives each call a fresh interpreter: nothing of one call is visible to the next', async () => {
    const first = await execute(
      "import builtins\nbuiltins.left_over = 'first'\nopen('/tmp/left-over.txt', 'w').write('first')",
    );
    expect(first.body.structuredContent.exit_code).toBe(0);
    const second = await execute(
      probe({ global: 'builtins.left_over', file: "open('/tmp/left-over.txt').read()" }, 'import builtins'),
    );
    expect(outcomesOf(second)).toEqual({ global: 'AttributeError', file: 'FileNotFoundError' });
  });

  it("keeps Node out of reach of pyodide's js bridge", async () => {
    const answer = await execute(
      probe(
        {
          process: 'js.process',
          require: 'js.require',
          globalProcess: 'js.globalThis.process',
          functionConstructor: "js.Object.constructor.new('return process')()",
          eval: "js.eval('process')",
          runJs: "pyodide.code.run_js('process')",
          importHook: "pyodide_js._api.loadBinaryFile('/etc/passwd')",
          loadPackage: "pyodide_js.loadPackage('numpy')",
          fetch: "js.fetch('http://127.0.0.1:1/')",
        },
        'import js, pyodide.code, pyodide_js',
      ),
    );
    expect(answer.status).toBe(200);
    const outcomes = outcomesOf(answer) as Record<string, string>;
    expect(outcomes).toMatchObject({ process: 'AttributeError', require: 'AttributeError', fetch: 'AttributeError' });
    expect(outcomes.functionConstructor).toBe('JsException'); // EvalError: no code from strings in the realm
    expect(outcomes.eval).toBe('JsException');
    expect(outcomes.runJs).toBe('JsException');
    expect(JSON.stringify(outcomes)).not.toContain('root:');
    expect(outcomes.loadPackage).not.toMatch(/Loaded|numpy/);
  });

  it('gives the code an empty stdin', async () => {
    const answer = await execute('input()');
    expect(answer.body.structuredContent).toMatchObject({ exit_code: 1 });
    expect(answer.body.structuredContent.stderr).toContain('EOFError');
  });

  it('answers with the result shape of the tool: stdout, stderr, exit code, timed out, truncated, memory', async () => {
    const answer = await execute('import sys\nprint("out")\nprint("err", file=sys.stderr)\nsys.exit(3)');
    expect(answer.body).toMatchObject({
      isError: true,
      structuredContent: {
        stdout: 'out\n',
        stderr: 'err\n',
        exit_code: 3,
        timed_out: false,
        truncated: false,
        memory_exceeded: false,
      },
    });
    expect(typeof answer.body.structuredContent.duration_ms).toBe('number');
  });

  it('still answers a later call after all that', async () => {
    await eventually(health, (status) => status === 200);
    const answer = await execute('print(sum(range(10)))');
    expect([answer.status, answer.body.structuredContent.stdout]).toEqual([200, '45\n']);
  });
});
