// `node --import ./test/support/module-load-recorder.mjs …` with TB_TEST_MODULE_LOG=FILE: appends the URL of every
// module the process loads to FILE, one a line — ES modules through a loader hook, CommonJS files through
// Module.prototype._compile (require() does not pass the ESM hooks on Node 20). A test reads it to see what a
// process loaded at start.
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';

const log = process.env.TB_TEST_MODULE_LOG;
if (log) {
  register('./module-load-recorder-hooks.mjs', import.meta.url, { data: { log } });
  const Module = createRequire(import.meta.url)('node:module');
  const compile = Module.prototype._compile;
  Module.prototype._compile = function (content, filename) {
    appendFileSync(log, `${pathToFileURL(filename).href}\n`);
    return compile.apply(this, arguments);
  };
}
