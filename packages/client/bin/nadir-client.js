#!/usr/bin/env node
// The nadir-client command: runs the compiled CLI (`npm run build` writes dist/).
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/node/cli/bin.js', import.meta.url);
if (!existsSync(compiled)) {
  process.stderr.write('nadir-client: not built yet; run `npm run build` at the repository root\n');
  process.exit(1);
}
await import(compiled.href);
