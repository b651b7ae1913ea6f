// The figures a bench run measured, each with its goal where the project set
// one (issue table in bench/RESULTS.md): printed as one line each, and written
// to bench/results.json at the end of `npm run bench`. A figure that misses its
// goal is reported, never a failure.
import { writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';

export interface Figure {
  name: string;
  value: number | null;
  unit: string;
  /** The goal, and whether lower or higher is better. */
  goal?: { value: number; better: 'lower' | 'higher' };
  note?: string;
}

const figures: Figure[] = [];

/** Keeps the figure; prints its line unless the bench printed its own (`print: false`). */
export function record(figure: Figure, options: { print?: boolean } = {}): void {
  figures.push(figure);
  if (options.print === false) return;
  const value = figure.value === null ? 'not measured' : `${round(figure.value)} ${figure.unit}`;
  const goal =
    figure.goal && figure.value !== null ? `; goal ${figure.goal.better === 'lower' ? '≤' : '≥'} ${figure.goal.value} ${figure.unit} (${verdict(figure)})` : '';
  console.log(`${figure.name}: ${value}${goal}${figure.note ? ` — ${figure.note}` : ''}`);
}

const round = (n: number) => (Math.abs(n) >= 100 ? n.toFixed(0) : n.toFixed(2).replace(/\.?0+$/, ''));

function verdict(figure: Figure): string {
  const { value, goal } = figure;
  if (value === null || !goal) return '';
  const ratio = goal.better === 'lower' ? value / goal.value : goal.value / value;
  return ratio <= 1 ? `meets it, ${round(ratio)}× of the goal` : `misses it by ${round(ratio)}×`;
}

export function writeResults(path: string): void {
  const machine = {
    cpus: cpus().length,
    cpu: cpus()[0]?.model,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    loadavg: loadavg().map((n) => Number(n.toFixed(2))),
  };
  writeFileSync(path, `${JSON.stringify({ at: new Date().toISOString(), machine, figures }, null, 2)}\n`);
  console.log(`\nfigures written to ${path}`);
}
