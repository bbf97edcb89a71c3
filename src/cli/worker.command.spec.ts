import { UsageError } from '../common/errors.js';
import { ConfigError } from '../config/config.js';
import type { CommandIo } from './command-io.js';
import { runWorkerCommand } from './worker.command.js';

const io = (env: Record<string, string> = {}): CommandIo => ({ out: () => undefined, err: () => undefined, env });

describe('tb worker', () => {
  it('names its two kinds', async () => {
    await expect(runWorkerCommand([], io())).rejects.toThrow(UsageError);
    await expect(runWorkerCommand(['mcp'], io())).rejects.toThrow(/tb worker http .* \| tb worker ws/);
  });

  it('checks its flags before starting anything', async () => {
    const env = { PLATFORM_JWT_SECRET: 'test-secret-0123456789abcdef' };
    await expect(runWorkerCommand(['http', '--port', 'x'], io(env))).rejects.toThrow(/--port must be a port number/);
    await expect(runWorkerCommand(['http', '--worker-id', 'a b'], io(env))).rejects.toThrow(/--worker-id must be/);
    await expect(runWorkerCommand(['http', '--nope'], io(env))).rejects.toThrow(UsageError);
  });

  it('needs the platform secret to verify sessions and tokens', async () => {
    await expect(runWorkerCommand(['http', '--port', '0'], io({}))).rejects.toThrow(ConfigError);
  });
});
