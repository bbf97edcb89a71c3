#!/usr/bin/env node
// Prints the frames with the most self time of a V8 CPU profile (`node --cpu-prof`), with their share of the
// sampled time, and the same totals grouped by package (node_modules/<name>, node:internal, our src/). A flame
// graph needs a browser; the top frames are what a note or a doc can quote.
//
// Usage: node tools/cpuprofile-top.mjs <file.cpuprofile> [--top 30] [--skip-idle]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '30' }, 'skip-idle': { type: 'boolean', default: false } },
});
if (positionals.length !== 1) {
  console.error('usage: node tools/cpuprofile-top.mjs <file.cpuprofile> [--top 30] [--skip-idle]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(positionals[0], 'utf8'));
const IDLE = new Set(['(idle)', '(program)', '(garbage collector)']);

// Self time per node: the samples whose leaf is that node, weighted by the time delta before each sample.
const selfMicros = new Map();
for (let index = 0; index < profile.samples.length; index++) {
  const id = profile.samples[index];
  selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0));
}

function origin(url) {
  if (!url) return '(native)';
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
  const packageMatch = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (packageMatch) return packageMatch[1];
  const sourceMatch = /\/(src|bench|dist)\/(.*)$/.exec(url);
  return sourceMatch ? `${sourceMatch[1]}/${sourceMatch[2]}` : url;
}

const byFrame = new Map();
const byOrigin = new Map();
let total = 0;
for (const node of profile.nodes) {
  const micros = selfMicros.get(node.id) ?? 0;
  if (micros === 0) continue;
  const { functionName, url, lineNumber } = node.callFrame;
  if (values['skip-idle'] && IDLE.has(functionName)) continue;
  total += micros;
  const where = origin(url);
  const label = `${functionName || '(anonymous)'}  ${where}${url ? `:${lineNumber + 1}` : ''}`;
  byFrame.set(label, (byFrame.get(label) ?? 0) + micros);
  const group = IDLE.has(functionName)
    ? functionName
    : where.replace(/(^(?:src|dist|bench)\/[^/]+(?:\/[^/.]+)?).*$/, '$1');
  byOrigin.set(group, (byOrigin.get(group) ?? 0) + micros);
}

const top = Number(values.top);
const print = (title, table) => {
  console.log(`\n${title}`);
  for (const [label, micros] of [...table].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(
      `${((micros / total) * 100).toFixed(1).padStart(5)} %  ${(micros / 1000).toFixed(0).padStart(7)} ms  ${label}`,
    );
  }
};
console.log(
  `${positionals[0]}: ${(total / 1000).toFixed(0)} ms sampled${values['skip-idle'] ? ' (idle, program and GC left out)' : ''}`,
);
print('Top frames by self time', byFrame);
print('Self time by origin', byOrigin);
