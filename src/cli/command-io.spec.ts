import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import { JwtService } from '@nestjs/jwt';
import { TokenVerifier } from '../auth/token-verifier.js';
import { loadConfig } from '../config/config.js';
import type { CommandIo } from './command-io.js';
import { runDbCommand } from './db.command.js';
import { runDeltaCommand } from './delta.command.js';
import { runTokenCommand } from './token.command.js';

const SECRET = 'command-io-secret-0123456789abcdef';

function sink(env: Record<string, string>): CommandIo & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, env, out: (text) => stdout.push(text), err: (text) => stderr.push(text) };
}

describe('commands print and read the environment through their CommandIo', () => {
  let dataDir: string;
  const consoleLog = jest.spyOn(console, 'log');
  const stdoutWrite = jest.spyOn(process.stdout, 'write');

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tb-io-'));
    consoleLog.mockClear();
    stdoutWrite.mockClear();
  });

  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  afterAll(() => {
    consoleLog.mockRestore();
    stdoutWrite.mockRestore();
  });

  it('tb delta reports bad usage on io.err with exit code 2', async () => {
    const io = sink({});
    expect(await runDeltaCommand(['create', 'only-one.zip'], io)).toBe(2);
    expect(io.stderr.join('\n')).toContain('tb delta create OLD.zip NEW.zip PATCH');
    expect(stdoutWrite).not.toHaveBeenCalled();
  });

  it('tb db status reads DATA_DIR from io.env, needs no secret, and prints on io.out', async () => {
    const io = sink({ DATA_DIR: dataDir });
    expect(await runDbCommand(['status'], io)).toBe(0);
    expect(io.stdout).toEqual([`${join(dataDir, 'platform.sqlite')}: migrations pending`]);
    expect(consoleLog).not.toHaveBeenCalled();
  });

  it('tb token signs with the secret from io.env and prints the token on io.out', async () => {
    const io = sink({ PLATFORM_JWT_SECRET: SECRET, DATA_DIR: dataDir });
    expect(await runTokenCommand(['--user', '7', '--username', 'ada'], io)).toBe(0);
    expect(io.stdout).toHaveLength(1);
    const principal = new TokenVerifier(new JwtService({}), loadConfig({ PLATFORM_JWT_SECRET: SECRET })).verify(
      io.stdout[0],
    );
    expect(principal).toMatchObject({ platformUserId: '7', username: 'ada' });
    expect(consoleLog).not.toHaveBeenCalled();
  });
});
