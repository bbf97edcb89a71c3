import { JwtService } from '@nestjs/jwt';
import { loadConfig } from '../config/config.js';
import { TokenVerifier } from '../auth/token-verifier.js';
import { UsageError } from '../common/errors.js';
import { parseCommandArgs, parseDuration } from './cli-args.js';
import { processIo, type CommandIo } from './command-io.js';
import { ensurePersistedSecret } from './platform-secret.js';

/** `tb token --user ID --username NAME [--email E] [--admin] [--ttl 1h]` prints a JWT signed with the configured secret. */
export async function runTokenCommand(argv: string[], io: CommandIo = processIo()): Promise<number> {
  const { values } = parseCommandArgs(
    argv,
    {
      user: { type: 'string' },
      username: { type: 'string' },
      email: { type: 'string' },
      admin: { type: 'boolean', default: false },
      ttl: { type: 'string', default: '1h' },
      'data-dir': { type: 'string' },
    },
    { allowPositionals: false },
  );
  if (!values.user || !values.username)
    throw new UsageError('usage: tb token --user ID --username NAME [--email E] [--admin] [--ttl 1h]');
  const dataDir = values['data-dir'];
  // Same secret `tb up` uses when PLATFORM_JWT_SECRET is unset.
  const shared = loadConfig(io.env, { dataDir });
  const jwtSecret = shared.jwtSecret ?? (await ensurePersistedSecret(shared.dataDir));
  const config = loadConfig(io.env, { dataDir, jwtSecret, services: ['registry'] });
  const verifier = new TokenVerifier(new JwtService({}), config);
  io.out(
    verifier.sign({
      userId: values.user,
      username: values.username,
      email: values.email,
      admin: values.admin,
      ttlSeconds: parseDuration(values.ttl!),
    }),
  );
  return 0;
}
