/**
 * Generate the demo town from the command line, without nadir (e.g. to look at the rasters or time
 * the generator alone). From the repository root, after set-up built the package:
 *   node packages/demo-town/dist/cli.js <outDir> [--seed N] [--survey NAME]... [--model-cell M] [--workers N]
 * or from the sources: node --import tsx packages/demo-town/src/cli.ts <outDir> ...
 */
import { parseArgs } from 'node:util';
import { generateDemoTown } from './index.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    seed: { type: 'string' },
    survey: { type: 'string', multiple: true },
    'model-cell': { type: 'string' },
    workers: { type: 'string' },
  },
});
const outDir = positionals[0];
if (!outDir) {
  console.error('usage: cli.js <outDir> [--seed N] [--survey NAME]... [--model-cell M] [--workers N]');
  process.exit(2);
}
const started = performance.now();
const outputs = await generateDemoTown({
  outDir,
  ...(values.seed ? { seed: Number(values.seed) } : {}),
  ...(values.survey ? { surveys: values.survey } : {}),
  ...(values['model-cell'] ? { modelCell: Number(values['model-cell']) } : {}),
  ...(values.workers ? { workers: Number(values.workers) } : {}),
  onProgress: (done, total, label) => {
    console.error(`[${((performance.now() - started) / 1000).toFixed(1)}s] ${done}/${total} ${label}`);
  },
});
for (const output of outputs) console.log(`${output.captureDate} ${output.id} ${output.manifestPath}`);
console.error(`generated ${outputs.length} surveys in ${((performance.now() - started) / 1000).toFixed(1)} s`);
