/**
 * Deterministic registry data for the discovery benchmark: publishers, packages with realistic
 * names, display names, descriptions and keywords, Zipf-like downloads, and versions whose
 * dependencies form a graph six levels deep. One designated root pulls in exactly
 * `RESOLVE_GRAPH_SIZE` packages transitively.
 */

import { seededRandom } from '../../test/support/seeded-random.js';

export const RESOLVE_GRAPH_SIZE = 200;
/** Packages per level of the designated graph, root first (sums to RESOLVE_GRAPH_SIZE). */
const GRAPH_LEVELS = [1, 5, 18, 40, 60, 76];
const LEVELS = GRAPH_LEVELS.length;

export interface GeneratedPublisher {
  id: string;
  name: string;
  verified: boolean;
}

export interface GeneratedVersion {
  version: string;
  dependencies: string[];
  toolboxVersion: string | null;
  yanked: boolean;
}

export interface GeneratedPackage {
  id: string;
  name: string;
  displayName: string;
  description: string;
  keywords: string[];
  packageType: 'mod' | 'library' | 'theme' | 'plugin';
  publisherIndex: number;
  downloads: number;
  /** 0 for leaves, up to 5; dependencies point one level down. */
  level: number;
  versions: GeneratedVersion[];
}

export interface DiscoveryData {
  publishers: GeneratedPublisher[];
  packages: GeneratedPackage[];
  /** The package whose transitive closure is RESOLVE_GRAPH_SIZE packages. */
  resolveRoot: string;
}

/** The same data on every run, so figures compare between runs and engines. */
export const random = seededRandom;

const PREFIXES =
  'cloud data fast micro open smart auto quick simple tiny hyper meta neo safe deep live lazy super ultra easy'.split(
    ' ',
  );
const NOUNS = (
  'sync cache queue store parser router logger tracer metrics vault bridge agent shell editor theme widget panel chart graph ' +
  'table form grid layout canvas render image video audio voice mail chat notify auth token session crypto hash diff patch ' +
  'build bundle test mock lint format docs search index crawler scraper feed rss calendar clock timer scheduler task job ' +
  'worker pool stream socket proxy gateway client server api rpc mesh config env secret backup archive zip compress pdf ' +
  'markdown yaml json csv xml sql orm migrate schema model vector embed llm prompt agent chain tool plugin kit box core'
).split(' ');
const SUFFIXES = 'js kit lib tools utils core plus pro lite x hub io mod ui cli sdk'.split(' ');
const VERBS =
  'Synchronises Caches Parses Routes Logs Traces Renders Indexes Schedules Streams Validates Formats Converts Encrypts Compresses Monitors Exports Imports Generates Manages'.split(
    ' ',
  );
const OBJECTS = (
  'files folders notes tasks events messages metrics logs images videos documents tables records settings secrets tokens ' +
  'sessions requests responses packages modules themes widgets dashboards charts reports backups archives emails feeds prompts models vectors'
).split(' ');
const QUALIFIERS = (
  'across devices in real time with zero configuration for small teams on any platform using plain text without a server ' +
  'with end-to-end encryption in the browser from the command line with offline support at scale for ToolBox'
).split(' ');
const ADJECTIVES =
  'fast lightweight reliable minimal modern secure extensible portable friendly powerful tiny robust flexible elegant'.split(
    ' ',
  );
const TAGS =
  'productivity developer security ai storage network ui theme data automation media testing docs cloud cli sync'.split(
    ' ',
  );
const TYPES = ['mod', 'mod', 'mod', 'library', 'library', 'theme', 'plugin'] as const;

function uuidFrom(index: number, salt: number): string {
  const hex =
    (index * 2654435761 + salt).toString(16).padStart(8, '0').slice(-8) + index.toString(16).padStart(24, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

function sentence(rng: ReturnType<typeof random>, words: number): string {
  const parts = [rng.pick(VERBS), OBJECTS[rng.skewed(OBJECTS.length)]];
  while (parts.length < words)
    parts.push(
      rng.next() < 0.5 ? ADJECTIVES[rng.skewed(ADJECTIVES.length)] : QUALIFIERS[rng.skewed(QUALIFIERS.length)],
    );
  return `${parts.join(' ')}.`;
}

export function generateDiscoveryData(packageCount: number, publisherCount = 2000, seed = 20260104): DiscoveryData {
  const rng = random(seed);
  const publishers: GeneratedPublisher[] = Array.from({ length: publisherCount }, (_, index) => ({
    id: uuidFrom(index, 7),
    name: `pub-${rng.pick(PREFIXES)}-${index}`,
    verified: rng.next() < 0.1,
  }));

  const taken = new Set<string>();
  const packages: GeneratedPackage[] = [];
  for (let index = 0; index < packageCount; index += 1) {
    const prefix = PREFIXES[rng.skewed(PREFIXES.length)];
    const noun = NOUNS[rng.skewed(NOUNS.length)];
    const shape = rng.below(5);
    let name =
      shape === 0
        ? `${prefix}-${noun}`
        : shape === 1
          ? `${noun}-${rng.pick(SUFFIXES)}`
          : shape === 2
            ? `${prefix}${noun[0].toUpperCase()}${noun.slice(1)}`
            : shape === 3
              ? `${prefix}-${noun}-${rng.pick(SUFFIXES)}`
              : `${noun}_${rng.pick(NOUNS)}`;
    if (taken.has(name.toLowerCase())) name = `${name}-${index.toString(36)}`;
    taken.add(name.toLowerCase());
    const keywords = Array.from({ length: rng.below(4) }, () => TAGS[rng.skewed(TAGS.length)]);
    packages.push({
      id: uuidFrom(index, 13),
      name,
      displayName: `${prefix[0].toUpperCase()}${prefix.slice(1)} ${noun[0].toUpperCase()}${noun.slice(1)}`,
      description:
        `${sentence(rng, 6 + rng.below(6))} ${rng.next() < 0.5 ? sentence(rng, 4 + rng.below(4)) : ''}`.trim(),
      keywords: [...new Set(keywords)],
      packageType: rng.pick(TYPES),
      publisherIndex: rng.skewed(publisherCount),
      downloads: Math.floor((2_000_000 / (1 + rng.skewed(packageCount)) ** 1.1) * rng.next()),
      level: 0,
      versions: [],
    });
  }

  // Levels: the designated graph takes the first RESOLVE_GRAPH_SIZE packages; the rest are spread over all six.
  const byLevel: GeneratedPackage[][] = Array.from({ length: LEVELS }, () => []);
  let cursor = 0;
  GRAPH_LEVELS.forEach((size, depth) => {
    const level = LEVELS - 1 - depth;
    for (let count = 0; count < size; count += 1) {
      const pkg = packages[cursor++];
      pkg.level = level;
      byLevel[level].push(pkg);
    }
  });
  const graph = new Set(packages.slice(0, RESOLVE_GRAPH_SIZE));
  for (const pkg of packages.slice(RESOLVE_GRAPH_SIZE)) {
    pkg.level = rng.skewed(LEVELS);
    byLevel[pkg.level].push(pkg);
  }

  for (const pkg of packages) {
    let dependencies: string[] = [];
    if (pkg.level > 0) {
      if (graph.has(pkg)) {
        // Inside the designated graph: each package of the level below is named by someone above it.
        const below = byLevel[pkg.level - 1].filter((candidate) => graph.has(candidate));
        const above = byLevel[pkg.level].filter((candidate) => graph.has(candidate));
        const position = above.indexOf(pkg);
        const share = Math.ceil(below.length / above.length);
        const chosen = below.slice(position * share, position * share + share);
        if (below.length > 0) chosen.push(below[rng.below(below.length)]);
        dependencies = [...new Set(chosen)].map((dependency) => `${dependency.name}^1.0.0`);
      } else {
        const pool = byLevel[pkg.level - 1];
        const count = rng.below(4);
        dependencies = [...new Set(Array.from({ length: count }, () => pool[rng.below(pool.length)]))].map(
          (dependency) => `${dependency.name}${rng.next() < 0.7 ? '^1.0.0' : '>=1.0,<2.0'}`,
        );
      }
    }
    const versionCount = 1 + rng.below(3);
    pkg.versions = Array.from({ length: versionCount }, (_, index) => ({
      version: `1.${index}.${rng.below(5)}`,
      dependencies,
      toolboxVersion: rng.next() < 0.2 ? '>=0.1.0' : null,
      yanked: index > 0 && rng.next() < 0.03,
    }));
  }
  return { publishers, packages, resolveRoot: packages[0].name };
}

/** A realistic query mix: popular and rare words, two-word queries, name prefixes, exact names, typos, empty. */
export function searchQueries(data: DiscoveryData, count: number, seed = 99): string[] {
  const rng = random(seed);
  const queries: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const kind = index % 8;
    if (kind === 0) queries.push(NOUNS[rng.skewed(NOUNS.length)]);
    else if (kind === 1) queries.push(`${rng.pick(PREFIXES)} ${rng.pick(NOUNS)}`);
    else if (kind === 2) queries.push(rng.pick(data.packages).name);
    else if (kind === 3) queries.push(rng.pick(data.packages).name.slice(0, 3 + rng.below(4)));
    else if (kind === 4) queries.push(`${rng.pick(VERBS).toLowerCase()} ${rng.pick(OBJECTS)}`);
    else if (kind === 5) queries.push(rng.pick(TAGS));
    else if (kind === 6) queries.push(`${rng.pick(ADJECTIVES)} ${rng.pick(NOUNS)} ${rng.pick(OBJECTS)}`);
    else queries.push(rng.next() < 0.3 ? '' : `${rng.pick(NOUNS).slice(0, -1)}x`);
  }
  return queries;
}
