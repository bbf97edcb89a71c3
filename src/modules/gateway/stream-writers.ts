import type { Response } from 'express';

/**
 * Writes server-sent events as OpenAI streams them: `data: <json>` and a blank line per chunk, then
 * `data: [DONE]`. A failure after the headers went out can no longer change the status, so it becomes
 * one `data: {"error": …}` event (what OpenAI-compatible clients look for) before the stream ends.
 * Honours back-pressure, and stops pulling chunks when the client has gone.
 */
export async function writeSse<T>(
  response: Response,
  chunks: AsyncIterable<T>,
  options: { onError?: (error: unknown) => void } = {},
): Promise<void> {
  response.status(200);
  response.setHeader('content-type', 'text/event-stream; charset=utf-8');
  response.setHeader('cache-control', 'no-cache');
  response.setHeader('connection', 'keep-alive');
  // nginx would otherwise buffer the whole answer.
  response.setHeader('x-accel-buffering', 'no');
  // What is written in one tick (the headers and the events of records that arrived in one packet) leaves
  // in one write, not one each; the next tick sends it.
  let corked = false;
  const corkForTick = () => {
    if (corked) return;
    corked = true;
    response.cork();
    process.nextTick(() => {
      corked = false;
      if (!response.writableEnded) response.uncork();
    });
  };
  corkForTick();
  response.flushHeaders();
  const send = async (text: string): Promise<void> => {
    if (response.destroyed || response.writableEnded) return;
    corkForTick();
    if (!response.write(text)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          response.off('drain', done);
          response.off('close', done);
          resolve();
        };
        response.on('drain', done);
        response.on('close', done);
      });
    }
  };
  try {
    for await (const chunk of chunks) {
      if (response.destroyed) break;
      await send(`data: ${JSON.stringify(chunk)}\n\n`);
    }
    await send('data: [DONE]\n\n');
  } catch (error) {
    options.onError?.(error);
    const message = (error as Error).name === 'AbortError' ? 'The request was cancelled' : (error as Error).message;
    await send(
      `data: ${JSON.stringify({ error: { message, type: 'server_error', param: null, code: 'stream_failed' } })}\n\n`,
    );
  } finally {
    if (!response.writableEnded && !response.destroyed) response.end();
  }
}

/**
 * Streams records as NDJSON (Ollama's own progress format) after the first one arrived, so a failure
 * to start (unknown model) is still an ordinary error response; a later failure is a final `{error}` line.
 */
export async function writeNdjson<T>(response: Response, records: AsyncGenerator<T>): Promise<void> {
  const first = await records.next();
  response.status(200);
  response.setHeader('content-type', 'application/x-ndjson; charset=utf-8');
  response.setHeader('cache-control', 'no-cache');
  response.setHeader('x-accel-buffering', 'no');
  try {
    let next = first;
    while (!next.done) {
      if (response.destroyed) {
        await records.return(undefined);
        break;
      }
      response.write(`${JSON.stringify(next.value)}\n`);
      next = await records.next();
    }
  } catch (error) {
    response.write(`${JSON.stringify({ error: (error as Error).message })}\n`);
  } finally {
    if (!response.writableEnded && !response.destroyed) response.end();
  }
}
