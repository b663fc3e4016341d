import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import gdal from 'gdal-async';
import type { Logger } from 'pino';
import sharp from 'sharp';
import type { AccountStore } from './accounts/index.js';
import { TileUsageCounter } from './accounts/tile-usage.js';
import { createLogger, type LogDestination } from './api/http/log-safety.js';
import type { SurveyCatalogue } from './catalogue/catalogue.js';
import { ChangeTiles } from './change/change-tiles.js';
import type { Clock } from './clock.js';
import type { Config } from './config/config.js';
import { CoverageAnswers } from './coverage/coverage-answers.js';
import { HeightTiles } from './height-tiles/height-tiles.js';
import { SurveyIngestor } from './ingest/ingest-survey.js';
import { IngestWorkspace } from './ingest/workspace.js';
import { MemoryRateLimiter, type RateLimiter } from './limits/rate-limiter.js';
import { RedisRateLimiter } from './limits/redis-rate-limiter.js';
import {
  databaseCalls,
  measuredAccounts,
  measuredRateLimiter,
  measuredStorage,
  tileObserver,
} from './metrics/measured-parts.js';
import { NadirMetrics } from './metrics/nadir-metrics.js';
import { boundRasterMemory, RasterEngine } from './raster/index.js';
import { gdalStorageSettings, openStorage } from './storage/open-storage.js';
import type { SurveyStorage } from './storage/storage.js';
import { openStores, type StoreEvents } from './stores/open-stores.js';
import { DEFAULT_TILE_ENGINE_OPTIONS, TileEngine } from './tiles/tile-engine.js';
import { TileResponder } from './tiles/tile-responder.js';
import { generateTokenSecret, parseTokenKeyring, TokenCodec, type TokenKeyring } from './tokens/index.js';
import {
  bothObservers,
  TracedRasterEngine,
  tileSteps,
  tracedCatalogue,
  tracedStorage,
} from './tracing/traced-parts.js';
import { Tracing } from './tracing/tracing.js';

/** Everything nadir runs on, built from one parsed config. The only place that wires modules. */
export interface Services {
  config: Config;
  /** The one clock every part below reads the time from. */
  clock: Clock;
  /** The process's JSON logger; each line names the server (config.serverId). */
  log: Logger;
  catalogue: SurveyCatalogue;
  accounts: AccountStore;
  /** Where survey files are: the data folder, a bucket, or read-only HTTP. */
  storage: SurveyStorage;
  ingestor: SurveyIngestor;
  /** Issues and decodes transaction tokens (keyring from config, else `<dataDir>/token-secrets`). */
  tokens: TokenCodec;
  /** Renders AOI downloads, with admission control bounding their memory. */
  raster: RasterEngine;
  /** Answers tile requests: the tile core every HTTP entrance is an adapter of. */
  tiles: TileResponder;
  /** Answers coverage requests: the coverage core (request rules, page cache, survey JSON). */
  coverage: CoverageAnswers;
  /** Map tiles' machinery: catalogue lookups, COG reads and compositing, with their caches. */
  tileEngine: TileEngine;
  /** DsmChange map tiles: height change of two surveys on the tile grid, through `raster`. */
  changeTiles: ChangeTiles;
  /** DetailDsm map tiles (src/height-tiles/). */
  heightTiles: HeightTiles;
  /** Per-key tile rate limits. */
  rateLimiter: RateLimiter;
  /** Tiles served per account and month, written in batches. */
  tileUsage: TileUsageCounter;
  /** Prometheus metrics, when config.metrics asks for them (the parts above then record into them). */
  metrics?: NadirMetrics;
  /** OpenTelemetry traces, when config.tracing names an exporter. */
  tracing?: Tracing;
  close(): Promise<void>;
}

/**
 * The transaction-token keyring: NADIR_TOKEN_SECRETS when set, else a secret generated on first
 * start and kept in `<dataDir>/token-secrets` (mode 0600), so tokens survive restarts of a
 * single-host install without any set-up. The file appears complete or not at all (written
 * aside, then hard-linked, which fails if it exists), so two processes starting at once agree
 * on one secret: the loser of the race reads the winner's file.
 */
function loadTokenKeyring(config: Config): TokenKeyring {
  if (config.tokenSecrets) return parseTokenKeyring(config.tokenSecrets);
  const file = join(config.dataDir, 'token-secrets');
  if (!existsSync(file)) {
    mkdirSync(config.dataDir, { recursive: true });
    const staged = `${file}.${process.pid}.tmp`;
    try {
      writeFileSync(staged, `${generateTokenSecret()}\n`, { mode: 0o600 });
      linkSync(staged, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      rmSync(staged, { force: true });
    }
  }
  return parseTokenKeyring(readFileSync(file, 'utf8'));
}

/**
 * GDAL settings for the whole process. PAM off: computing statistics of a source (16-bit
 * imagery) must not leave a .aux.xml beside the customer's file, nor beside our outputs. GDAL's
 * block cache and glibc's malloc bounded for raster renders (raster/memory.ts).
 */
function configureGdal(config: Config): void {
  gdal.config.set('GDAL_PAM_ENABLED', 'NO');
  for (const [name, value] of Object.entries(gdalStorageSettings(config.storage))) gdal.config.set(name, value);
  boundRasterMemory();
}

/**
 * sharp for 256 x 256 tiles: libvips' operation cache only holds on to memory for images we never
 * see twice, and one vips thread per operation is enough when the libuv pool already runs several
 * tiles at once (measured: more threads only add overhead at this size).
 */
function configureSharp(): void {
  sharp.cache(false);
  sharp.concurrency(1);
}

/** How often batched tile counts are written to the usage ledger. */
const TILE_USAGE_FLUSH_MS = 5_000;

/** Parts chosen by how the process runs rather than by the config. */
export interface ServiceChoices {
  /** A `nadir serve --workers` worker without Redis leases its rate limits from the primary. */
  rateLimiter?: RateLimiter;
  /** Where log lines go (default stdout); tests pass a collector to read them. */
  logStream?: LogDestination;
}

/**
 * What writes and removes surveys (`nadir ingest`, `worker`, `demo`, `surveys delete`, `storage
 * gc`): the stores, the survey files and the ingestor. No Redis, no tile or raster engine, no
 * token keyring: a command opens what it uses (createServices adds the rest for `serve`).
 */
export interface SurveyWriter {
  clock: Clock;
  catalogue: SurveyCatalogue;
  accounts: AccountStore;
  storage: SurveyStorage;
  ingestor: SurveyIngestor;
  close(): Promise<void>;
}

export async function openSurveyWriter(config: Config, clock: Clock): Promise<SurveyWriter> {
  configureGdal(config);
  return openSurveyParts(config, clock, {});
}

async function openSurveyParts(config: Config, clock: Clock, events: StoreEvents): Promise<SurveyWriter> {
  const stores = await openStores(config.database, clock, events);
  let storage: SurveyStorage;
  try {
    // An S3-compatible store checks each request's signature time against its own clock, so reads
    // are signed with the wall clock, as the SDK and GDAL sign theirs, whatever the service's clock
    // says (a test's clock set years away would have every read refused).
    storage = await openStorage(config.storage, { signingTime: () => new Date() });
  } catch (error) {
    await stores.close();
    throw error;
  }
  const { catalogue, accounts } = stores;
  const ingestor = new SurveyIngestor({
    catalogue,
    workspace: new IngestWorkspace(config.dataDir),
    storage,
    clock,
    jpegQuality: config.ingestJpegQuality,
  });
  return {
    clock,
    catalogue,
    accounts,
    storage,
    ingestor,
    async close() {
      await storage.close();
      await stores.close();
    },
  };
}

/** Tile rate limits: shared through Redis when configured, else this process's own counters. */
async function openRateLimiter(config: Config, log: Logger, metrics?: NadirMetrics): Promise<RateLimiter> {
  if (!config.redisUrl) return new MemoryRateLimiter();
  return RedisRateLimiter.connect(
    config.redisUrl,
    {
      unavailable: (error) => {
        metrics?.redisFallbacks.inc();
        log.warn(
          { err: error },
          'Redis unreachable: tile rate limits are counted by each process alone until it is back',
        );
      },
      recovered: () => log.info('Redis reachable again: tile rate limits are shared again'),
    },
    config.redisTimeoutMs,
  );
}

/**
 * Builds everything from one parsed config and one clock (the system clock in production; tests
 * pass one they set). Everything that reads the time gets this clock.
 */
export async function createServices(config: Config, clock: Clock, choices: ServiceChoices = {}): Promise<Services> {
  configureGdal(config);
  configureSharp();
  // Traces when OTEL_* name an endpoint; every log line of a request then carries its trace id.
  const tracing = config.tracing && new Tracing(config.tracing, config.serverId);
  const log = createLogger(config.logLevel, config.serverId, choices.logStream, tracing && (() => tracing.logFields()));
  // First, so a bad keyring fails before the database is opened.
  const tokens = new TokenCodec(loadTokenKeyring(config), { now: clock });
  const metrics = config.metrics ? new NadirMetrics() : undefined;
  const writer = await openSurveyParts(config, clock, {
    onOpen: (error) =>
      log.error({ err: error }, 'PostgreSQL unavailable: requests that need it answer 503 until it is back'),
    onClose: () => log.info('PostgreSQL reachable again'),
    onCall: metrics && databaseCalls(metrics),
  });
  let rateLimiter: RateLimiter;
  try {
    rateLimiter = choices.rateLimiter ?? (await openRateLimiter(config, log, metrics));
  } catch (error) {
    await writer.close();
    throw error;
  }
  // Redis round trips timed (a worker leasing from its primary counts in memory there).
  if (metrics && config.redisUrl) rateLimiter = measuredRateLimiter(rateLimiter, metrics);
  if (config.database.engine === 'postgres' && !config.tokenSecrets) {
    log.warn(
      "NADIR_TOKEN_SECRETS is not set: this server signs tokens with its own data folder's secret, which servers on other machines will refuse",
    );
  }
  const { ingestor } = writer;
  // Measured and traced where metrics and tracing are on: the same parts with a recorder around
  // them (metrics/measured-parts.ts, tracing/traced-parts.ts).
  const accounts = metrics ? measuredAccounts(writer.accounts, metrics) : writer.accounts;
  let storage = metrics ? measuredStorage(writer.storage, config.storage.kind, metrics) : writer.storage;
  if (tracing) storage = tracedStorage(storage, tracing, config.storage.kind);
  const catalogue = tracing ? tracedCatalogue(writer.catalogue, tracing, config.database.engine) : writer.catalogue;
  const tileEngine = new TileEngine(catalogue, storage, {
    ...DEFAULT_TILE_ENGINE_OPTIONS,
    pixelCacheMb: config.tileCacheMb,
    // The cores are shared by the serve workers: one image task per core in all.
    imageSlots: Math.max(1, Math.floor(availableParallelism() / config.workers)),
  });
  const tileUsage = new TileUsageCounter(accounts, TILE_USAGE_FLUSH_MS);
  const observer = bothObservers(metrics && tileObserver(metrics), tracing && tileSteps(tracing));
  const tiles = new TileResponder({
    engine: tileEngine,
    surveys: catalogue,
    rateLimiter,
    usage: tileUsage,
    clock,
    observer,
  });
  const rasterOptions = {
    storage,
    // Remote storage: a render whose store stops answering is a 503 within about this.
    storageTimeoutMs: config.storage.kind === 'local' ? undefined : config.storage.timeoutMs,
    admission: { budget: config.rasterBudgetMb * 1024 * 1024, maxWaitMs: config.rasterQueueMs },
  };
  const raster = tracing ? new TracedRasterEngine(rasterOptions).traceWith(tracing) : new RasterEngine(rasterOptions);
  metrics?.readAtScrape({
    rasterAdmission: () => raster.admission.stats,
    tileCaches: () => ({
      answers: tiles.answerCacheStats,
      ...tileEngine.cacheStats,
      ...(writer.storage.blocks ? { blocks: writer.storage.blocks.stats } : {}),
    }),
    engines: { database: () => catalogue.ping(), redis: config.redisUrl ? () => rateLimiter.ping() : undefined },
  });
  return {
    config,
    clock,
    log,
    catalogue,
    accounts,
    storage,
    ingestor,
    tokens,
    raster,
    tiles,
    changeTiles: new ChangeTiles({ catalogue, raster, usage: tileUsage, clock }),
    heightTiles: new HeightTiles({ catalogue, raster, usage: tileUsage, clock }),
    coverage: new CoverageAnswers(catalogue, { maxMb: config.coverageCacheMb }),
    tileEngine,
    rateLimiter,
    tileUsage,
    metrics,
    tracing,
    async close() {
      tileEngine.close();
      // Counts first, while the database is still open: a stopped server loses none.
      await tileUsage.close();
      await rateLimiter.close();
      await writer.close();
      // Last: what the closing did is traced too.
      await tracing?.close();
    },
  };
}
