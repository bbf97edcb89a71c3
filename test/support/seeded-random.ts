/**
 * xorshift32: the same numbers on every run, so generated data and the figures measured on it compare
 * between runs and engines (bench data generators, specs that need many varied documents).
 */
export function xorshift32(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state;
  };
}

/** Uniform numbers in [0, 1) and the helpers generators draw with. */
export function seededRandom(seed: number) {
  const integer = xorshift32(seed);
  const next = () => integer() / 0x1_0000_0000;
  return {
    next,
    below: (limit: number) => Math.floor(next() * limit),
    pick: <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)],
    /** Index skewed towards 0 (roughly Zipf): common words are common. */
    skewed: (limit: number) => Math.floor(limit * next() ** 2.2),
  };
}
