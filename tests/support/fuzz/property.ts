// Seeded, replayable properties: the seed comes from PALAI_TEST_SEED or is drawn
// and printed, and a failure names it beside fast-check's shrunk counterexample.
import type { TestContext } from 'node:test';
import fc from 'fast-check';
import { testSeed } from '../seeded-random.js';

export const SEED = testSeed();

/**
 * Runs `predicate` on `numRuns` values of `arbitrary` from seed `SEED + offset`
 * (each property its own stream, all replayed by one PALAI_TEST_SEED).
 */
export async function checkProperty<T>(
  t: TestContext,
  offset: number,
  arbitrary: fc.Arbitrary<T>,
  predicate: (value: T) => Promise<void>,
  numRuns: number,
): Promise<void> {
  const seed = SEED + offset;
  t.diagnostic(`seed ${SEED} (PALAI_TEST_SEED=${SEED} replays it), ${numRuns} runs`);
  try {
    await fc.assert(fc.asyncProperty(arbitrary, predicate), { seed, numRuns });
  } catch (error) {
    throw new Error(`PALAI_TEST_SEED=${SEED} replays this failure.\n${(error as Error).message}`, { cause: error });
  }
}
