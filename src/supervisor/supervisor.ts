import { RestartBackoff, type RestartBackoffOptions } from './restart-backoff.js';

/** A running child as the supervisor sees it; node-launchers.ts adapts node:child_process and node:cluster. */
export interface ChildHandle {
  readonly pid: number | undefined;
  /** Sends an IPC message; false when the channel is gone. */
  send(message: unknown): boolean;
  kill(signal: 'SIGTERM' | 'SIGKILL' | 'SIGINT'): void;
  onMessage(listener: (message: unknown) => void): void;
  /** Called once when the process has exited (also when it never started). */
  onExit(listener: (code: number | null, signal: string | null) => void): void;
}

/** Starts the child of slot `slot` (0-based). */
export type ChildLauncher = (slot: number) => ChildHandle;

/** Timers, injectable so back-off and deadlines are tested without waiting. */
export interface SupervisorClock {
  now(): number;
  setTimeout(callback: () => void, delayMs: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: SupervisorClock = {
  now: () => Date.now(),
  setTimeout: (callback, delayMs) => setTimeout(callback, delayMs),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface ReadinessOptions {
  /** The child is ready when it sends a message this accepts (e.g. `{ tb: 'listening' }`). */
  message?: (message: unknown) => boolean;
  /** Or when this probe (an HTTP GET, a port check) answers true; polled every `probeIntervalMs`. */
  probe?: (child: ChildHandle) => Promise<boolean>;
  probeIntervalMs?: number;
  /** A child not ready by then is killed and restarted like a crash (default 30 s). */
  timeoutMs?: number;
}

export interface SupervisorOptions {
  launch: ChildLauncher;
  /** How many children (slots) to keep running (default 1). */
  count?: number;
  /** Without a message test or a probe, a child is ready once spawned. */
  readiness?: ReadinessOptions;
  backoff?: RestartBackoffOptions;
  /** Graceful stop: `stopSignal` first, SIGKILL to whatever still runs after this (default 10 s). */
  stopDeadlineMs?: number;
  stopSignal?: 'SIGTERM' | 'SIGINT';
  clock?: SupervisorClock;
  /** Every lifecycle event, for logs and tests. */
  onEvent?: (event: SupervisorEvent) => void;
  /** Every IPC message a child sends (readiness messages included). */
  onMessage?: (message: unknown, child: SupervisedChild) => void;
}

export type SupervisorEvent =
  | { type: 'spawned'; slot: number; pid: number | undefined }
  | { type: 'ready'; slot: number; pid: number | undefined }
  | { type: 'not-ready'; slot: number; pid: number | undefined; afterMs: number }
  | {
      type: 'exited';
      slot: number;
      pid: number | undefined;
      code: number | null;
      signal: string | null;
      expected: boolean;
    }
  | { type: 'restart-scheduled'; slot: number; delayMs: number; attempt: number }
  | { type: 'killed-after-deadline'; slot: number; pid: number | undefined };

export type ChildState = 'starting' | 'ready' | 'stopping' | 'exited';

/** One launch of one slot. */
export interface SupervisedChild {
  readonly slot: number;
  readonly handle: ChildHandle;
  readonly state: ChildState;
  readonly startedAt: number;
}

interface ChildRecord extends SupervisedChild {
  state: ChildState;
  readyTimer?: unknown;
  probeTimer?: unknown;
  exited: Promise<void>;
}

interface Slot {
  index: number;
  backoff: RestartBackoff;
  current?: ChildRecord;
  restartTimer?: unknown;
  everReady: boolean;
}

/**
 * Keeps `count` children running: spawns each, waits for its readiness (a message or a probe), restarts
 * a child that exits or never becomes ready with exponential back-off (capped, reset after a stable run),
 * and stops them all gracefully within a deadline. Pure: processes come from `launch`, time from `clock`.
 * Orphans are the launcher's and `bindToProcess`'s concern (node-launchers.ts).
 */
export class Supervisor {
  private readonly slots: Slot[];
  private readonly clock: SupervisorClock;
  private readonly readiness: ReadinessOptions;
  private stopping: Promise<void> | undefined;
  private started = false;
  private readonly allReady: Promise<void>;
  private resolveAllReady!: () => void;

  constructor(private readonly options: SupervisorOptions) {
    const count = options.count ?? 1;
    if (!Number.isInteger(count) || count < 1)
      throw new RangeError(`a supervisor needs at least one child (count ${count})`);
    this.clock = options.clock ?? systemClock;
    this.readiness = options.readiness ?? {};
    this.slots = Array.from({ length: count }, (_, index) => ({
      index,
      backoff: new RestartBackoff(options.backoff),
      everReady: false,
    }));
    this.allReady = new Promise<void>((resolve) => (this.resolveAllReady = resolve));
  }

  /** Spawns every child; resolves once each slot has been ready once (crashes before that are restarted). */
  start(): Promise<void> {
    if (this.started) return this.allReady;
    this.started = true;
    for (const slot of this.slots) this.spawn(slot);
    return this.allReady;
  }

  /** The live child of each slot (undefined while a slot waits for its restart). */
  children(): Array<SupervisedChild | undefined> {
    return this.slots.map((slot) => (slot.current?.state === 'exited' ? undefined : slot.current));
  }

  /** Sends `message` to every live child except `except`. */
  broadcast(message: unknown, except?: SupervisedChild): void {
    for (const child of this.children()) if (child && child !== except) child.handle.send(message);
  }

  get isStopping(): boolean {
    return this.stopping !== undefined;
  }

  /**
   * Stops every child: cancels pending restarts, sends the stop signal, SIGKILLs whatever still runs
   * after `stopDeadlineMs`, and resolves when all have exited. Idempotent.
   */
  stop(): Promise<void> {
    this.stopping ??= this.stopAll();
    return this.stopping;
  }

  /** Synchronous last resort for `process.on('exit')`: SIGKILL to every live child, no waiting. */
  killAllNow(): void {
    for (const slot of this.slots) {
      if (slot.restartTimer !== undefined) this.clock.clearTimeout(slot.restartTimer);
      slot.restartTimer = undefined;
      if (slot.current && slot.current.state !== 'exited') slot.current.handle.kill('SIGKILL');
    }
    this.stopping ??= Promise.resolve();
  }

  private async stopAll(): Promise<void> {
    const deadlineMs = this.options.stopDeadlineMs ?? 10_000;
    const waits: Promise<void>[] = [];
    for (const slot of this.slots) {
      if (slot.restartTimer !== undefined) this.clock.clearTimeout(slot.restartTimer);
      slot.restartTimer = undefined;
      const child = slot.current;
      if (!child || child.state === 'exited') continue;
      this.clearReadiness(child);
      child.state = 'stopping';
      child.handle.kill(this.options.stopSignal ?? 'SIGTERM');
      const deadline = this.clock.setTimeout(() => {
        if (child.state === 'exited') return;
        this.emit({ type: 'killed-after-deadline', slot: slot.index, pid: child.handle.pid });
        child.handle.kill('SIGKILL');
      }, deadlineMs);
      waits.push(child.exited.then(() => this.clock.clearTimeout(deadline)));
    }
    await Promise.all(waits);
  }

  private spawn(slot: Slot): void {
    slot.restartTimer = undefined;
    let markExited!: () => void;
    const exited = new Promise<void>((resolve) => (markExited = resolve));
    const handle = this.options.launch(slot.index);
    const child: ChildRecord = { slot: slot.index, handle, state: 'starting', startedAt: this.clock.now(), exited };
    slot.current = child;
    this.emit({ type: 'spawned', slot: slot.index, pid: handle.pid });
    handle.onMessage((message) => {
      if (child.state === 'starting' && this.readiness.message?.(message)) this.markReady(slot, child);
      this.options.onMessage?.(message, child);
    });
    handle.onExit((code, signal) => {
      if (child.state === 'exited') return;
      const expected = child.state === 'stopping' || this.stopping !== undefined;
      this.clearReadiness(child);
      child.state = 'exited';
      markExited();
      this.emit({ type: 'exited', slot: slot.index, pid: handle.pid, code, signal, expected });
      if (!expected) this.scheduleRestart(slot, child);
    });
    if (!this.readiness.message && !this.readiness.probe) {
      this.markReady(slot, child);
      return;
    }
    const timeoutMs = this.readiness.timeoutMs ?? 30_000;
    child.readyTimer = this.clock.setTimeout(() => {
      if (child.state !== 'starting') return;
      this.emit({ type: 'not-ready', slot: slot.index, pid: handle.pid, afterMs: timeoutMs });
      this.clearReadiness(child);
      handle.kill('SIGKILL');
    }, timeoutMs);
    if (this.readiness.probe) this.probe(slot, child);
  }

  private probe(slot: Slot, child: ChildRecord): void {
    const interval = this.readiness.probeIntervalMs ?? 250;
    const attempt = () => {
      child.probeTimer = undefined;
      if (child.state !== 'starting') return;
      this.readiness.probe!(child.handle).then(
        (ready) => {
          if (child.state !== 'starting') return;
          if (ready) this.markReady(slot, child);
          else child.probeTimer = this.clock.setTimeout(attempt, interval);
        },
        () => {
          if (child.state === 'starting') child.probeTimer = this.clock.setTimeout(attempt, interval);
        },
      );
    };
    attempt();
  }

  private markReady(slot: Slot, child: ChildRecord): void {
    this.clearReadiness(child);
    child.state = 'ready';
    this.emit({ type: 'ready', slot: slot.index, pid: child.handle.pid });
    slot.everReady = true;
    if (this.slots.every((each) => each.everReady)) this.resolveAllReady();
  }

  private clearReadiness(child: ChildRecord): void {
    if (child.readyTimer !== undefined) this.clock.clearTimeout(child.readyTimer);
    if (child.probeTimer !== undefined) this.clock.clearTimeout(child.probeTimer);
    child.readyTimer = undefined;
    child.probeTimer = undefined;
  }

  private scheduleRestart(slot: Slot, child: ChildRecord): void {
    const delayMs = slot.backoff.nextDelay(this.clock.now() - child.startedAt);
    this.emit({ type: 'restart-scheduled', slot: slot.index, delayMs, attempt: slot.backoff.attempts });
    slot.restartTimer = this.clock.setTimeout(() => {
      if (this.stopping === undefined) this.spawn(slot);
    }, delayMs);
  }

  private emit(event: SupervisorEvent): void {
    this.options.onEvent?.(event);
  }
}
