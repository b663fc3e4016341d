import { totalmem } from 'node:os';
import type { StorageConfig } from '../config/config.js';
import { NadirError } from '../errors.js';
import { HttpStorage } from './http-storage.js';
import { LocalStorage } from './local-storage.js';
import { S3Storage } from './s3-storage.js';
import type { SurveyStorage } from './storage.js';

export interface StorageOptions {
  /**
   * The time S3 range reads are signed with (s3-storage.ts): without it they go through the SDK,
   * which signs with its own.
   */
  signingTime?: () => Date;
}

/** The configured storage, proven to answer: a server that cannot read its survey files fails at start. */
export async function openStorage(config: StorageConfig, options: StorageOptions = {}): Promise<SurveyStorage> {
  // The block cache takes its whole budget at once (block-cache.ts): more than the machine has is
  // a setting's mistake, said now rather than found as swapping or an out-of-memory kill later.
  if (config.kind !== 'local' && config.cacheMb * 1024 * 1024 > totalmem()) {
    throw new NadirError(
      'INVALID_CONFIG',
      `NADIR_STORAGE_CACHE_MB=${config.cacheMb} is more memory than this machine has (${Math.floor(totalmem() / 1024 / 1024)} MiB)`,
    );
  }
  const storage =
    config.kind === 'local'
      ? new LocalStorage(config.root)
      : config.kind === 's3'
        ? new S3Storage(config, options.signingTime)
        : new HttpStorage(config.base, config.timeoutMs, config.cacheMb);
  try {
    await storage.ping();
  } catch (error) {
    await storage.close();
    const reason = (error as { name?: string; message?: string }).message || (error as Error).name || String(error);
    throw new NadirError('INVALID_CONFIG', `Cannot reach the survey storage at ${storage.description}: ${reason}`);
  }
  return storage;
}

/**
 * GDAL's configuration for reading the same files as the tile reader: /vsis3/ against the same
 * endpoint (credentials and region come from the same AWS variables), /vsicurl/ for HTTP, with no
 * directory listings on open (a COG is one object) and consecutive ranges merged.
 */
export function gdalStorageSettings(config: StorageConfig): Record<string, string> {
  if (config.kind === 'local') return {};
  const remote: Record<string, string> = {
    GDAL_DISABLE_READDIR_ON_OPEN: 'EMPTY_DIR',
    CPL_VSIL_CURL_ALLOWED_EXTENSIONS: '.tif',
    GDAL_HTTP_MERGE_CONSECUTIVE_RANGES: 'YES',
    GDAL_HTTP_TIMEOUT: String(Math.max(1, Math.ceil(config.timeoutMs / 1000))),
    GDAL_HTTP_CONNECTTIMEOUT: '3',
    // One retry for a store's 429/5xx, soon: GDAL's default delay (30 s) made a read of a hung
    // store take 36 s where NADIR_STORAGE_TIMEOUT_MS said 3; nadir answers 503 + Retry-After.
    GDAL_HTTP_MAX_RETRY: '1',
    GDAL_HTTP_RETRY_DELAY: '0.5',
    VSI_CACHE: 'TRUE',
  };
  if (config.kind === 'http') return remote;
  const settings: Record<string, string> = { ...remote, AWS_REGION: config.region };
  if (config.credentials) {
    settings.AWS_ACCESS_KEY_ID = config.credentials.accessKeyId;
    settings.AWS_SECRET_ACCESS_KEY = config.credentials.secretAccessKey;
    if (config.credentials.sessionToken) settings.AWS_SESSION_TOKEN = config.credentials.sessionToken;
  }
  if (config.endpoint) {
    const endpoint = new URL(config.endpoint);
    settings.AWS_S3_ENDPOINT = endpoint.host;
    settings.AWS_HTTPS = endpoint.protocol === 'https:' ? 'YES' : 'NO';
    settings.AWS_VIRTUAL_HOSTING = 'FALSE';
  }
  return settings;
}
