import { loadConfig } from '../config/config.js';
import { UsageError } from '../common/errors.js';
import { parseCommandArgs } from './cli-args.js';
import type { CommandIo } from './command-io.js';
import { managerRequest } from './manager-client.js';

/** `tb workers cluster-join --host H [--port 9005] [--secret S]`: the running manager joins a remote node. */
export async function clusterJoin(argv: string[], io: CommandIo): Promise<number> {
  const { values } = parseCommandArgs(
    argv,
    { 'data-dir': { type: 'string' }, host: { type: 'string' }, port: { type: 'string' }, secret: { type: 'string' } },
    { allowPositionals: false },
  );
  if (!values.host) throw new UsageError('usage: tb workers cluster-join --host H [--port 9005] [--secret S]');
  const port = values.port === undefined ? 9005 : Number(values.port);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new UsageError('--port must be a port number');
  const config = loadConfig(io.env, { dataDir: values['data-dir'] });
  try {
    const answer = (await managerRequest(config, 'POST', 'cluster/join', {
      host: values.host,
      port,
      ...(values.secret ? { secret: values.secret } : {}),
    })) as { node: { id: string; healthy: boolean } };
    io.out(`Joined ${answer.node.id} (${answer.node.healthy ? 'healthy' : 'not healthy yet'}).`);
    return 0;
  } catch (error) {
    io.err((error as Error).message);
    return 1;
  }
}

/** `tb workers cluster-leave --node HOST:PORT`: the running manager forgets a node (its backups go at once). */
export async function clusterLeave(argv: string[], io: CommandIo): Promise<number> {
  const { values } = parseCommandArgs(
    argv,
    { 'data-dir': { type: 'string' }, node: { type: 'string' } },
    { allowPositionals: false },
  );
  if (!values.node) throw new UsageError('usage: tb workers cluster-leave --node HOST:PORT');
  const config = loadConfig(io.env, { dataDir: values['data-dir'] });
  try {
    await managerRequest(config, 'DELETE', `cluster/nodes/${encodeURIComponent(values.node)}`);
    io.out(`Left ${values.node}.`);
    return 0;
  } catch (error) {
    io.err((error as Error).message);
    return 1;
  }
}
