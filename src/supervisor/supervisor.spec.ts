import { RestartBackoff } from './restart-backoff.js';
import {
  Supervisor,
  type ChildHandle,
  type SupervisorClock,
  type SupervisorEvent,
  type SupervisorOptions,
} from './supervisor.js';

/** Timers that fire only when the test advances time. */
class ManualClock implements SupervisorClock {
  private time = 0;
  private nextId = 1;
  private timers = new Map<number, { at: number; callback: () => void }>();

  now(): number {
    return this.time;
  }

  setTimeout(callback: () => void, delayMs: number): unknown {
    const id = this.nextId++;
    this.timers.set(id, { at: this.time + delayMs, callback });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  /** Moves time forward by `ms`, firing due timers in order (and letting promises settle between them). */
  async advance(ms: number): Promise<void> {
    const until = this.time + ms;
    for (;;) {
      await flush();
      const due = [...this.timers.entries()]
        .filter(([, timer]) => timer.at <= until)
        .sort((a, b) => a[1].at - b[1].at || a[0] - b[0])[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.time = due[1].at;
      due[1].callback();
    }
    this.time = until;
    await flush();
  }
}

async function flush(): Promise<void> {
  for (let index = 0; index < 5; index += 1) await Promise.resolve();
}

class FakeChild implements ChildHandle {
  readonly signals: string[] = [];
  private messageListener: (message: unknown) => void = () => undefined;
  private exitListener: (code: number | null, signal: string | null) => void = () => undefined;
  /** Whether the child dies on SIGTERM (a child that ignores it needs the deadline's SIGKILL). */
  diesOnTerm = true;

  constructor(readonly pid: number) {}

  readonly sent: unknown[] = [];

  send(message: unknown): boolean {
    this.sent.push(message);
    return true;
  }

  kill(signal: 'SIGTERM' | 'SIGKILL' | 'SIGINT'): void {
    this.signals.push(signal);
    if (signal === 'SIGKILL' || this.diesOnTerm) this.exit(null, signal);
  }

  onMessage(listener: (message: unknown) => void): void {
    this.messageListener = listener;
  }

  onExit(listener: (code: number | null, signal: string | null) => void): void {
    this.exitListener = listener;
  }

  say(message: unknown): void {
    this.messageListener(message);
  }

  exit(code: number | null, signal: string | null = null): void {
    this.exitListener(code, signal);
  }
}

function harness(options: Partial<SupervisorOptions> = {}) {
  const clock = new ManualClock();
  const launched: FakeChild[] = [];
  const events: SupervisorEvent[] = [];
  const supervisor = new Supervisor({
    launch: () => {
      const child = new FakeChild(1000 + launched.length);
      launched.push(child);
      return child;
    },
    clock,
    onEvent: (event) => events.push(event),
    readiness: { message: (message) => message === 'ready', timeoutMs: 5_000 },
    backoff: { initialDelayMs: 100, factor: 2, maxDelayMs: 500, stablePeriodMs: 10_000 },
    stopDeadlineMs: 2_000,
    ...options,
  });
  const restartDelays = () => events.flatMap((event) => (event.type === 'restart-scheduled' ? [event.delayMs] : []));
  return { clock, launched, events, supervisor, restartDelays };
}

describe('RestartBackoff', () => {
  it('doubles the delay per crash in a row up to the cap', () => {
    const backoff = new RestartBackoff({ initialDelayMs: 100, factor: 2, maxDelayMs: 500, stablePeriodMs: 1_000 });
    expect([0, 0, 0, 0, 0].map((uptime) => backoff.nextDelay(uptime))).toEqual([100, 200, 400, 500, 500]);
  });

  it('starts over after a run of the stable period', () => {
    const backoff = new RestartBackoff({ initialDelayMs: 100, factor: 2, maxDelayMs: 500, stablePeriodMs: 1_000 });
    backoff.nextDelay(0);
    backoff.nextDelay(0);
    expect(backoff.nextDelay(1_000)).toBe(100);
  });

  it('rejects a cap below the first delay', () => {
    expect(() => new RestartBackoff({ initialDelayMs: 100, maxDelayMs: 50 })).toThrow(RangeError);
  });
});

describe('Supervisor', () => {
  it('resolves start once every child sent its ready message', async () => {
    const { supervisor, launched } = harness({ count: 2 });
    let ready = false;
    void supervisor.start().then(() => (ready = true));
    launched[0].say('ready');
    await flush();
    const afterFirst = ready;
    launched[1].say('ready');
    await flush();
    expect([launched.length, afterFirst, ready]).toEqual([2, false, true]);
  });

  it('restarts a crashed child after the back-off delay, not before', async () => {
    const { supervisor, launched, clock } = harness();
    void supervisor.start();
    launched[0].say('ready');
    launched[0].exit(1);
    await clock.advance(99);
    const beforeDelay = launched.length;
    await clock.advance(1);
    expect([beforeDelay, launched.length]).toEqual([1, 2]);
  });

  it('backs off exponentially while a child keeps crashing, capped', async () => {
    const { supervisor, launched, clock, restartDelays } = harness();
    void supervisor.start();
    for (let crash = 0; crash < 5; crash += 1) {
      launched.at(-1)!.exit(1);
      await clock.advance(1_000);
    }
    expect([restartDelays(), launched.length]).toEqual([[100, 200, 400, 500, 500], 6]);
  });

  it('starts the back-off over after a child ran for the stable period', async () => {
    const { supervisor, launched, clock, restartDelays } = harness();
    void supervisor.start();
    launched.at(-1)!.exit(1);
    await clock.advance(100);
    launched.at(-1)!.exit(1);
    await clock.advance(200);
    launched.at(-1)!.say('ready');
    await clock.advance(10_000);
    launched.at(-1)!.exit(1);
    expect(restartDelays()).toEqual([100, 200, 100]);
  });

  it('kills and replaces a child that is not ready in time', async () => {
    const { supervisor, launched, clock, events } = harness();
    void supervisor.start();
    await clock.advance(5_000);
    expect([launched[0].signals, events.some((event) => event.type === 'not-ready'), events.at(-1)?.type]).toEqual([
      ['SIGKILL'],
      true,
      'restart-scheduled',
    ]);
  });

  it('polls a readiness probe until it answers true', async () => {
    let answers = [false, false, true];
    const { supervisor, clock, events } = harness({
      readiness: { probe: async () => answers.shift() ?? false, probeIntervalMs: 50, timeoutMs: 5_000 },
    });
    let ready = false;
    void supervisor.start().then(() => (ready = true));
    await clock.advance(60);
    const early = ready;
    await clock.advance(50);
    expect([early, ready, events.filter((event) => event.type === 'ready').length]).toEqual([false, true, 1]);
    answers = [];
  });

  it('treats a child as ready at spawn when no readiness test is set', async () => {
    const { supervisor } = harness({ readiness: {} });
    await expect(supervisor.start()).resolves.toBeUndefined();
  });

  it('stops with the stop signal and does not restart the stopped child', async () => {
    const { supervisor, launched, clock, events } = harness();
    void supervisor.start();
    launched[0].say('ready');
    await supervisor.stop();
    await clock.advance(60_000);
    expect([launched.length, launched[0].signals, events.find((event) => event.type === 'exited')]).toEqual([
      1,
      ['SIGTERM'],
      expect.objectContaining({ expected: true }),
    ]);
  });

  it('SIGKILLs a child still running at the stop deadline', async () => {
    const { supervisor, launched, clock, events } = harness();
    void supervisor.start();
    launched[0].diesOnTerm = false;
    let stopped = false;
    void supervisor.stop().then(() => (stopped = true));
    await clock.advance(1_999);
    const beforeDeadline = [stopped, [...launched[0].signals]];
    await clock.advance(1);
    expect([
      beforeDeadline,
      stopped,
      launched[0].signals,
      events.some((event) => event.type === 'killed-after-deadline'),
    ]).toEqual([[false, ['SIGTERM']], true, ['SIGTERM', 'SIGKILL'], true]);
  });

  it('cancels a pending restart when stopped', async () => {
    const { supervisor, launched, clock } = harness();
    void supervisor.start();
    launched[0].exit(1);
    await supervisor.stop();
    await clock.advance(60_000);
    expect(launched.length).toBe(1);
  });

  it('relays a broadcast to every live child but the sender', async () => {
    const { supervisor, launched } = harness({ count: 3 });
    void supervisor.start();
    supervisor.broadcast('hello', supervisor.children()[1]);
    expect(launched.map((child) => child.sent)).toEqual([['hello'], [], ['hello']]);
  });

  it('refuses a count below one', () => {
    expect(() => harness({ count: 0 })).toThrow(RangeError);
  });
});
