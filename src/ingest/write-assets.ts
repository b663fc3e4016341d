/**
 * The jobs of one survey, phase by phase, and what they wrote: each source's black collar, then
 * every shard (or single COG) from the sources that reach it, then each sharded asset's low COG
 * from its shards; then each asset's catalogue entry and footprint. The jobs run wherever the
 * runner puts them (this process, worker processes, the queue); nothing here is visible until
 * ingest-survey.ts commits it.
 */
import { copyFile, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Asset, ContentType } from '../catalogue/survey.js';
import { NadirError } from '../errors.js';
import { DSM_NODATA } from '../geo/asset-layout.js';
import type { CogGrid } from '../geo/cog-grid.js';
import type { MultiPolygon } from '../geo/polygon.js';
import { boundsOverlap } from '../geo/web-mercator.js';
import { type SurveyStorage, surveyFileKey } from '../storage/storage.js';
import { alignedCogGrid } from './aligned-cog.js';
import { type AssetLayoutPlan, planAssetLayout } from './asset-plan.js';
import type { WarpSource } from './cog-writer.js';
import type { CheckedAsset, IngestSettings } from './delivery.js';
import { traceFootprint } from './footprint.js';
import type { IngestJob, IngestJobResult } from './ingest-jobs.js';
import type { SourceRaster } from './source.js';
import type { JobRunner } from './worker-pool.js';

/** The folder of a version's work files in queue mode (collar states, markers); gone at commit. */
export const WORK_FOLDER = '.ingest/';

/** A collar pass reads a source once, about this share of what warping and writing it costs. */
const COLLAR_WEIGHT = 0.3;

/** The staged files of an asset and its catalogue entry (without its storage keys). */
export interface WrittenAsset {
  type: ContentType;
  asset: Asset;
  footprint: MultiPolygon;
  /** Staged path -> storage key. */
  files: Map<string, string>;
}

export async function writeAssets(
  storage: Pick<SurveyStorage, 'gdalPath'>,
  id: string,
  version: number,
  checked: CheckedAsset[],
  staging: string,
  runner: JobRunner,
  { shardLevels, jpegQuality }: IngestSettings,
  say: (fraction: number, label: string) => void,
): Promise<WrittenAsset[]> {
  const threads = runner.threadsPerJob;
  const remote = runner.storesOutputs;
  // Queue mode: each job puts its output at its final key (or, for collar states, under the
  // version's .ingest/ work folder) itself; GDAL then reads them through the storage.
  const key = (file: string) => surveyFileKey(id, version, file);
  const readable = (local: string, stored: string | undefined) => (remote && stored ? storage.gdalPath(stored) : local);
  const plans = await Promise.all(checked.map((a) => planAsset(a, shardLevels)));
  // Phase 1: the black collar of every source that says nothing about where its data ends.
  const collarJobs: Array<{ job: IngestJob; asset: number; source: number }> = [];
  checked.forEach(({ type, sources }, asset) => {
    if (plans[asset]?.layout === 'copy') return;
    sources.forEach((source, index) => {
      if (source.kind !== 'rgb' || source.alphaBand || source.hasInternalMask) return;
      const name = `${type}.${index}.collar.tif`;
      const job: IngestJob = {
        kind: 'collar',
        source,
        state: join(staging, name),
        ...(remote ? { store: key(`${WORK_FOLDER}${name}`) } : {}),
      };
      collarJobs.push({ job, asset, source: index });
    });
  });
  // Phase 2: each single COG or shard; phase 3: each sharded asset's low COG, from its shards.
  const gridJobs: Array<{ job: IngestJob & { kind: 'grid' }; asset: number; shard?: number }> = [];
  const weights = new Map<IngestJob, number>();
  for (const { job, asset, source } of collarJobs) {
    const s = checked[asset]?.sources[source] as SourceRaster;
    weights.set(job, s.width * s.height * COLLAR_WEIGHT);
  }
  const warpSources: WarpSource[][] = checked.map((a) => a.sources.map(warpSource));
  checked.forEach(({ type, sources }, asset) => {
    const plan = plans[asset] as AssetPlan;
    const kind = sources[0]?.kind ?? 'rgb';
    if (plan.layout === 'single') {
      const cog = {
        kind,
        sources: [],
        grid: plan.grid,
        output: join(staging, `${type}.tif`),
        threads,
        skipEmpty: false,
        jpegQuality,
      };
      const store = remote ? { store: key(`${type}.tif`) } : {};
      gridJobs.push({ job: { kind: 'grid', cog, label: `${type} COG`, ...store }, asset });
    } else if (plan.layout === 'sharded') {
      plan.shards.forEach((shard, index) => {
        const output = join(staging, type, shard.file);
        const cog = { kind, sources: [], grid: shard.grid, output, threads, skipEmpty: true, jpegQuality };
        const label = `${type} shard ${plan.shardZoom}/${shard.x}/${shard.y}`;
        const store = remote ? { store: key(`${type}/${shard.file}`) } : {};
        gridJobs.push({ job: { kind: 'grid', cog, label, ...store }, asset, shard: index });
      });
    }
  });
  for (const { job } of gridJobs) weights.set(job, job.cog.grid.width * job.cog.grid.height);
  const lowWeights = plans.map((plan) => (plan.layout === 'sharded' ? plan.low.width * plan.low.height : 0));
  const total = [...weights.values()].reduce((a, b) => a + b, 0) + lowWeights.reduce((a, b) => a + b, 0) || 1;
  let done = 0;

  const runPhase = async (jobs: IngestJob[], label: string): Promise<IngestJobResult[]> => {
    const results = await runner.finished(jobs);
    const pending = jobs.filter((_, i) => results[i] === undefined);
    for (const [i, job] of jobs.entries()) if (results[i]) done += weights.get(job) ?? 0;
    const fractions = new Array<number>(pending.length).fill(0);
    const base = done;
    const fresh = await runner.run(pending, (index, fraction) => {
      fractions[index] = fraction;
      const now = pending.reduce((sum, job, i) => sum + (weights.get(job) ?? 0) * (fractions[i] ?? 0), 0);
      say((base + now) / total, `${label} (${fractions.filter((f) => f >= 1).length}/${pending.length})`);
    });
    done = base + pending.reduce((sum, job) => sum + (weights.get(job) ?? 0), 0);
    let next = 0;
    return results.map((r) => r ?? (fresh[next++] as IngestJobResult));
  };

  say(0, 'starting');
  const collars = await runPhase(
    collarJobs.map((c) => c.job),
    'finding black collars',
  );
  collarJobs.forEach(({ job, asset, source }, i) => {
    const result = collars[i];
    const list = warpSources[asset] as WarpSource[];
    if (result?.kind === 'collar' && result.found && job.kind === 'collar') {
      list[source] = { ...(list[source] as WarpSource), collarState: readable(job.state, job.store) };
    }
  });
  for (const { job, asset } of gridJobs) {
    const sources = checked[asset]?.sources ?? [];
    const box = job.cog.grid.bounds;
    // Only the files whose extent reaches the grid: a shard of a 1,000-file delivery opens a few.
    job.cog.sources = (warpSources[asset] ?? []).filter(
      (_, i) => sources[i] !== undefined && boundsOverlap(sources[i].mercatorExtent, box),
    );
    await mkdir(dirname(job.cog.output), { recursive: true });
  }
  const gridResults = await runPhase(
    gridJobs.map((g) => g.job),
    'warping and writing COGs',
  );

  const lowJobs: Array<{ job: IngestJob & { kind: 'grid' }; asset: number }> = [];
  checked.forEach(({ type, sources }, asset) => {
    const plan = plans[asset] as AssetPlan;
    if (plan.layout !== 'sharded') return;
    const kind = sources[0]?.kind ?? 'rgb';
    const shardSources: WarpSource[] = [];
    gridJobs.forEach(({ job, asset: a }, i) => {
      const result = gridResults[i];
      if (a !== asset || result?.kind !== 'grid' || !result.written) return;
      shardSources.push({
        path: readable(job.cog.output, job.store),
        bands: kind === 'rgb' ? [1, 2, 3] : [1],
        hasInternalMask: kind === 'rgb',
        nodata: kind === 'rgb' ? undefined : DSM_NODATA,
      });
    });
    if (shardSources.length === 0) return;
    const output = join(staging, type, 'low.tif');
    const cog = { kind, sources: shardSources, grid: plan.low, output, threads, skipEmpty: false, jpegQuality };
    const store = remote ? { store: key(`${type}/low.tif`) } : {};
    const job: IngestJob & { kind: 'grid' } = { kind: 'grid', cog, label: `${type} low zooms`, ...store };
    weights.set(job, lowWeights[asset] ?? 0);
    lowJobs.push({ job, asset });
  });
  await runPhase(
    lowJobs.map((l) => l.job),
    'writing low zooms',
  );

  const written: WrittenAsset[] = [];
  for (const [index, { type, sources }] of checked.entries()) {
    const plan = plans[index] as AssetPlan;
    const first = sources[0] as SourceRaster;
    const gsd = Math.min(...sources.map((s) => s.gsd));
    const common = { type, gsd, kind: first.kind, version };
    const prefix = surveyFileKey(id, version, `${type}/`);
    say(1, `${type}: tracing the footprint`);
    if (plan.layout === 'copy' || plan.layout === 'single') {
      const path = join(staging, `${type}.tif`);
      const uri = key(`${type}.tif`);
      // A copied COG is this process's own work, stored at the end in either mode.
      const local = plan.layout === 'copy' || !remote;
      if (plan.layout === 'copy') await copyFile(first.path, path);
      const footprint = await traceFootprint(local ? path : storage.gdalPath(uri));
      const asset: Asset = { ...common, ...gridFields(plan.grid), uri };
      const files = new Map(local ? [[path, uri]] : []);
      written.push({ type, asset, footprint: nonEmpty(footprint, sources), files });
      continue;
    }
    const low = lowJobs.find((l) => l.asset === index);
    if (!low) throw noPixels(sources);
    const files = new Map<string, string>();
    const tiles: number[] = [];
    gridJobs.forEach(({ job, asset: a, shard }, i) => {
      const result = gridResults[i];
      if (a !== index || result?.kind !== 'grid' || !result.written || shard === undefined) return;
      const s = plan.shards[shard] as AssetPlanShard;
      tiles.push(s.x, s.y);
      if (!remote) files.set(job.cog.output, `${prefix}${s.file}`);
    });
    const lowKey = `${prefix}low.tif`;
    if (!remote) files.set(low.job.cog.output, lowKey);
    const lowPart = { uri: lowKey, ...gridFields(plan.low) };
    const footprint = await traceFootprint(readable(low.job.cog.output, low.job.store));
    const asset: Asset = {
      ...common,
      uri: lowKey,
      bounds: plan.bounds,
      width: plan.width,
      height: plan.height,
      minZoom: plan.low.minZoom,
      maxZoom: plan.zoom,
      shards: { zoom: plan.shardZoom, prefix, tiles, low: lowPart },
    };
    written.push({ type, asset, footprint: nonEmpty(footprint, sources), files });
  }
  return written;
}

type AssetPlan = AssetLayoutPlan | { layout: 'copy'; grid: CogGrid };
type AssetPlanShard = Extract<AssetLayoutPlan, { layout: 'sharded' }>['shards'][number];

/** An aligned COG given alone is stored as it is; anything else is laid out by asset-plan.ts. */
async function planAsset(asset: CheckedAsset, shardLevels?: number): Promise<AssetPlan> {
  const only = asset.sources.length === 1 ? asset.sources[0] : undefined;
  const aligned = only ? await alignedCogGrid(only) : undefined;
  if (aligned) return { layout: 'copy', grid: aligned };
  return planAssetLayout(asset.sources, shardLevels);
}

function warpSource(source: SourceRaster): WarpSource {
  const { path, bands, alphaBand, hasInternalMask, nodata, scaleToByte } = source;
  return { path, bands, alphaBand, hasInternalMask, nodata, scaleToByte };
}

function gridFields(grid: CogGrid) {
  return { minZoom: grid.minZoom, maxZoom: grid.zoom, bounds: grid.bounds, width: grid.width, height: grid.height };
}

function noPixels(sources: SourceRaster[]): NadirError {
  const files = sources.length === 1 ? sources[0]?.path : `${sources.length} files (${sources[0]?.path}, ...)`;
  return new NadirError('INVALID_SOURCE', `${files}: has no valid pixels (all nodata or masked)`);
}

function nonEmpty(footprint: MultiPolygon, sources: SourceRaster[]): MultiPolygon {
  if (footprint.length === 0) throw noPixels(sources);
  return footprint;
}
