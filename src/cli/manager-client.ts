import type { PlatformConfig } from '../config/config.js';
import { runningManager, type ManagerStateFile } from '../modules/workers/index.js';

/**
 * The CLI's client of the running worker manager's admin API, shared by the `tb workers` subcommands (the
 * cluster ones included), so that none of them imports another command file.
 */

/** The running manager of this data directory with a listening admin API, or an error message. */
async function reachManager(config: PlatformConfig): Promise<ManagerStateFile & { api: string }> {
  const state = await runningManager(config);
  if (!state)
    throw new CommandFailure(
      `No worker manager is running for data dir ${config.dataDir} (start one with "tb workers start").`,
    );
  if (!state.api) throw new CommandFailure(`The worker manager (pid ${state.pid}) is still starting; try again.`);
  return state as ManagerStateFile & { api: string };
}

/** A manager that is absent, still starting or answering with an error: the message is for the user. */
class CommandFailure extends Error {}

/** One call on the running manager's admin API; throws with the manager's message when it refuses. */
export async function managerRequest(config: PlatformConfig, method: string, path: string, body?: unknown) {
  const state = await reachManager(config);
  const response = await fetch(`${state.api}/api/${path}`, {
    method,
    headers: {
      'x-cluster-secret': state.secret,
      // State-changing admin calls must show they come from no form (the manager refuses those with 415).
      'x-requested-with': 'tb',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).catch((error: unknown) => {
    throw new CommandFailure(`The worker manager at ${state.api} does not answer: ${(error as Error).message}`);
  });
  const answer = (await response.json().catch(() => null)) as { message?: string } | null;
  if (!response.ok) throw new CommandFailure(`${response.status}: ${answer?.message ?? response.statusText}`);
  return answer;
}
