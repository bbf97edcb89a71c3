#!/usr/bin/env node
// Fails when the TypeScript sources import each other in a cycle. A cycle makes module evaluation order depend on
// which file is loaded first (an ESM binding read before its module ran throws a TDZ ReferenceError), and it means
// two files that cannot be understood or moved apart. Type-only imports count too: `import type` is erased at
// run time, but two files that name each other's types are still one unit a reader must hold at once, and the
// next value import between them would turn it into a run-time cycle.
//
// Usage: node tools/check-import-cycles.mjs [root ...]   (default root: src; spec files are skipped)
//        node tools/check-import-cycles.mjs --self-test  (the fixture under tools/fixtures/import-cycle must fail)
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const IMPORT_PATTERN =
  /(?:^|[\s;])(?:import|export)\s+(?:type\s+)?(?:[\w*${}\s,]+?\s+from\s+)?['"](\.{1,2}\/[^'"]+)['"]/g;

function listSources(root) {
  const files = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.ts') && !name.endsWith('.d.ts') && !name.endsWith('.spec.ts')) files.push(path);
    }
  };
  walk(root);
  return files.sort();
}

function stripComments(source) {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

function resolveImport(fromFile, specifier) {
  const base = resolve(dirname(fromFile), specifier);
  const candidates = [
    base.replace(/\.js$/, '.ts'),
    base.replace(/\.mjs$/, '.mts'),
    `${base}.ts`,
    join(base, 'index.ts'),
  ];
  return candidates.find((candidate) => existsSync(candidate) && statSync(candidate).isFile());
}

export function buildGraph(roots) {
  const graph = new Map();
  for (const root of roots) {
    for (const file of listSources(root)) {
      const targets = new Set();
      const source = stripComments(readFileSync(file, 'utf8'));
      for (const match of source.matchAll(IMPORT_PATTERN)) {
        const target = resolveImport(file, match[1]);
        if (target) targets.add(target);
      }
      graph.set(file, [...targets]);
    }
  }
  return graph;
}

// Tarjan's algorithm, iterative so a deep import chain cannot overflow the stack.
export function stronglyConnectedComponents(graph) {
  let nextIndex = 0;
  const index = new Map();
  const lowLink = new Map();
  const onStack = new Set();
  const stack = [];
  const components = [];
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work = [{ node: start, edge: 0 }];
    index.set(start, nextIndex);
    lowLink.set(start, nextIndex++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const edges = graph.get(frame.node) ?? [];
      if (frame.edge < edges.length) {
        const next = edges[frame.edge++];
        if (!graph.has(next)) continue;
        if (!index.has(next)) {
          index.set(next, nextIndex);
          lowLink.set(next, nextIndex++);
          stack.push(next);
          onStack.add(next);
          work.push({ node: next, edge: 0 });
        } else if (onStack.has(next)) {
          lowLink.set(frame.node, Math.min(lowLink.get(frame.node), index.get(next)));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].node;
        lowLink.set(parent, Math.min(lowLink.get(parent), lowLink.get(frame.node)));
      }
      if (lowLink.get(frame.node) === index.get(frame.node)) {
        const component = [];
        let member;
        do {
          member = stack.pop();
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        const selfLoop = (graph.get(frame.node) ?? []).includes(frame.node);
        if (component.length > 1 || selfLoop) components.push(component.sort());
      }
    }
  }
  return components;
}

// One concrete loop through a component, for the message: breadth-first from its first file back to itself.
function exampleCycle(graph, component) {
  const members = new Set(component);
  const start = component[0];
  const previous = new Map([[start, null]]);
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift();
    for (const next of graph.get(node) ?? []) {
      if (!members.has(next)) continue;
      if (next === start) {
        const path = [start];
        for (let at = node; at !== start; at = previous.get(at)) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!previous.has(next)) {
        previous.set(next, node);
        queue.push(next);
      }
    }
  }
  return [start, start];
}

export function findCycles(roots) {
  const graph = buildGraph(roots);
  return stronglyConnectedComponents(graph).map((component) => ({
    files: component,
    path: exampleCycle(graph, component),
  }));
}

function report(cycles, cwd) {
  for (const cycle of cycles) {
    const show = (file) => relative(cwd, file);
    console.error(`import cycle (${cycle.files.length} files): ${cycle.path.map(show).join(' -> ')}`);
    if (cycle.files.length > cycle.path.length - 1)
      console.error(`  all files in it: ${cycle.files.map(show).join(', ')}`);
  }
}

const isMain = process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const cwd = process.cwd();
  const args = process.argv.slice(2);
  if (args[0] === '--self-test') {
    const fixture = fileURLToPath(new URL('./fixtures/import-cycle', import.meta.url));
    const cycles = findCycles([fixture]);
    const names = cycles.map((cycle) => cycle.files.map((file) => relative(fixture, file)).join(' '));
    const expected = ['a.ts b.ts c.ts', 'self.ts'];
    if (JSON.stringify(names) !== JSON.stringify(expected)) {
      console.error(
        `check-import-cycles self-test failed: expected ${JSON.stringify(expected)}, got ${JSON.stringify(names)}`,
      );
      process.exit(1);
    }
    console.log('check-import-cycles self-test: the fixture cycles are reported, the acyclic files are not');
  } else {
    const roots = (args.length > 0 ? args : ['src']).map((root) => resolve(cwd, root));
    const cycles = findCycles(roots);
    if (cycles.length > 0) {
      report(cycles, cwd);
      console.error(`${cycles.length} import cycle(s) under ${args.join(', ') || 'src'}`);
      process.exit(1);
    }
    console.log(`no import cycles under ${args.join(', ') || 'src'}`);
  }
}
