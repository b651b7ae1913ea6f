// The load: requests one after another, and `clients` callers each sending the
// next request as soon as its last is answered. Every answer is checked to be
// the fake server's whole answer, so a system that fails fast is not fast.
export type Respond = (input: string) => Promise<string>;

const INPUT = 'the quick brown fox jumps over the lazy dog';

export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function timed(respond: Respond, words: number): Promise<number> {
  const started = performance.now();
  const text = await respond(INPUT);
  const took = performance.now() - started;
  if (text.trim().split(/\s+/).length !== words) throw new Error(`an answer of ${JSON.stringify(text.slice(0, 200))}, not ${words} words`);
  return took;
}

/** Latencies of `requests` sequential requests, sorted. */
export async function sequential(respond: Respond, requests: number, words: number): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < requests; i++) latencies.push(await timed(respond, words));
  return latencies.sort((a, b) => a - b);
}

/** `requests` requests from `clients` callers at once: the seconds they took and their latencies, sorted. */
export async function concurrent(respond: Respond, requests: number, clients: number, words: number): Promise<{ seconds: number; latencies: number[] }> {
  const latencies: number[] = [];
  let started = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (started < requests) {
        started++;
        latencies.push(await timed(respond, words));
      }
    }),
  );
  return { seconds: (performance.now() - t0) / 1000, latencies: latencies.sort((a, b) => a - b) };
}
