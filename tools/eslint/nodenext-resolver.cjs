// Import resolver for eslint-plugin-boundaries: our NodeNext sources import siblings as `./x.js`, and the
// file on disk is `./x.ts`. Package imports are left to the plugin (they are external, never an element).
const { existsSync } = require('node:fs');
const { dirname, resolve } = require('node:path');

exports.interfaceVersion = 2;
exports.resolve = (source, file) => {
  if (!source.startsWith('.')) return { found: false };
  const base = resolve(dirname(file), source);
  for (const candidate of [base.replace(/\.js$/, '.ts'), base, `${base}.ts`, `${base}/index.ts`]) {
    if (existsSync(candidate)) return { found: true, path: candidate };
  }
  return { found: false };
};
