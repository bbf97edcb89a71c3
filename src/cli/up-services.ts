import { UsageError } from '../common/errors.js';
import type { PlatformConfig } from '../config/config.js';

/** What `tb up` can run, in start order: the registry first (it migrates the shared database). */
export const UP_SERVICES = ['registry', 'mcp', 'gateway', 'manager'] as const;
export type UpService = (typeof UP_SERVICES)[number];

/**
 * The services to run: `--services` or `UP_SERVICES` (comma-separated; default all), minus every `--no-<name>`,
 * in start order. Unknown names and an empty selection are usage errors.
 */
export function selectServices(list: string | null | undefined, without: readonly string[] = []): UpService[] {
  const named = list === null || list === undefined || list.trim() === '' ? [...UP_SERVICES] : splitList(list);
  for (const name of [...named, ...without])
    if (!(UP_SERVICES as readonly string[]).includes(name))
      throw new UsageError(`unknown service "${name}" (services: ${UP_SERVICES.join(', ')})`);
  const selected = UP_SERVICES.filter((service) => named.includes(service) && !without.includes(service));
  if (selected.length === 0) throw new UsageError('tb up: every service is left out; keep at least one');
  return selected;
}

function splitList(list: string): string[] {
  return list
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
}

/**
 * The TRUST_PROXY the services get: behind the platform's nginx site (it exists and the manager runs) every request
 * reaches them from 127.0.0.1, so they believe the X-Forwarded-For nginx appends there — unless the operator chose.
 */
export function upTrustProxy(
  operatorChoice: string | undefined,
  services: readonly UpService[],
  nginxSiteConfigured: boolean,
): string | undefined {
  if (operatorChoice !== undefined) return operatorChoice;
  return services.includes('manager') && nginxSiteConfigured ? 'loopback' : undefined;
}

/** A wildcard listen address is probed and printed as loopback. */
export function reachableHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

/** The `tb` arguments that run one service as a child process. */
export function serviceArgv(service: UpService, options: { registryPort?: number; workers?: string }): string[] {
  switch (service) {
    case 'registry':
      return [
        'registry',
        ...(options.registryPort === undefined ? [] : ['--port', String(options.registryPort)]),
        ...(options.workers === undefined ? [] : ['--workers', options.workers]),
      ];
    case 'mcp':
      return ['mcp'];
    case 'gateway':
      return ['gateway'];
    case 'manager':
      return ['workers', 'start'];
  }
}

/** Where a service answers its liveness check (the manager's needs its secret and is found in manager.json). */
export function healthUrl(service: Exclude<UpService, 'manager'>, config: PlatformConfig): string {
  const listen = { registry: config.registry, mcp: config.mcp, gateway: config.gateway }[service];
  return `http://${reachableHost(listen.host)}:${listen.port}/health`;
}

/** How long a graceful stop may take before SIGKILL: the manager waits for its workers to drain. */
export function stopDeadlineMs(service: UpService, config: PlatformConfig): number {
  return service === 'manager' ? (config.httpWorker.drainTimeoutSeconds + 20) * 1000 : 15_000;
}
