import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { backends } from '../../support/backends.js';
import { eventually } from '../../support/eventually.js';
import { spawnHttpWorker, type SpawnedHttpWorker } from '../../support/worker-under-test.js';

/** A mod placed by hand in MODS_DIR: one open function that sleeps, to be in flight when SIGTERM comes. */
async function writeSlowMod(modsDir: string): Promise<void> {
  const directory = join(modsDir, 'drain-mod');
  await mkdir(directory, { recursive: true });
  await writeFile(
    join(directory, 'tb-mod.json'),
    JSON.stringify({
      name: 'drain-mod',
      version: '1.0.0',
      entry: 'index.js',
      dependencies: [],
      toolbox_version: '>=0.1.0 <1',
    }),
  );
  await writeFile(
    join(directory, 'index.js'),
    `export class DrainMod {
  static modName = 'drain';
  static exports = { openSlow: { api: true, apiMethods: ['GET'] } };
  async openSlow(ms) {
    await new Promise((resolve) => setTimeout(resolve, Number(ms)));
    return 'slept ' + ms;
  }
}
`,
  );
}

/** One raw HTTP/1.1 exchange on a socket: writes `head`, resolves with everything received until the server closes. */
function rawConnection(baseUrl: string): Promise<{ socket: Socket; received: Promise<string> }> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => {
      let data = '';
      socket.on('data', (chunk: Buffer) => (data += chunk.toString()));
      const received = new Promise<string>((done) => socket.once('close', () => done(data)));
      resolve({ socket, received });
    });
    socket.once('error', reject);
  });
}

async function refusesConnections(baseUrl: string): Promise<boolean> {
  try {
    await fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(500) });
    return false;
  } catch (error) {
    return /ECONNREFUSED/.test(String((error as { cause?: unknown }).cause ?? error));
  }
}

describe.each(backends())('HTTP worker drain on SIGTERM, as a separate process ($name)', (backend) => {
  let workspace: string;
  let dispose: () => Promise<void>;
  let env: Record<string, string>;
  const workers: SpawnedHttpWorker[] = [];

  beforeAll(async () => {
    workspace = await mkdtemp(join(tmpdir(), 'tb-drain-'));
    await writeSlowMod(join(workspace, 'mods'));
    const provisioned = await backend.provision();
    dispose = provisioned.dispose;
    env = { DATA_DIR: workspace, MODS_DIR: join(workspace, 'mods'), ...provisioned.env };
  });
  afterAll(async () => {
    for (const worker of workers) worker.kill();
    await dispose?.();
    await rm(workspace, { recursive: true, force: true });
  });

  it('finishes the in-flight request, answers /health 503, refuses new connections, exits 0', async () => {
    const worker = await spawnHttpWorker({ ...env, DRAIN_TIMEOUT_SECONDS: '15' }, ['--worker-id', 'drainer']);
    workers.push(worker);
    expect(await (await fetch(`${worker.baseUrl}/health`)).json()).toMatchObject({
      status: 'healthy',
      worker_id: 'drainer',
    });

    const inFlight = fetch(`${worker.baseUrl}/api/drain/openSlow?ms=2000`).then(async (response) => ({
      status: response.status,
      body: (await response.json()) as { result: { data: unknown } },
    }));
    // A connection already open when the signal comes, its request begun (so it is not idle).
    const late = await rawConnection(worker.baseUrl);
    late.socket.write('GET /health HTTP/1.1\r\nHost: worker\r\n');
    await eventually(
      async () => (await (await fetch(`${worker.baseUrl}/metrics`)).json()) as { in_flight: number },
      (metrics) => metrics.in_flight >= 2,
    );

    const signalledAt = Date.now();
    process.kill(worker.pid, 'SIGTERM');
    expect(
      await eventually(
        () => refusesConnections(worker.baseUrl),
        (refused) => refused,
        5000,
      ),
    ).toBe(true);

    late.socket.write('\r\n');
    const lateAnswer = await late.received;
    expect(lateAnswer).toMatch(/^HTTP\/1\.1 503 /);
    expect(lateAnswer).toMatch(/\r\nConnection: close\r\n/i);
    expect(lateAnswer).toContain('"status":"draining"');

    expect(await inFlight).toEqual({
      status: 200,
      body: expect.objectContaining({ result: expect.objectContaining({ data: 'slept 2000' }) }),
    });
    const exit = await worker.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalledAt).toBeLessThan(15_000);
    expect(worker.output()).toContain('drained, exiting');
  });

  it('closes the connection after a /health answer, so a warm-up through nginx leaves no idle connection behind', async () => {
    const worker = await spawnHttpWorker({ ...env, DRAIN_TIMEOUT_SECONDS: '15' });
    workers.push(worker);
    // What nginx sends on an upstream keep-alive connection: HTTP/1.1, no Connection header.
    const probe = await rawConnection(worker.baseUrl);
    probe.socket.write('GET /health HTTP/1.1\r\nHost: worker\r\nX-Forwarded-For: 127.0.0.1\r\n\r\n');
    const closedByWorker = await Promise.race([
      probe.received,
      new Promise<null>((resolve) => setTimeout(() => resolve(null), 5000)),
    ]);
    probe.socket.destroy();
    expect(closedByWorker).toMatch(/^HTTP\/1\.1 200 /);
    expect(closedByWorker).toMatch(/\r\nConnection: close\r\n/i);
    expect(closedByWorker).toContain('"status":"healthy"');

    process.kill(worker.pid, 'SIGTERM');
    expect(await worker.exited).toEqual({ code: 0, signal: null });
    expect(worker.output()).toContain('drained, exiting');
  });

  it('exits at DRAIN_TIMEOUT_SECONDS when a request outlasts it (exit code 1)', async () => {
    const worker = await spawnHttpWorker({ ...env, DRAIN_TIMEOUT_SECONDS: '1' });
    workers.push(worker);
    const inFlight = fetch(`${worker.baseUrl}/api/drain/openSlow?ms=30000`).then(
      (response) => response.status,
      () => 'cut',
    );
    await eventually(
      async () => (await (await fetch(`${worker.baseUrl}/metrics`)).json()) as { in_flight: number },
      (metrics) => metrics.in_flight >= 2,
    );
    const signalledAt = Date.now();
    process.kill(worker.pid, 'SIGTERM');
    expect(await worker.exited).toEqual({ code: 1, signal: null });
    const took = Date.now() - signalledAt;
    expect(took).toBeGreaterThanOrEqual(900);
    expect(took).toBeLessThan(10_000);
    expect(await inFlight).toBe('cut');
    expect(worker.output()).toContain('drain deadline passed');
  });
});
