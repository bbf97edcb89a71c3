#!/usr/bin/env node
// `npm run build`: type-check, compile, the import-cycle check, lint and format check. tsc, ESLint and Prettier each
// use one core, so the steps run in two lanes side by side; each lane stops at its first failure, and the build
// fails when either lane does (every failing step's output is shown).
import { spawn } from 'node:child_process';

const LANES = [
  [
    ['tsc', '-p', 'tsconfig.json', '--noEmit'],
    ['eslint', '.'],
  ],
  [
    ['tsc', '-p', 'tsconfig.build.json'],
    ['node', 'tools/check-import-cycles.mjs', '--self-test'],
    ['node', 'tools/check-import-cycles.mjs', 'src'],
    ['prettier', '--check', '.'],
  ],
];

function run([command, ...args]) {
  const bin = command === 'node' ? process.execPath : `node_modules/.bin/${command}`;
  return new Promise((resolve) => {
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    child.on('error', (error) => resolve({ code: 1, output: String(error) }));
    child.on('close', (code) => resolve({ code: code ?? 1, output: Buffer.concat(output).toString() }));
  });
}

async function runLane(steps) {
  for (const step of steps) {
    const started = Date.now();
    const { code, output } = await run(step);
    const line = `${step.join(' ')} (${((Date.now() - started) / 1000).toFixed(1)} s)`;
    // Each step's output is printed whole once it ends, so the two lanes do not interleave.
    process.stdout.write(`${code === 0 ? '✓' : '✗'} ${line}\n${output.trim() ? `${output.trimEnd()}\n` : ''}`);
    if (code !== 0) return false;
  }
  return true;
}

const results = await Promise.all(LANES.map(runLane));
if (results.includes(false)) {
  console.error('build failed');
  process.exit(1);
}
