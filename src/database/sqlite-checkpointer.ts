import { stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * WAL pages the serving connection may gather before it checkpoints by itself: a bound on the WAL should the
 * background thread fall behind (a reader that holds old pages), 64 MiB of 4 KiB pages. SQLite's default is
 * 1,000 pages, checkpointed on the event loop by whichever commit crosses it.
 */
export const FOREGROUND_CHECKPOINT_PAGES = 16_000;

/** SQLite's own `wal_autocheckpoint`, restored when the thread cannot run. */
export const SQLITE_DEFAULT_CHECKPOINT_PAGES = 1000;

/** From this WAL size the background thread checkpoints (SQLite's own default, 1,000 pages of 4 KiB). */
export const BACKGROUND_CHECKPOINT_BYTES = 4 * 1024 * 1024;

/** What one checkpoint did: WAL frames in the log, and how many of them are now in the database file. */
export interface CheckpointResult {
  log: number;
  checkpointed: number;
}

// CommonJS, run with `eval`: the thread needs no file of its own beside the compiled code or the test's sources.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const database = new Database(workerData.file, { fileMustExist: true });
parentPort.on('message', () => {
  try {
    const [result] = database.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ log: result.log, checkpointed: result.checkpointed });
  } catch (error) {
    parentPort.postMessage({ error: String((error && error.message) || error) });
  }
});
`;

/**
 * Checkpoints a WAL-mode SQLite file from a thread of its own. A checkpoint copies the WAL's pages into the
 * database file and fsyncs it (with `synchronous = NORMAL` the only fsync there is): done by the commit that
 * crosses `wal_autocheckpoint`, it stalls the event loop for as long as the disk takes (milliseconds on a shared
 * disk, every few hundred small transactions), so the serving connection's threshold is raised to
 * {@link FOREGROUND_CHECKPOINT_PAGES} and this thread runs PASSIVE checkpoints (which never wait for readers or
 * writers) whenever the WAL is past {@link BACKGROUND_CHECKPOINT_BYTES}, looking every `intervalMs`. The thread
 * and its connection open at the first checkpoint.
 */
export class SqliteCheckpointer {
  private worker: Worker | null = null;
  private readonly timer: NodeJS.Timeout;
  private busy = false;
  private stopped = false;
  /** Checkpoints run, and frames copied into the database file by them (for tests and diagnostics). */
  checkpoints = 0;
  checkpointedFrames = 0;

  /** A checkpoint (or the look at the WAL's size before one) is under way. */
  get running(): boolean {
    return this.busy;
  }

  constructor(
    private readonly file: string,
    private readonly options: { intervalMs?: number; walBytes?: number; onError?: (message: string) => void } = {},
  ) {
    this.timer = setInterval(() => void this.tick(), options.intervalMs ?? 500);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (this.busy || this.stopped) return;
    this.busy = true;
    try {
      const wal = await stat(`${this.file}-wal`).catch(() => null);
      if (wal && wal.size >= (this.options.walBytes ?? BACKGROUND_CHECKPOINT_BYTES)) await this.checkpoint();
    } catch (error) {
      // A checkpoint that stop() cut short is no failure: the owner may already have closed its database.
      if (!this.stopped) this.options.onError?.((error as Error).message);
    } finally {
      this.busy = false;
    }
  }

  /** One PASSIVE checkpoint on the thread. */
  checkpoint(): Promise<CheckpointResult> {
    const worker = (this.worker ??= this.startWorker());
    return new Promise((resolve, reject) => {
      const onExit = () => reject(new Error('the checkpoint thread stopped'));
      worker.once('exit', onExit);
      worker.once('message', (answer: CheckpointResult & { error?: string }) => {
        worker.off('exit', onExit);
        if (answer.error) return reject(new Error(answer.error));
        this.checkpoints += 1;
        this.checkpointedFrames += Math.max(0, answer.checkpointed);
        resolve(answer);
      });
      worker.postMessage('checkpoint');
    });
  }

  private startWorker(): Worker {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, file: this.file } });
    worker.unref();
    worker.on('error', (error) => {
      if (!this.stopped) this.options.onError?.(error.message);
    });
    worker.on('exit', () => {
      if (this.worker === worker) this.worker = null;
    });
    return worker;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate();
  }
}
