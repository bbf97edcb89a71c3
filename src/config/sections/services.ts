import { ConfigError } from './environment-reader.js';

export const SERVICE_NAMES = ['registry', 'httpWorker', 'wsWorker', 'manager', 'mcp', 'gateway'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

/**
 * The settings a service cannot start without, beyond what has a default. The registry verifies platform
 * JWTs and signs download URLs; the workers verify the same tokens and sign session cookies. The manager,
 * MCP transport and gateway authenticate with their own API keys.
 */
const SERVICE_REQUIREMENTS: Record<ServiceName, Array<'jwtSecret'>> = {
  registry: ['jwtSecret'],
  httpWorker: ['jwtSecret'],
  wsWorker: ['jwtSecret'],
  manager: [],
  mcp: [],
  gateway: [],
};

const SERVICE_LABEL: Record<ServiceName, string> = {
  registry: 'the registry',
  httpWorker: 'the HTTP workers',
  wsWorker: 'the WebSocket workers',
  manager: 'the worker manager',
  mcp: 'the MCP transport',
  gateway: 'the model gateway',
};

/** What is missing for `services` to run with this platform secret (empty when nothing is). */
export function missingRequirements(config: { jwtSecret: string | null }, services: readonly ServiceName[]): string[] {
  const needSecret = services.filter((service) => SERVICE_REQUIREMENTS[service].includes('jwtSecret'));
  if (needSecret.length === 0 || config.jwtSecret) return [];
  return [
    `PLATFORM_JWT_SECRET is required by ${needSecret.map((service) => SERVICE_LABEL[service]).join(', ')}: the HS256 secret shared with the platform auth module`,
  ];
}

/** The platform secret for a component that cannot work without one: never signs with an empty or made-up secret. */
export function requireJwtSecret(config: { jwtSecret: string | null }, usedFor: string): string {
  if (!config.jwtSecret) throw new ConfigError([`PLATFORM_JWT_SECRET is required for ${usedFor}`]);
  return config.jwtSecret;
}

/** Fails with the configuration error loadConfig would have given when `config` was not validated for `service`. */
export function assertConfiguredFor(config: { jwtSecret: string | null }, service: ServiceName): void {
  const problems = missingRequirements(config, [service]);
  if (problems.length > 0) throw new ConfigError(problems);
}
