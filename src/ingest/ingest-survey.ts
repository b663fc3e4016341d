import { createHash } from 'node:crypto';
import { copyFile, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { SurveyCatalogue } from '../catalogue/catalogue.js';
import type { Asset, ContentType, Survey } from '../catalogue/survey.js';
import type { Clock } from '../clock.js';
import { NadirError } from '../errors.js';
import { DSM_NODATA, SHARD_LEVELS } from '../geo/asset-layout.js';
import type { CogGrid } from '../geo/cog-grid.js';
import type { MultiPolygon } from '../geo/polygon.js';
import { boundsOverlap } from '../geo/web-mercator.js';
import { removeRetired } from '../storage/garbage.js';
import { type SurveyStorage, surveyFileKey, surveyVersionPrefix } from '../storage/storage.js';
import { alignedCogGrid } from './aligned-cog.js';
import { type AssetLayoutPlan, planAssetLayout } from './asset-plan.js';
import type { WarpSource } from './cog-writer.js';
import { traceFootprint, unionFootprints } from './footprint.js';
import type { IngestJob, IngestJobResult } from './ingest-jobs.js';
import type { IngestQueue } from './ingest-queue.js';
import { readManifest, type SurveyManifest, sourceFiles } from './manifest.js';
import { inspectSource, type SourceRaster } from './source.js';
import { InProcessRunner, type JobRunner } from './worker-pool.js';
import type { IngestWorkspace } from './workspace.js';

/** The folder of a version's work files in queue mode (collar states, markers); gone at commit. */
const WORK_FOLDER = '.ingest/';

/** Share of the work storing the files is counted as in the progress fraction. */
const STORE_SHARE = 0.05;
/** A collar pass reads a source once, about this share of what warping and writing it costs. */
const COLLAR_WEIGHT = 0.3;

export interface IngestProgressEvent {
  survey: string;
  /** What is happening, e.g. `TrueOrtho: writing COG`. */
  label: string;
  /** 0..1 over the whole survey. */
  fraction: number;
}

export type IngestProgress = (event: IngestProgressEvent) => void;

export interface IngestOptions {
  /** Where the jobs run: this process (the default) or a pool of worker processes. */
  runner?: JobRunner;
  /** Or on `nadir worker`s anywhere, through the queue on PostgreSQL (ingest-queue.ts). */
  queue?: Pick<IngestQueue, 'runner'>;
}

export interface SurveyIngestorParts {
  catalogue: SurveyCatalogue;
  /** Where the COGs are written first: local staging, and one ingest per survey at a time. */
  workspace: IngestWorkspace;
  /** Where they end up: the folder, the bucket. */
  storage: SurveyStorage;
  clock: Clock;
  /** Levels a shard holds (geo/asset-layout.ts SHARD_LEVELS); tests use fewer to shard small rasters. */
  shardLevels?: number;
}

/** One asset as checked: its content type and its source files. */
interface CheckedAsset {
  type: ContentType;
  sources: SourceRaster[];
}

/** The staged files of an asset and its catalogue entry (without its storage keys). */
interface WrittenAsset {
  type: ContentType;
  asset: Asset;
  footprint: MultiPolygon;
  /** Staged path -> storage key. */
  files: Map<string, string>;
}

/** What a run leaves in its staging folder so that a re-run of the same delivery resumes. */
interface StagingState {
  fingerprint: string;
  version: number;
}

/**
 * Turns a manifest's source rasters into grid-aligned COGs and a catalogue entry, atomically:
 * every source is checked before anything is written, the COGs are written by jobs (in this
 * process or on worker processes) to a staging folder of the survey's own, then stored (moved
 * into the folder, or uploaded to the bucket) under a version nothing references yet, and only
 * then does one catalogue transaction make the survey visible. A killed run leaves its finished
 * jobs' files in the staging folder; running the same manifest again resumes from them.
 */
export class SurveyIngestor {
  readonly #catalogue: SurveyCatalogue;
  readonly #workspace: IngestWorkspace;
  readonly #storage: SurveyStorage;
  readonly #now: Clock;
  readonly #shardLevels: number;

  constructor(parts: SurveyIngestorParts) {
    this.#catalogue = parts.catalogue;
    this.#workspace = parts.workspace;
    this.#storage = parts.storage;
    this.#now = parts.clock;
    this.#shardLevels = parts.shardLevels ?? SHARD_LEVELS;
  }

  async ingestManifestFile(path: string, onProgress?: IngestProgress, options?: IngestOptions): Promise<Survey> {
    return this.ingest(await readManifest(path), onProgress, options);
  }

  async ingest(
    manifest: SurveyManifest,
    onProgress: IngestProgress = () => {},
    options: IngestOptions = {},
  ): Promise<Survey> {
    const say = (fraction: number, label: string) =>
      onProgress({ survey: manifest.id, label, fraction: Math.min(1, fraction) });
    say(0, 'checking sources');
    const listed: Array<[ContentType, string[]]> = [];
    for (const [type, entry] of Object.entries(manifest.assets) as [ContentType, string | string[]][]) {
      listed.push([type, await sourceFiles(type, entry)]);
    }
    const count = listed.reduce((sum, [, files]) => sum + files.length, 0);
    const checked: CheckedAsset[] = [];
    let seen = 0;
    for (const [type, files] of listed) {
      const sources: SourceRaster[] = [];
      for (const file of files) {
        say(0, `checking sources (${++seen}/${count})`);
        sources.push(await inspectSource(type, file));
      }
      checked.push({ type, sources });
    }
    if (!this.#storage.writable) {
      throw new NadirError(
        'INVALID_CONFIG',
        `${this.#storage.description} is read-only storage: ingest needs a folder or an s3:// bucket`,
      );
    }
    let runner = options.runner ?? new InProcessRunner();
    const unlock = await this.#workspace.lock(manifest.id);
    try {
      await this.#workspace.removeAbandonedStaging();
      const { staging, version } = await this.#resumableStaging(manifest, checked);
      if (options.queue) runner = options.queue.runner(manifest.id, version, this.#storage);
      const written = await this.#writeAssets(manifest.id, version, checked, staging, runner, (f, label) =>
        say(f * (1 - STORE_SHARE), label),
      );
      const files = written.flatMap((w) => [...w.files]);
      for (const [index, [path, key]] of files.entries()) {
        say(
          1 - STORE_SHARE + (index / files.length) * STORE_SHARE,
          `storing ${basename(path)} in ${this.#storage.description}`,
        );
        await this.#storage.put(key, path);
      }
      const survey = this.#survey(manifest, version, written);
      await this.#catalogue.put(survey);
      if (runner.storesOutputs) await this.#removeWorkFiles(manifest.id, version);
      await rm(staging, { recursive: true, force: true });
      // The version this one replaced stays readable for a grace period; older ones go now.
      await removeRetired(this.#storage, this.#catalogue, { now: this.#now() });
      say(1, 'done');
      return survey;
    } finally {
      if (!options.runner) await runner.close();
      await unlock();
    }
  }

  /** Queue mode's collar states and no-output markers, once the survey no longer needs them. */
  async #removeWorkFiles(id: string, version: number): Promise<void> {
    const work: string[] = [];
    for await (const { key } of this.#storage.list(surveyVersionPrefix(id, version))) {
      if (key.includes(`/${WORK_FOLDER}`) || key.endsWith('.empty') || key.endsWith('.none')) work.push(key);
    }
    if (work.length > 0) await this.#storage.delete(work);
  }

  /**
   * Removes a survey from the catalogue at once; its files go after the grace period, since
   * servers may still be reading them (storage/garbage.ts). False when there was no such survey.
   */
  async delete(id: string): Promise<boolean> {
    const unlock = await this.#workspace.lock(id);
    try {
      if (!(await this.#catalogue.delete(id))) return false;
      await removeRetired(this.#storage, this.#catalogue, { now: this.#now() });
      return true;
    } finally {
      await unlock();
    }
  }

  /**
   * The survey's staging folder and version. The same delivery (manifest, files, sizes and times)
   * whose version is still the newest reserved one resumes where a killed run stopped; anything
   * else starts afresh under a new version.
   */
  async #resumableStaging(
    manifest: SurveyManifest,
    checked: CheckedAsset[],
  ): Promise<StagingState & { staging: string }> {
    const staging = this.#workspace.surveyStaging(manifest.id);
    const fingerprint = await deliveryFingerprint(manifest, checked, this.#shardLevels);
    const statePath = join(staging, 'ingest.json');
    const previous = await readFile(statePath, 'utf8')
      .then((text) => JSON.parse(text) as StagingState)
      .catch(() => undefined);
    if (previous?.fingerprint === fingerprint) {
      const reservation = (await this.#catalogue.reservations()).get(manifest.id);
      const current = await this.#catalogue.get(manifest.id);
      if (reservation?.version === previous.version && (current?.version ?? 0) < previous.version) {
        return { staging, ...previous };
      }
    }
    await rm(staging, { recursive: true, force: true });
    await mkdir(staging, { recursive: true });
    const version = await this.#catalogue.reserveVersion(manifest.id);
    await writeFile(statePath, JSON.stringify({ fingerprint, version } satisfies StagingState));
    return { staging, fingerprint, version };
  }

  async #writeAssets(
    id: string,
    version: number,
    checked: CheckedAsset[],
    staging: string,
    runner: JobRunner,
    say: (fraction: number, label: string) => void,
  ): Promise<WrittenAsset[]> {
    const threads = runner.threadsPerJob;
    const remote = runner.storesOutputs;
    // Queue mode: each job puts its output at its final key (or, for collar states, under the
    // version's .ingest/ work folder) itself; GDAL then reads them through the storage.
    const key = (file: string) => surveyFileKey(id, version, file);
    const readable = (local: string, stored: string | undefined) =>
      remote && stored ? this.#storage.gdalPath(stored) : local;
    const plans = await Promise.all(checked.map((a) => planAsset(a, this.#shardLevels)));
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
        };
        const store = remote ? { store: key(`${type}.tif`) } : {};
        gridJobs.push({ job: { kind: 'grid', cog, label: `${type} COG`, ...store }, asset });
      } else if (plan.layout === 'sharded') {
        plan.shards.forEach((shard, index) => {
          const output = join(staging, type, shard.file);
          const cog = { kind, sources: [], grid: shard.grid, output, threads, skipEmpty: true };
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
      const cog = { kind, sources: shardSources, grid: plan.low, output, threads, skipEmpty: false };
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
        const footprint = await traceFootprint(local ? path : this.#storage.gdalPath(uri));
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

  #survey(manifest: SurveyManifest, version: number, written: WrittenAsset[]): Survey {
    const assets: Survey['assets'] = {};
    for (const { asset } of written) assets[asset.type] = asset;
    return {
      id: manifest.id,
      captureDate: manifest.captureDate,
      firstPhotoTime: manifest.firstPhotoTime,
      lastPhotoTime: manifest.lastPhotoTime,
      ...(manifest.timezone ? { timezone: manifest.timezone } : {}),
      tags: manifest.tags,
      footprint: unionFootprints(written.map((w) => w.footprint)),
      version,
      assets,
      ingestedAt: this.#now().toISOString(),
    };
  }
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

/** Same manifest, same files (size and modification time), same layout: the same delivery. */
async function deliveryFingerprint(manifest: SurveyManifest, checked: CheckedAsset[], shardLevels: number) {
  const hash = createHash('sha256');
  hash.update(JSON.stringify({ manifest, shardLevels }));
  for (const { sources } of checked) {
    for (const { path } of sources) {
      const { size, mtimeMs } = await stat(path);
      hash.update(`${path}\0${size}\0${mtimeMs}\0`);
    }
  }
  return hash.digest('hex');
}
