import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runRpcCommand } from '../../../src/cli/rpc.command.js';
import { UsageError } from '../../../src/common/errors.js';

/** `tb rpc` commands that need no network, run in process. */
describe('tb rpc id|allow|deny|peers (in process)', () => {
  let dataDir: string;
  const tb = async (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runRpcCommand(argv, {
      out: (text) => out.push(text),
      err: (text) => err.push(text),
      env: { DATA_DIR: dataDir, RPC_LISTEN: '/ip4/0.0.0.0/tcp/9100,/ip4/0.0.0.0/tcp/9102/ws' },
    });
    return { code, stdout: out.join('\n'), stderr: err.join('\n') };
  };

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tb-rpc-cli-'));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('creates the identity once and prints the same peer id with the configured addresses', async () => {
    const first = JSON.parse((await tb('id', '--json')).stdout);
    expect(first.peer_id).toMatch(/^12D3KooW/);
    expect(first.addresses).toEqual([
      `/ip4/0.0.0.0/tcp/9100/p2p/${first.peer_id}`,
      `/ip4/0.0.0.0/tcp/9102/ws/p2p/${first.peer_id}`,
    ]);
    expect((await stat(join(dataDir, 'rpc', 'peer.key'))).mode & 0o777).toBe(0o600);
    expect(JSON.parse((await tb('id', '--json')).stdout).peer_id).toBe(first.peer_id);
  });

  it('grants, lists and withdraws access', async () => {
    const peer = JSON.parse((await tb('id', '--json')).stdout).peer_id as string;
    expect((await tb('peers')).stdout).toContain('no peer may call');
    expect(await tb('allow', peer, 'hello.*')).toMatchObject({
      code: 0,
      stdout: `allowed hello.* to ${peer} (level 1)`,
    });
    expect((await tb('allow', peer, 'core.version', '--level=2')).stdout).toContain('(level 2)');
    expect((await tb('allow', '*', 'core.version')).stdout).toBe('allowed core.version to every peer (level 0)');
    expect(JSON.parse((await tb('peers', '--json')).stdout)).toEqual({
      peers: { [peer]: { allow: ['hello.*', 'core.version'], level: 2 }, '*': { allow: ['core.version'], level: 0 } },
    });
    expect((await tb('deny', peer, 'hello.*')).stdout).toBe(`denied hello.* to ${peer}`);
    expect((await tb('deny', peer, 'hello.*')).stdout).toContain('nothing changed');
    expect((await tb('peers')).stdout).toContain('* (any peer)  level 0  core.version');
  });

  it('refuses bad input with a clear message', async () => {
    await expect(tb('allow', '*')).rejects.toThrow(UsageError);
    await expect(tb('allow', '*', 'a.b', '--level=7')).rejects.toThrow('--level must be -1, 0, 1 or 2');
    await expect(tb('nope')).rejects.toThrow(UsageError);
    await expect(tb('call', '/ip4/127.0.0.1/tcp/1', 'a.b')).rejects.toThrow('/p2p/PEER_ID');
    await expect(tb('call', '/ip4/127.0.0.1/tcp/1/p2p/x', 'nodot')).rejects.toThrow(UsageError);
    const badPattern = await tb('allow', '*', 'nodot');
    expect(badPattern.code).toBe(1);
    expect(badPattern.stderr).toContain('module.function');
  });
});
