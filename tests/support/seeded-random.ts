// Seeded randomness for fault tests: a failing run prints its seed, and
// PALAI_TEST_SEED=<seed> replays it exactly.

/** The seed of this run: PALAI_TEST_SEED when set, else a fresh one (print it). */
export const testSeed = (): number => Number(process.env.PALAI_TEST_SEED ?? Date.now() % 1_000_000);

/** A small seeded PRNG (mulberry32) returning numbers in [0, 1). */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
