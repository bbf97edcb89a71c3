import { readFile } from 'node:fs/promises';
import { Injectable, Module } from '@nestjs/common';
import { Export, Mod, Result } from '../../src/modules/app-core/index.js';

/**
 * Functions the HTTP worker e2e suites call, registered through the app core's own decorators.
 * `Worker.Test` has a dotted name on purpose.
 */
@Mod('Worker.Test')
@Injectable()
export class WorkerTestMod {
  @Export({ api: true })
  hello(): string {
    return 'hello';
  }

  @Export({ api: true })
  echo(a: unknown, b: unknown, c: unknown): Record<string, unknown> {
    return { a, b, c };
  }

  @Export({ api: false })
  hidden(): string {
    return 'never over HTTP';
  }

  @Export({ api: true, apiMethods: ['PUT', 'DELETE'] })
  put_only(): string {
    return 'put';
  }

  @Export({ api: true, apiMethods: ['GET', 'POST'], requestAsKwarg: true })
  whoami(request: Record<string, unknown>, extra?: unknown): Record<string, unknown> {
    return { request, extra: extra ?? null };
  }

  @Export({ api: true })
  page(): Result {
    return Result.html('<h1>Hi</h1>');
  }

  @Export({ api: true })
  go(): Result {
    return Result.redirect('/elsewhere?x=1', 303);
  }

  @Export({ api: true })
  download(): Result {
    return Result.file(new TextEncoder().encode('report body'), 'report ü.txt', 'text/plain');
  }

  @Export({ api: true })
  bytes(): Result {
    return Result.binary(new Uint8Array([0, 1, 2, 255]), { dataInfo: 'blob.bin' });
  }

  @Export({ api: true })
  events(): Result {
    async function* source() {
      yield 'first';
      yield { n: 2 };
      yield 'multi\nline';
    }
    return Result.stream(source());
  }

  @Export({ api: true })
  ndjson(): Result {
    return Result.stream([{ n: 1 }, { n: 2 }], 'application/x-ndjson');
  }

  /** Whether the source of the last `endless` stream was closed (the client went away). */
  static endlessClosed = false;

  @Export({ api: true })
  endless(): Result {
    WorkerTestMod.endlessClosed = false;
    async function* source() {
      try {
        for (let tick = 0; ; tick += 1) {
          yield { tick };
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      } finally {
        WorkerTestMod.endlessClosed = true;
      }
    }
    return Result.stream(source());
  }

  @Export({ api: true })
  endless_state(): boolean {
    return WorkerTestMod.endlessClosed;
  }

  @Export({ api: true })
  broken_stream(): Result {
    async function* source() {
      yield 'one';
      throw new Error('source failed');
    }
    return Result.stream(source());
  }

  @Export({ api: true })
  teapot(): Result {
    return Result.error('short and stout', 418);
  }

  @Export({ api: true })
  failing(): Result {
    return Result.error('custom failure', -1);
  }

  @Export({ api: true })
  boom(): never {
    throw new Error('kaboom');
  }

  @Export({ api: true, apiMethods: ['POST'] })
  async upload(file: unknown, note: unknown, more?: unknown): Promise<Record<string, unknown>> {
    const describe = async (value: unknown) => {
      const upload = value as { filename: string; content_type: string; path: string; size: number; sha256: string };
      return { ...upload, text: await readFile(upload.path, 'utf8') };
    };
    return {
      file: await describe(file),
      more: more === undefined ? null : await describe(more),
      note: note ?? null,
    };
  }

  @Export({ api: true, apiMethods: ['GET'] })
  async slow(ms: string): Promise<string> {
    await new Promise((resolve) => setTimeout(resolve, Number(ms)));
    return `slept ${ms}`;
  }
}

/** One function per level, plus `open*` names: the access matrix. */
@Mod('Access')
@Injectable()
export class AccessTestMod {
  @Export({ api: true, level: -1 })
  admin_only(): string {
    return 'admin_only';
  }

  @Export({ api: true, level: 0 })
  anyone(): string {
    return 'anyone';
  }

  @Export({ api: true, level: 1 })
  member(): string {
    return 'member';
  }

  @Export({ api: true, level: 2 })
  trusted(): string {
    return 'trusted';
  }

  @Export({ api: true, level: 0 })
  open_anyone(): string {
    return 'open_anyone';
  }

  @Export({ api: true, level: 1 })
  open_member(): string {
    return 'open_member';
  }

  @Export({ api: true, level: -1 })
  open_admin(): string {
    return 'open_admin';
  }
}

/** Listed in OPEN_MODULES by the suites. */
@Mod('Public.Mod')
@Injectable()
export class OpenModuleTestMod {
  @Export({ api: true, level: 0 })
  anyone(): string {
    return 'public anyone';
  }

  @Export({ api: true, level: 1 })
  member(): string {
    return 'public member';
  }

  @Export({ api: true, level: 2 })
  trusted(): string {
    return 'public trusted';
  }

  @Export({ api: true, level: -1 })
  admin_only(): string {
    return 'public admin_only';
  }
}

@Module({ providers: [WorkerTestMod, AccessTestMod, OpenModuleTestMod] })
export class HttpWorkerTestModsModule {}
