#!/usr/bin/env node
// The `palai` command. Palai runs from its TypeScript sources, so the tsx loader
// is registered before the CLI is imported.
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

// Compile with Palai's own tsconfig whatever the working directory is, so a
// foreign tsconfig.json there cannot change how the sources are compiled.
register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
await import('../cli/main.ts');
