import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import gdal from 'gdal-async';
import sharp from 'sharp';
import type { AccountStore } from './accounts/index.js';
import { SqliteAccountStore } from './accounts/index.js';
import { TileUsageCounter } from './accounts/tile-usage.js';
import type { SurveyCatalogue } from './catalogue/catalogue.js';
import { SqliteSurveyCatalogue } from './catalogue/sqlite-catalogue.js';
import type { Clock } from './clock.js';
import type { Config } from './config/config.js';
import { openSqlite } from './db/sqlite.js';
import { SurveyIngestor } from './ingest/ingest-survey.js';
import { SurveyFiles } from './ingest/survey-files.js';
import { MemoryRateLimiter, type RateLimiter } from './limits/rate-limiter.js';
import { RasterEngine } from './raster/index.js';
import { DEFAULT_TILE_ENGINE_OPTIONS, TileEngine } from './tiles/tile-engine.js';
import { TileResponder } from './tiles/tile-responder.js';
import { generateTokenSecret, parseTokenKeyring, TokenCodec, type TokenKeyring } from './tokens/index.js';

/** Everything nadir runs on, built from one parsed config. The only place that wires modules. */
export interface Services {
  config: Config;
  /** The one clock every part below reads the time from. */
  clock: Clock;
  catalogue: SurveyCatalogue;
  accounts: AccountStore;
  files: SurveyFiles;
  ingestor: SurveyIngestor;
  /** Issues and decodes transaction tokens (keyring from config, else `<dataDir>/token-secrets`). */
  tokens: TokenCodec;
  /** Renders AOI downloads, with admission control bounding their memory. */
  raster: RasterEngine;
  /** Answers tile requests: the tile core every HTTP entrance is an adapter of. */
  tiles: TileResponder;
  /** Map tiles' machinery: catalogue lookups, COG reads and compositing, with their caches. */
  tileEngine: TileEngine;
  /** Per-key tile rate limits. */
  rateLimiter: RateLimiter;
  /** Tiles served per account and month, written in batches. */
  tileUsage: TileUsageCounter;
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
 * imagery) must not leave a .aux.xml beside the customer's file, nor beside our outputs.
 */
function configureGdal(): void {
  gdal.config.set('GDAL_PAM_ENABLED', 'NO');
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

/** The wall clock: what `nadir` runs on. The only place in the service that reads it. */
export const systemClock: Clock = () => new Date();

/** Parts chosen by how the process runs rather than by the config. */
export interface ServiceChoices {
  /** A `nadir serve --workers` worker leases its rate limits from the primary (rate-lease.ts). */
  rateLimiter?: RateLimiter;
}

/** `clock`: the system clock in production; tests pass one they set. Everything gets this one. */
export function createServices(config: Config, clock: Clock, choices: ServiceChoices = {}): Services {
  configureGdal();
  configureSharp();
  // First, so a bad keyring fails before the database is opened.
  const tokens = new TokenCodec(loadTokenKeyring(config), { now: clock });
  const db = openSqlite(config.databasePath);
  const catalogue = new SqliteSurveyCatalogue(db);
  const accounts = new SqliteAccountStore(db, { now: clock });
  const files = new SurveyFiles(config.dataDir);
  const ingestor = new SurveyIngestor(catalogue, files, clock);
  const tileEngine = new TileEngine(catalogue, {
    ...DEFAULT_TILE_ENGINE_OPTIONS,
    pixelCacheMb: config.tileCacheMb,
    // The cores are shared by the serve workers: one image task per core in all.
    imageSlots: Math.max(1, Math.floor(availableParallelism() / config.workers)),
  });
  const tileUsage = new TileUsageCounter(accounts, TILE_USAGE_FLUSH_MS);
  const rateLimiter = choices.rateLimiter ?? new MemoryRateLimiter();
  const tiles = new TileResponder({ engine: tileEngine, surveys: catalogue, rateLimiter, usage: tileUsage, clock });
  return {
    config,
    clock,
    catalogue,
    accounts,
    files,
    ingestor,
    tokens,
    raster: new RasterEngine({
      admission: { budget: config.rasterBudgetMb * 1024 * 1024, maxWaitMs: config.rasterQueueMs },
    }),
    tiles,
    tileEngine,
    rateLimiter,
    tileUsage,
    async close() {
      tileEngine.close();
      await tileUsage.close();
      db.close();
    },
  };
}
