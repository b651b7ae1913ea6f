#!/usr/bin/env node
// Part of `npm install` (prepare): makes the embedded store's template once
// (core/store/pglite-template.ts), so the first `npm start` on a fresh machine
// copies an initialized store instead of running initdb. A failure here only
// costs that first start a few seconds, so it never fails the install.
try {
  const { storeTemplate, templateReady } = await import('../dist/core/store/pglite-template.js');
  if (!templateReady()) console.error("Preparing the embedded store's template (initdb in WebAssembly, once per PGlite version; a few seconds) …");
  await storeTemplate();
} catch (error) {
  console.warn(`palai: the embedded store's template was not made now (${error instanceof Error ? error.message : error}); the first start makes it.`);
}
