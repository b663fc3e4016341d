/**
 * Peak memory of the ingesting commands (issue 18, item 3): `nadir demo` (the demo town's sources
 * generated and ingested) and `nadir ingest` of a generated `size` px RGB source (bench/ingest's
 * generator: a real aerial photo mosaicked in UTM, JPEG, with a collar), each under
 * `/usr/bin/time -v`. The budget they run under is docs/ingest.md's: GDAL's block cache
 * (INGEST_GDAL_CACHE_MB) and the warper's memory (WARP_MEMORY_MB), windowed writes throughout.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateRgb, timed } from '../ingest/run.js';
import { MIB } from './process-sample.js';
import type { MemoryRaw } from './raw.js';

const BIN = join(import.meta.dirname, '../../bin/nadir');

export async function measureIngestMemory(options: { size: number; log: (line: string) => void }): Promise<MemoryRaw> {
  const dir = await mkdtemp(join(tmpdir(), 'nadir-soak-memory-'));
  try {
    options.log('memory: nadir demo');
    const demo = await timed(process.execPath, [BIN, 'demo'], { NADIR_DATA_DIR: join(dir, 'demo') });
    options.log(`memory: nadir demo ${demo.seconds.toFixed(0)} s, peak ${(demo.peakRssBytes / MIB).toFixed(0)} MB`);
    await rm(join(dir, 'demo'), { recursive: true, force: true });

    options.log(`memory: generating a ${options.size} px RGB source`);
    const source = await generateRgb(dir, options.size);
    const manifest = join(dir, 'survey.json');
    await writeFile(manifest, JSON.stringify({ captureDate: '2026-06-01', assets: { TrueOrtho: source } }));
    const ingest = await timed(process.execPath, [BIN, 'ingest', manifest], { NADIR_DATA_DIR: join(dir, 'data') });
    options.log(
      `memory: nadir ingest ${ingest.seconds.toFixed(0)} s, peak ${(ingest.peakRssBytes / MIB).toFixed(0)} MB`,
    );
    return {
      demo: { seconds: demo.seconds, peakRssBytes: demo.peakRssBytes },
      ingest: { size: options.size, seconds: ingest.seconds, peakRssBytes: ingest.peakRssBytes },
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
