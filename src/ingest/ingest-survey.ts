import { readdir, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { SurveyCatalogue } from '../catalogue/catalogue.js';
import type { Asset, ContentType, Survey } from '../catalogue/survey.js';
import type { Clock } from '../clock.js';
import { NadirError } from '../errors.js';
import type { MultiPolygon } from '../geo/polygon.js';
import { removeRetired } from '../storage/garbage.js';
import { type SurveyStorage, surveyFileKey } from '../storage/storage.js';
import { writeCog } from './cog-writer.js';
import { traceFootprint, unionFootprints } from './footprint.js';
import { readManifest, type SurveyManifest } from './manifest.js';
import { inspectSource, type SourceRaster } from './source.js';
import type { IngestWorkspace } from './workspace.js';

/** Share of an asset's work its storing is counted as in the progress fraction. */
const STORE_SHARE = 0.1;

export interface IngestProgressEvent {
  survey: string;
  /** What is happening, e.g. `TrueOrtho: writing COG`. */
  label: string;
  /** 0..1 over the whole survey. */
  fraction: number;
}

export type IngestProgress = (event: IngestProgressEvent) => void;

interface IngestedAsset {
  asset: Omit<Asset, 'uri'>;
  file: string;
  footprint: MultiPolygon;
}

export interface SurveyIngestorParts {
  catalogue: SurveyCatalogue;
  /** Where the COGs are written first: local staging, and one ingest per survey at a time. */
  workspace: IngestWorkspace;
  /** Where they end up: the folder, the bucket. */
  storage: SurveyStorage;
  clock: Clock;
}

/**
 * Turns a manifest's source rasters into grid-aligned COGs and a catalogue entry, atomically:
 * every source is validated before anything is written, the COGs are written to a local staging
 * folder, then stored (moved into the folder, or uploaded to the bucket) under a version nothing
 * references yet, and only then does one catalogue transaction make the survey visible.
 */
export class SurveyIngestor {
  readonly #catalogue: SurveyCatalogue;
  readonly #workspace: IngestWorkspace;
  readonly #storage: SurveyStorage;
  readonly #now: Clock;

  constructor(parts: SurveyIngestorParts) {
    this.#catalogue = parts.catalogue;
    this.#workspace = parts.workspace;
    this.#storage = parts.storage;
    this.#now = parts.clock;
  }

  async ingestManifestFile(path: string, onProgress?: IngestProgress): Promise<Survey> {
    return this.ingest(await readManifest(path), onProgress);
  }

  async ingest(manifest: SurveyManifest, onProgress: IngestProgress = () => {}): Promise<Survey> {
    const entries = Object.entries(manifest.assets) as [ContentType, string][];
    // One unit of work per asset written, a tenth of one per asset stored (a rename, or an upload).
    const total = entries.length * (1 + STORE_SHARE);
    const report = (done: number, label: string) =>
      onProgress({ survey: manifest.id, label, fraction: Math.min(1, done / total) });

    report(0, 'checking sources');
    const sources: SourceRaster[] = [];
    for (const [type, path] of entries) sources.push(await inspectSource(type, path));

    if (!this.#storage.writable) {
      throw new NadirError(
        'INVALID_CONFIG',
        `${this.#storage.description} is read-only storage: ingest needs a folder or an s3:// bucket`,
      );
    }
    const unlock = await this.#workspace.lock(manifest.id);
    let staging: string | undefined;
    try {
      await this.#workspace.removeAbandonedStaging();
      const version = await this.#catalogue.reserveVersion(manifest.id);
      staging = await this.#workspace.createStaging(manifest.id);
      const written: IngestedAsset[] = [];
      for (const [index, source] of sources.entries()) {
        const label = `${source.type}: ${basename(source.path)}`;
        written.push(await this.#ingestAsset(source, staging, version, (f) => report(index + f, `${label} -> COG`)));
      }
      await cleanTemporaryFiles(staging, written);
      for (const [index, { file }] of written.entries()) {
        report(sources.length + index * STORE_SHARE, `storing ${file} in ${this.#storage.description}`);
        await this.#storage.put(surveyFileKey(manifest.id, version, file), join(staging, file));
      }
      const survey = this.#survey(manifest, version, written);
      await this.#catalogue.put(survey);
      // The version this one replaced stays readable for a grace period; older ones go now.
      await removeRetired(this.#storage, this.#catalogue, { now: this.#now() });
      report(total, 'done');
      return survey;
    } finally {
      if (staging) await rm(staging, { recursive: true, force: true });
      await unlock();
    }
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

  async #ingestAsset(
    source: SourceRaster,
    staging: string,
    version: number,
    progress: (fraction: number) => void,
  ): Promise<IngestedAsset> {
    const file = `${source.type}.tif`;
    const path = join(staging, file);
    const { grid } = await writeCog(source, path, staging, (f) => progress(f * 0.9));
    const footprint = await traceFootprint(path);
    if (footprint.length === 0) {
      throw new NadirError('INVALID_SOURCE', `${source.path}: has no valid pixels (all nodata or masked)`);
    }
    progress(1);
    return {
      file,
      footprint,
      asset: {
        type: source.type,
        gsd: source.gsd,
        maxZoom: grid.zoom,
        minZoom: grid.minZoom,
        bounds: grid.bounds,
        width: grid.width,
        height: grid.height,
        kind: source.kind,
        version,
      },
    };
  }

  #survey(manifest: SurveyManifest, version: number, written: IngestedAsset[]): Survey {
    const assets: Survey['assets'] = {};
    for (const { asset, file } of written) {
      assets[asset.type] = { ...asset, uri: surveyFileKey(manifest.id, version, file) };
    }
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

/** Collar masks and VRTs are inputs to the COGs, not part of the survey. */
async function cleanTemporaryFiles(staging: string, written: IngestedAsset[]): Promise<void> {
  const keep = new Set(written.map((w) => w.file));
  for (const name of await readdir(staging)) {
    if (!keep.has(name)) await rm(join(staging, name), { force: true });
  }
}
