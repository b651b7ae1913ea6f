// The console's build: a static bundle the hub serves at /console/ under a
// strict Content-Security-Policy (no inline script or style), so nothing may be
// inlined into index.html. Paths are relative to this file, so a root script
// can call build({ configFile: 'console/vite.config.ts' }) from anywhere.
import { fileURLToPath } from 'node:url';
import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/console/',
  publicDir: false,
  plugins: [preact()],
  resolve: {
    alias: { '@palai/sdk': fileURLToPath(new URL('../sdk/src/index.ts', import.meta.url)) },
  },
  build: {
    outDir: fileURLToPath(new URL('./dist', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // The polyfill is an inline script, which the CSP refuses.
    modulePreload: { polyfill: false },
    // Assets stay files: a data: URL for a script or font would be refused.
    assetsInlineLimit: 0,
    cssCodeSplit: false,
  },
});
