// Summarises a V8 .cpuprofile (node --cpu-prof): the top functions by self time
// and by inclusive time, and self time by file and by package, each as a share
// of the busy time (idle and program left out), and with a function's name
// after it, the call stacks that spent that function's self time.
// Usage: node scripts/cpu-profile-summary.mjs <file.cpuprofile> [top=25] [function name]
import { readFileSync } from 'node:fs';

const [file, topArg, callersOf] = process.argv.slice(2);
if (!file) {
  console.error('usage: node scripts/cpu-profile-summary.mjs <file.cpuprofile> [top]');
  process.exit(2);
}
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((node) => [node.id, node]));

// Microseconds each node was on top of the stack.
const self = new Map();
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i];
  self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
}
const total = [...self.values()].reduce((a, b) => a + b, 0);
const idle = [...byId.values()].filter((n) => ['(idle)', '(program)'].includes(n.callFrame.functionName)).reduce((a, n) => a + (self.get(n.id) ?? 0), 0);

const short = (url) =>
  url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, 'node_modules/')
    .replace(/^.*\/(dist|src)\//, '$1/');
const label = ({ functionName, url, lineNumber }) => `${functionName || '(anonymous)'} ${url ? `${short(url)}:${lineNumber + 1}` : ''}`.trim();
const packageOf = ({ url, functionName }) => {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1];
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
  return /\/dist\/([^/]+\/[^/]+)/.exec(url)?.[1] ?? short(url);
};

// Inclusive: a function's time counts once per sample however often it recurs on the stack.
const parent = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
const inclusive = new Map();
for (const [id, us] of self) {
  const seen = new Set();
  for (let at = id; at !== undefined; at = parent.get(at)) {
    const key = label(byId.get(at).callFrame);
    if (seen.has(key)) continue;
    seen.add(key);
    inclusive.set(key, (inclusive.get(key) ?? 0) + us);
  }
}

const sum = (keyOf) => {
  const out = new Map();
  for (const [id, us] of self) {
    const key = keyOf(byId.get(id).callFrame);
    out.set(key, (out.get(key) ?? 0) + us);
  }
  return out;
};
const busy = total - idle;
const print = (title, map, n = top) => {
  console.log(`\n# ${title}`);
  for (const key of ['(idle)', '(program)']) map.delete(key);
  for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, n))
    console.log(`${(us / 1000).toFixed(0).padStart(7)} ms ${((100 * us) / busy).toFixed(1).padStart(5)}%  ${key}`);
};
console.log(`${file}: ${(total / 1e6).toFixed(2)} s sampled, ${(busy / 1e6).toFixed(2)} s busy (percentages of busy)`);
print('self time by function', sum(label));
print('self time by package or dist folder', sum(packageOf), 20);
print('inclusive time by function', inclusive, top * 2);

if (callersOf) {
  // The stacks (up to 8 frames above it) whose top is `callersOf`, by the self time they spent there.
  const stacks = new Map();
  for (const [id, us] of self) {
    if (byId.get(id).callFrame.functionName !== callersOf) continue;
    const frames = [];
    for (let at = parent.get(id); at !== undefined && frames.length < 8; at = parent.get(at)) frames.push(label(byId.get(at).callFrame));
    const key = frames.join('\n            < ');
    stacks.set(key, (stacks.get(key) ?? 0) + us);
  }
  print(`stacks under ${callersOf}`, stacks, 12);
}
