// A WS worker as its own OS process, for the multi-process suites (spawnWsWorker): configuration from the
// environment, `{tb: 'listening', url}` to the parent once it listens; SIGTERM closes the app (shutdown hooks).
import 'reflect-metadata';
import { loadConfig } from '../../src/config/config.js';
import { startWsWorker } from '../../src/cli/worker-ws.command.js';

const config = loadConfig(process.env, { services: ['wsWorker'] });
const { url } = await startWsWorker(config, {}, { logger: ['error', 'warn'] });
process.send?.({ tb: 'listening', url });
