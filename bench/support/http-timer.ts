/**
 * A measuring HTTP client in its own process. Latency measured by a client on the server's own thread also
 * holds the client's work (undici's request and response handling, JSON parsing, the client's garbage) and
 * every wait of one for the other; a real client never runs there. The bench sends this process a list of
 * requests; it sends them one after another (closed loop, one keep-alive connection) and answers each
 * request's time, status and JSON body. Only the request itself is inside the timed window.
 *
 * BENCH_CLIENT=same-process makes the timer run the same requests in the caller's process instead, to
 * compare with figures measured that way before.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface TimedRequest {
  url: string;
  /** A JSON body: sent as POST. */
  body?: unknown;
}

export interface TimedResponse {
  ms: number;
  status: number;
  body: unknown;
}

export interface HttpTimer {
  /** Where the requests run, for the printed table. */
  readonly where: string;
  run(requests: TimedRequest[]): Promise<TimedResponse[]>;
  close(): Promise<void>;
}

interface Batch {
  id: number;
  requests: TimedRequest[];
}

interface Answer {
  id: number;
  responses?: TimedResponse[];
  error?: string;
}

async function send(request: TimedRequest): Promise<TimedResponse> {
  const started = performance.now();
  const response = await fetch(
    request.url,
    request.body === undefined
      ? {}
      : { method: 'POST', body: JSON.stringify(request.body), headers: { 'content-type': 'application/json' } },
  );
  const body: unknown = await response.json();
  return { ms: performance.now() - started, status: response.status, body };
}

async function runAll(requests: TimedRequest[]): Promise<TimedResponse[]> {
  const responses: TimedResponse[] = [];
  for (const request of requests) responses.push(await send(request));
  return responses;
}

export async function startHttpTimer(): Promise<HttpTimer> {
  if (process.env.BENCH_CLIENT === 'same-process')
    return { where: "client in the server's process", run: runAll, close: async () => undefined };

  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['http-timer'], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pending = new Map<number, { resolve: (value: TimedResponse[]) => void; reject: (error: Error) => void }>();
  const failAll = (error: Error) => {
    for (const waiter of pending.values()) waiter.reject(error);
    pending.clear();
  };
  child.on('message', (message) => {
    const answer = message as Answer;
    const waiter = pending.get(answer.id);
    if (!waiter) return;
    pending.delete(answer.id);
    if (answer.error !== undefined) waiter.reject(new Error(answer.error));
    else waiter.resolve(answer.responses ?? []);
  });
  child.on('exit', (code) => failAll(new Error(`the measuring client exited with ${code}`)));
  child.on('error', failAll);
  let nextId = 0;
  return {
    where: 'client in its own process',
    run: (requests) =>
      new Promise<TimedResponse[]>((resolve, reject) => {
        const id = (nextId += 1);
        pending.set(id, { resolve, reject });
        child.send({ id, requests } satisfies Batch);
      }),
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.disconnect();
      }),
  };
}

if (process.argv[2] === 'http-timer') {
  process.on('message', (message) => {
    const batch = message as Batch;
    runAll(batch.requests).then(
      (responses) => process.send?.({ id: batch.id, responses } satisfies Answer),
      (error: unknown) => process.send?.({ id: batch.id, error: String(error) } satisfies Answer),
    );
  });
  process.on('disconnect', () => process.exit(0));
}
