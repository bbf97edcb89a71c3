// A worker as its own OS process, for the multi-process suites (spawnWorker): TB_TEST_WORKER_KIND `ws`
// (default) or `http`, configuration from the environment, `{tb: 'listening', url}` to the parent once it
// listens; SIGTERM closes the app.
import 'reflect-metadata';
import { startHttpWorkerApp } from '../../src/apps/http-worker.app-module.js';
import { loadConfig } from '../../src/config/config.js';
import { startWsWorker } from '../../src/cli/worker-ws.command.js';

if (process.env.TB_TEST_WORKER_KIND === 'http') {
  const config = loadConfig(process.env, { services: ['httpWorker'] });
  const worker = await startHttpWorkerApp(config, {}, { logger: ['error', 'warn'] });
  process.send?.({ tb: 'listening', url: worker.url });
  process.once('SIGTERM', () => void worker.drain(1000).then(() => process.exit(0)));
} else {
  const config = loadConfig(process.env, { services: ['wsWorker'] });
  const { url } = await startWsWorker(config, {}, { logger: ['error', 'warn'] });
  process.send?.({ tb: 'listening', url });
}
