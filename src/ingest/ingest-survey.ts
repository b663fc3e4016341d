import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { SurveyCatalogue } from '../catalogue/catalogue.js';
import type { Survey } from '../catalogue/survey.js';
import type { Clock } from '../clock.js';
import { NadirError } from '../errors.js';
import { DEFAULT_JPEG_QUALITY, SHARD_LEVELS } from '../geo/asset-layout.js';
import { removeRetired } from '../storage/garbage.js';
import { type SurveyStorage, surveyVersionPrefix } from '../storage/storage.js';
import { type CheckedAsset, checkDelivery, deliveryFingerprint, type IngestSettings } from './delivery.js';
import { unionFootprints } from './footprint.js';
import type { IngestQueue } from './ingest-queue.js';
import { readManifest, type SurveyManifest } from './manifest.js';
import { InProcessRunner, type JobRunner } from './worker-pool.js';
import type { IngestWorkspace } from './workspace.js';
import { WORK_FOLDER, type WrittenAsset, writeAssets } from './write-assets.js';

/** Share of the work storing the files is counted as in the progress fraction. */
const STORE_SHARE = 0.05;

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
  /**
   * A survey `nadir ingest --queue` sent (queued-ingest.ts), coordinated here: its version,
   * fingerprint and settings were fixed when it was sent, and a step stops waiting at `deadline`.
   */
  queued?: QueuedSurveyStep;
}

/** One step of coordinating a queued survey (queued-ingest.ts). */
export interface QueuedSurveyStep {
  version: number;
  fingerprint: string;
  settings: IngestSettings;
  /** performance.now() after which the step gives up waiting (ingest-queue.ts StepDeadline). */
  deadline?: number;
}

/** A queued survey's version, reserved when it was sent. */
export interface QueuedReservation {
  version: number;
  fingerprint: string;
  settings: IngestSettings;
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
  /** JPEG quality of stored imagery (cog-writer.ts DEFAULT_JPEG_QUALITY when not given). */
  jpegQuality?: number;
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
  readonly #settings: IngestSettings;

  constructor(parts: SurveyIngestorParts) {
    this.#catalogue = parts.catalogue;
    this.#workspace = parts.workspace;
    this.#storage = parts.storage;
    this.#now = parts.clock;
    this.#settings = {
      shardLevels: parts.shardLevels ?? SHARD_LEVELS,
      jpegQuality: parts.jpegQuality ?? DEFAULT_JPEG_QUALITY,
    };
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
    const checked = await checkDelivery(manifest, (label) => say(0, label));
    this.#mustWrite();
    const settings = options.queued?.settings ?? this.#settings;
    let runner = options.runner ?? new InProcessRunner();
    const unlock = await this.#workspace.lock(manifest.id);
    try {
      await this.#workspace.removeAbandonedStaging();
      const { staging, version } = options.queued
        ? await this.#queuedStaging(manifest, checked, options.queued)
        : await this.#resumableStaging(manifest, checked);
      if (options.queue) runner = options.queue.runner(manifest.id, version, this.#storage, options.queued?.deadline);
      const written = await writeAssets(
        this.#storage,
        manifest.id,
        version,
        checked,
        staging,
        runner,
        settings,
        (f, label) => say(f * (1 - STORE_SHARE), label),
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

  /**
   * `nadir ingest --queue`: the delivery checked here (an error names the file before anything is
   * queued) and the version its jobs will write. `previous` is what the queue last holds for this
   * survey: the same delivery whose version is still the newest reserved one and not yet visible
   * resumes under that version (its finished jobs kept); anything else reserves a new one.
   */
  async reserveQueued(
    manifest: SurveyManifest,
    onProgress: IngestProgress,
    previous: QueuedReservation | undefined,
  ): Promise<QueuedReservation> {
    const checked = await checkDelivery(manifest, (label) => onProgress({ survey: manifest.id, label, fraction: 0 }));
    this.#mustWrite();
    const settings = this.#settings;
    const fingerprint = await deliveryFingerprint(manifest, checked, settings);
    if (previous?.fingerprint === fingerprint && (await this.#stillReserved(manifest.id, previous.version))) {
      return previous;
    }
    return { version: await this.#catalogue.reserveVersion(manifest.id), fingerprint, settings };
  }

  #mustWrite(): void {
    if (this.#storage.writable) return;
    throw new NadirError(
      'INVALID_CONFIG',
      `${this.#storage.description} is read-only storage: ingest needs a folder or an s3:// bucket`,
    );
  }

  /** `version` is still the newest reserved for `id`, and no newer survey is visible. */
  async #stillReserved(id: string, version: number): Promise<boolean> {
    const reservation = (await this.#catalogue.reservations()).get(id);
    const current = await this.#catalogue.get(id);
    return reservation?.version === version && (current?.version ?? 0) < version;
  }

  /**
   * A queued survey's staging: a fresh local folder (the jobs' outputs are in the survey storage,
   * where any machine's step finds them) under the version reserved when it was sent.
   */
  async #queuedStaging(
    manifest: SurveyManifest,
    checked: CheckedAsset[],
    step: QueuedSurveyStep,
  ): Promise<{ staging: string; version: number }> {
    if ((await deliveryFingerprint(manifest, checked, step.settings)) !== step.fingerprint) {
      throw new NadirError(
        'INVALID_SOURCE',
        `survey ${manifest.id}: its files changed after it was queued; run nadir ingest --queue again`,
      );
    }
    if (!(await this.#stillReserved(manifest.id, step.version))) {
      throw new NadirError(
        'INVALID_SOURCE',
        `survey ${manifest.id} version ${step.version}: superseded by a later ingest of the same id`,
      );
    }
    const staging = this.#workspace.surveyStaging(manifest.id);
    await rm(staging, { recursive: true, force: true });
    await mkdir(staging, { recursive: true });
    return { staging, version: step.version };
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
    const fingerprint = await deliveryFingerprint(manifest, checked, this.#settings);
    const statePath = join(staging, 'ingest.json');
    const previous = await readFile(statePath, 'utf8')
      .then((text) => JSON.parse(text) as StagingState)
      .catch(() => undefined);
    if (previous?.fingerprint === fingerprint && (await this.#stillReserved(manifest.id, previous.version))) {
      return { staging, ...previous };
    }
    await rm(staging, { recursive: true, force: true });
    await mkdir(staging, { recursive: true });
    const version = await this.#catalogue.reserveVersion(manifest.id);
    await writeFile(statePath, JSON.stringify({ fingerprint, version } satisfies StagingState));
    return { staging, fingerprint, version };
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
