#!/usr/bin/env node
// `npm start` and `npm run palai -- …`: brings dist/ up to date with the
// sources, then runs the CLI in the same process — one Node.js start instead
// of a separate build check before it (about a tenth of a second).
import { buildAndReport } from './build.mjs';

await buildAndReport(true);
await import('../bin/palai.mjs');
