// The loader-thread half of module-load-recorder.mjs: the URL of every ES module loaded.
import { appendFileSync } from 'node:fs';

let log;

export function initialize(data) {
  log = data.log;
}

export async function load(url, context, nextLoad) {
  const result = await nextLoad(url, context);
  appendFileSync(log, `${url}\n`);
  return result;
}
