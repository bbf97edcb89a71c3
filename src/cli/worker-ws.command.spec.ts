import { UsageError } from '../common/errors.js';
import { ConfigError } from '../config/config.js';
import type { CommandIo } from './command-io.js';
import { runWorkerCommand } from './worker.command.js';

const io = (env: Record<string, string> = {}): CommandIo => ({ out: () => undefined, err: () => undefined, env });

describe('tb worker ws', () => {
  it('checks its flags before starting anything', async () => {
    const env = { PLATFORM_JWT_SECRET: 'test-secret-0123456789abcdef' };
    await expect(runWorkerCommand(['ws', '--port', 'x'], io(env))).rejects.toThrow(/--port must be a port number/);
    await expect(runWorkerCommand(['ws', '--nope'], io(env))).rejects.toThrow(UsageError);
    await expect(runWorkerCommand(['ws', 'extra'], io(env))).rejects.toThrow(UsageError);
  });

  it('needs the platform secret to verify sessions and tokens', async () => {
    await expect(runWorkerCommand(['ws', '--port', '0'], io({}))).rejects.toThrow(ConfigError);
  });

  it('refuses MESSAGE_BROKER=redis without REDIS_URL before starting', async () => {
    await expect(
      runWorkerCommand(
        ['ws', '--port', '0'],
        io({ PLATFORM_JWT_SECRET: 'test-secret-0123456789abcdef', MESSAGE_BROKER: 'redis' }),
      ),
    ).rejects.toThrow(/MESSAGE_BROKER=redis needs REDIS_URL/);
  });
});
