import type { ChildHandle } from '../../supervisor/index.js';
import { WorkerManager, type WorkerManagerEvent, type WorkerSpec } from './worker-manager.js';

class FakeChild implements ChildHandle {
  static nextPid = 1000;
  readonly pid = FakeChild.nextPid++;
  readonly sent: unknown[] = [];
  alive = true;
  private messageListener: (message: unknown) => void = () => undefined;
  private exitListener: (code: number | null, signal: string | null) => void = () => undefined;
  send(message: unknown): boolean {
    this.sent.push(message);
    return this.alive;
  }
  kill(signal: 'SIGTERM' | 'SIGKILL' | 'SIGINT'): void {
    if (!this.alive) return;
    this.alive = false;
    queueMicrotask(() => this.exitListener(null, signal));
  }
  onMessage(listener: (message: unknown) => void): void {
    this.messageListener = listener;
  }
  onExit(listener: (code: number | null, signal: string | null) => void): void {
    this.exitListener = listener;
  }
  emitMessage(message: unknown): void {
    this.messageListener(message);
  }
}

const until = async (check: () => boolean, timeoutMs = 3000) => {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

function setup(healthy: (spec: WorkerSpec, child: FakeChild | undefined) => boolean, maxRestarts = 5) {
  const children = new Map<string, FakeChild[]>();
  const events: WorkerManagerEvent[] = [];
  const latest = (id: string) => children.get(id)?.at(-1);
  const manager = new WorkerManager({
    launch: (spec) => {
      const child = new FakeChild();
      children.set(spec.id, [...(children.get(spec.id) ?? []), child]);
      return child;
    },
    probe: async (spec) => ({ ok: healthy(spec, latest(spec.id)), latencyMs: 1, error: 'HTTP 503' }),
    healthIntervalMs: 10,
    restartDelayMs: 5,
    maxRestarts,
    readyTimeoutMs: 2000,
    stopDeadlineMs: 100,
    onEvent: (event) => events.push(event),
  });
  return { manager, children, events, latest };
}

describe('WorkerManager', () => {
  it('restarts a worker after 3 failed probes in a row, same id and port', async () => {
    let sick = false;
    const { manager, children, latest } = setup(() => !sick);
    await manager.startWorker({ id: 'http_00000001', type: 'http', port: 8000 });
    manager.startHealthChecks();
    const first = latest('http_00000001')!;
    sick = true;
    await until(() => !first.alive);
    sick = false;
    await until(() => manager.get('http_00000001')!.state === 'running' && children.get('http_00000001')!.length === 2);
    expect(manager.get('http_00000001')).toMatchObject({ port: 8000, restart_count: 1, healthy: true });
    expect(manager.get('http_00000001')!.last_error).toMatch(/^3 failed health checks/);
    expect(manager.get('http_00000001')!.pid).toBe(latest('http_00000001')!.pid);
    await manager.stop();
  });

  it('marks a worker failed after maxRestarts, and worker-stop + worker-start recovers it', async () => {
    let crash = true;
    const { manager, latest, events } = setup((_spec, child) => !crash && child!.alive, 2);
    void manager.startWorker({ id: 'http_00000002', type: 'http', port: 8001 }).catch(() => undefined);
    const crashLoop = setInterval(() => latest('http_00000002')?.kill('SIGKILL'), 2);
    await until(() => manager.get('http_00000002')!.state === 'failed');
    clearInterval(crashLoop);
    expect(manager.get('http_00000002')!.restart_count).toBe(2);
    expect(events.some((event) => event.type === 'worker-failed')).toBe(true);
    crash = false;
    await manager.stopWorker('http_00000002');
    expect(manager.get('http_00000002')!.state).toBe('stopped');
    await manager.startWorker({ id: 'http_00000002', type: 'http', port: 8001 });
    expect(manager.get('http_00000002')).toMatchObject({ state: 'running', restart_count: 0 });
    await manager.stop();
  });

  it('relays broker messages from one worker to every other, never back to the sender', async () => {
    const { manager, latest } = setup(() => true);
    await manager.startWorker({ id: 'http_a', type: 'http', port: 8000 });
    await manager.startWorker({ id: 'http_b', type: 'http', port: 8001 });
    await manager.startWorker({ id: 'ws_c', type: 'ws', port: 8100 });
    const message = { tb: 'bus', channel: 'ws', payload: { broadcast: 'hi' } };
    latest('http_a')!.emitMessage(message);
    latest('http_a')!.emitMessage({ tb: 'other' });
    expect(latest('http_a')!.sent).toEqual([]);
    expect(latest('http_b')!.sent).toEqual([message]);
    expect(latest('ws_c')!.sent).toEqual([message]);
    await manager.stop();
    expect(manager.list().every((worker) => worker.state === 'stopped' && worker.pid === null)).toBe(true);
  });
});
