/**
 * NadirClient: every public endpoint of a nadir server (or the commercial API it is compatible
 * with), on `fetch` alone, so it runs in Node 20 and in browsers. Retries and rate-limit waits
 * are retry.ts's; transaction tokens are kept in a TokenStore and reused for their 30 days.
 */
import { type Aoi, checkAoi, pointParameter } from './area.js';
import { NadirUsageError, TransactionTokenError } from './errors.js';
import { checkTile, type TileXYZ } from './panorama.js';
import {
  type CoverageOptions,
  coverageParameters,
  type DateFilters,
  dateFilterParameters,
  oneOf,
  rasterType,
  type TagFilters,
  tagFilterParameters,
  tileType,
} from './query.js';
import { DEFAULT_RETRY_POLICY, type RetryContext, type RetryPolicy, type RetryWait, sendWithRetry } from './retry.js';
import { MemoryTokenStore, TOKEN_LIFETIME_MS, type TokenStore, tokenScope, tokenServes } from './token-store.js';
import {
  type CoverageResponse,
  type HealthResponse,
  RASTER_FORMATS,
  type RasterFormat,
  type RasterType,
  type ReadyResponse,
  type Survey,
  TILE_FORMATS,
  type TileFormat,
  type TileType,
  type VersionResponse,
} from './types.js';
import { type Clock, type Sleep, timerSleep } from './waiting.js';

export interface NadirClientOptions {
  /** The server, e.g. `https://imagery.example.com` (a path prefix is kept). */
  baseUrl: string;
  apiKey: string;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
  /** Defaults to a MemoryTokenStore (tokens live as long as the client). */
  tokenStore?: TokenStore;
  /** Defaults to Date.now; tests give their own. */
  clock?: Clock;
  /** Defaults to setTimeout; tests give one that does not wait. */
  sleep?: Sleep;
  random?: () => number;
  retry?: Partial<RetryPolicy>;
  /** Told before every wait (a 429 waited out, a retry after a 5xx): for progress displays. */
  onRetryWait?: (wait: RetryWait) => void;
  /**
   * `query` (the default, as the specification sends it) or `header` (`Authorization: Apikey`):
   * keeps the key out of URLs, at the price of browser caches keyed on URLs (and private caching).
   */
  sendKeyIn?: 'query' | 'header';
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface ImageryRequest {
  surveyId: string;
  type: RasterType;
  format: RasterFormat;
  aoi: Aoi;
  /** Pixels per side, 1..5000 (nativeImageSize gives a type's native size). */
  size: number;
}

export interface TileRequest extends DateFilters, TagFilters {
  type: TileType;
  tile: TileXYZ;
  format: TileFormat;
  /** One survey's tile (the tile-by-survey endpoint) instead of the newest imagery there. */
  surveyId?: string;
  /** Location tiles: oldest survey on top instead of the newest. */
  mosaic?: 'latest' | 'earliest';
}

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Unix ms when the window resets. */
  resetAt: number;
}

export interface TileAnswer {
  bytes: Uint8Array;
  contentType: string;
  etag: string | undefined;
  /** The surveys drawn, in draw order (X-Survey-Ids). */
  surveyIds: string[];
}

const SURVEY_ID = /^[A-Za-z0-9._~-]{1,128}$/;

function checkSurveyId(id: unknown): string {
  if (typeof id !== 'string' || !SURVEY_ID.test(id))
    throw new NadirUsageError(`surveyId must be a survey id from coverage, got ${JSON.stringify(id)}`);
  return id;
}

export class NadirClient {
  readonly baseUrl: string;
  readonly #apiKey: string;
  readonly #fetch: typeof fetch;
  readonly #tokens: TokenStore;
  readonly #clock: Clock;
  readonly #retry: RetryContext;
  readonly #keyInHeader: boolean;
  #rateLimit: RateLimitState | undefined;

  constructor(options: NadirClientOptions) {
    let url: URL;
    try {
      url = new URL(options.baseUrl);
    } catch {
      throw new NadirUsageError(`baseUrl must be an http(s) URL, got ${JSON.stringify(options.baseUrl)}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new NadirUsageError(`baseUrl must be http(s), got ${url.protocol}`);
    if (typeof options.apiKey !== 'string' || options.apiKey.trim() === '')
      throw new NadirUsageError('apiKey is required');
    this.baseUrl = url.href.replace(/\/+$/, '');
    this.#apiKey = options.apiKey;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.#tokens = options.tokenStore ?? new MemoryTokenStore();
    this.#clock = options.clock ?? Date.now;
    this.#keyInHeader = oneOf('sendKeyIn', options.sendKeyIn ?? 'query', ['query', 'header']) === 'header';
    const policy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.#retry = {
      policy,
      clock: this.#clock,
      sleep: options.sleep ?? timerSleep,
      random: options.random ?? Math.random,
      ...(options.onRetryWait ? { onWait: options.onRetryWait } : {}),
    };
  }

  /** The last rate-limit headers a tile answer carried. */
  get rateLimit(): RateLimitState | undefined {
    return this.#rateLimit;
  }

  async #get(path: string, params: URLSearchParams, withKey: boolean, signal?: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = {};
    if (withKey && this.#keyInHeader) headers.authorization = `Apikey ${this.#apiKey}`;
    else if (withKey) params.set('apikey', this.#apiKey);
    const query = params.toString();
    const url = `${this.baseUrl}${path}${query ? `?${query}` : ''}`;
    return sendWithRetry(() => this.#fetch(url, { headers, ...(signal ? { signal } : {}) }), this.#retry, signal);
  }

  async #json<T>(path: string, params: URLSearchParams, withKey: boolean, signal?: AbortSignal): Promise<T> {
    return (await (await this.#get(path, params, withKey, signal)).json()) as T;
  }

  health(options: CallOptions = {}): Promise<HealthResponse> {
    return this.#json('/health', new URLSearchParams(), false, options.signal);
  }

  ready(options: CallOptions = {}): Promise<ReadyResponse> {
    return this.#json('/ready', new URLSearchParams(), false, options.signal);
  }

  version(options: CallOptions = {}): Promise<VersionResponse> {
    return this.#json('/version', new URLSearchParams(), false, options.signal);
  }

  /**
   * One page of coverage. The token it carries is kept for its AOI unless the store already
   * holds one that serves it: that older one stays, since switching tokens would bill again.
   */
  async coverage(options: CoverageOptions & CallOptions): Promise<CoverageResponse> {
    const params = coverageParameters(options);
    const page = await this.#json<CoverageResponse>('/staticmap/v2/coverage.json', params, true, options.signal);
    await this.#keepToken(options.aoi, page.transactionToken);
    return page;
  }

  /** Every page of coverage, walking `offset` by the page size until `total` is reached. */
  async *coveragePages(options: CoverageOptions & CallOptions): AsyncGenerator<CoverageResponse> {
    let offset = options.offset ?? 0;
    for (;;) {
      const page = await this.coverage({ ...options, offset });
      yield page;
      offset = page.offset + page.surveys.length;
      if (page.surveys.length === 0 || offset >= page.total) return;
    }
  }

  /** Every matching survey, newest first, across pages. */
  async *surveys(options: CoverageOptions & CallOptions): AsyncGenerator<Survey> {
    for await (const page of this.coveragePages(options)) yield* page.surveys;
  }

  async #keepToken(aoi: Aoi, token: string): Promise<void> {
    const scope = await tokenScope(this.baseUrl, this.#apiKey, aoi);
    const now = this.#clock();
    if (tokenServes(await this.#tokens.get(scope), aoi.radius, now)) return;
    await this.#tokens.set(scope, { token, radius: aoi.radius, expiresAt: now + TOKEN_LIFETIME_MS });
  }

  /** A transaction token for the AOI: the stored one while it serves, else a new coverage call's. */
  async transactionToken(aoi: Aoi, options: CallOptions = {}): Promise<string> {
    const checked = checkAoi(aoi);
    const scope = await tokenScope(this.baseUrl, this.#apiKey, checked);
    const stored = await this.#tokens.get(scope);
    if (tokenServes(stored, checked.radius, this.#clock())) return stored.token;
    const page = await this.coverage({ aoi: checked, resources: ['Vert'], fields: ['id'], limit: 1, ...options });
    return page.transactionToken;
  }

  /** Forgets the stored token of an AOI (the next call gets a new one, which will be billed). */
  async forgetToken(aoi: Aoi): Promise<void> {
    await this.#tokens.delete(await tokenScope(this.baseUrl, this.#apiKey, checkAoi(aoi)));
  }

  /** The imagery URL for a token: for an `<img>` or a download link. */
  imageryUrl(request: ImageryRequest, token: string): string {
    return `${this.baseUrl}${imageryPath(request)}?${imageryParameters(request, token)}`;
  }

  /**
   * An image of the AOI as a Response whose body is not read yet (stream it to a file, or
   * `.blob()` it). A token the server refuses as expired or revoked is replaced once.
   */
  async imagery(request: ImageryRequest, options: CallOptions = {}): Promise<Response> {
    const path = imageryPath(request);
    // Checked before a token is fetched: a wrong size must not cost a coverage call.
    imageryParameters(request, '');
    const token = await this.transactionToken(request.aoi, options);
    try {
      return await this.#get(path, imageryParameters(request, token), false, options.signal);
    } catch (error) {
      if (!(error instanceof TransactionTokenError) || error.reason === 'aoi_mismatch' || error.reason === 'malformed')
        throw error;
      await this.forgetToken(request.aoi);
      const fresh = await this.transactionToken(request.aoi, options);
      return this.#get(path, imageryParameters(request, fresh), false, options.signal);
    }
  }

  /** A tile URL with the key in it, for map libraries (Leaflet, MapLibre, OpenLayers). */
  tileUrl(request: TileRequest): string {
    const params = tileParameters(request);
    params.set('apikey', this.#apiKey);
    return `${this.baseUrl}${tilePath(request)}?${params}`;
  }

  /** `.../{z}/{x}/{y}.<format>?apikey=...`: the URL template Leaflet, MapLibre and OpenLayers take. */
  tileUrlTemplate(request: Omit<TileRequest, 'tile'>): string {
    const url = this.tileUrl({ ...request, tile: { z: 0, x: 0, y: 0 } });
    return url.replace(`/0/0/0.${request.format}?`, `/{z}/{x}/{y}.${request.format}?`);
  }

  /**
   * The DsmChange tile template (`/tiles/v3/DsmChange/{z}/{x}/{y}.png`, docs/api.md "DsmChange
   * tiles") for two surveys, `after` and the earlier `baseline`: the height change as a PNG
   * overlay, transparent within `threshold` metres (the server's default 0.5 when left out).
   */
  changeTileUrlTemplate(request: { after: string; baseline: string; threshold?: number }): string {
    const params = new URLSearchParams({
      after: checkSurveyId(request.after),
      baseline: checkSurveyId(request.baseline),
    });
    if (request.threshold !== undefined) {
      const threshold = request.threshold;
      if (!(typeof threshold === 'number' && Number.isFinite(threshold) && threshold >= 0 && threshold <= 100))
        throw new NadirUsageError(`threshold must be a number of metres from 0 to 100, got ${threshold}`);
      params.set('threshold', String(threshold));
    }
    params.set('apikey', this.#apiKey);
    return `${this.baseUrl}/tiles/v3/DsmChange/{z}/{x}/{y}.png?${params}`;
  }

  /**
   * One tile, or undefined where there is no imagery (404 NO_IMAGERY). When the last answer said
   * the rate-limit window is used up, waits for its reset first instead of collecting a 429.
   */
  async tile(request: TileRequest, options: CallOptions = {}): Promise<TileAnswer | undefined> {
    const path = tilePath(request);
    const params = tileParameters(request);
    const known = this.#rateLimit;
    const now = this.#clock();
    if (known && known.remaining <= 0 && known.resetAt > now) {
      this.#retry.onWait?.({ why: 'rate-limited', ms: known.resetAt - now, attempt: 0 });
      await this.#retry.sleep(known.resetAt - now, options.signal);
    }
    let response: Response;
    try {
      response = await this.#get(path, params, true, options.signal);
    } catch (error) {
      if ((error as { code?: string }).code === 'NO_IMAGERY') return undefined;
      throw error;
    }
    this.#noteRateLimit(response.headers);
    return {
      bytes: new Uint8Array(await response.arrayBuffer()),
      contentType: response.headers.get('content-type') ?? '',
      etag: response.headers.get('etag') ?? undefined,
      surveyIds: (response.headers.get('x-survey-ids') ?? '').split(',').filter(Boolean),
    };
  }

  #noteRateLimit(headers: Headers): void {
    const limit = Number(headers.get('x-ratelimit-limit'));
    const remaining = Number(headers.get('x-ratelimit-remaining'));
    const reset = Number(headers.get('x-ratelimit-reset'));
    if (![limit, remaining, reset].every((n) => Number.isFinite(n)) || !headers.has('x-ratelimit-limit')) return;
    this.#rateLimit = { limit, remaining, resetAt: reset * 1000 };
  }
}

function imageryPath(request: ImageryRequest): string {
  const type = rasterType(request.type);
  const format = oneOf('format', request.format, RASTER_FORMATS);
  return `/staticmap/v2/surveys/${encodeURIComponent(checkSurveyId(request.surveyId))}/${type}.${format}`;
}

function imageryParameters(request: ImageryRequest, token: string): URLSearchParams {
  const aoi = checkAoi(request.aoi);
  const size = request.size;
  if (!(Number.isInteger(size) && size >= 1 && size <= 5000))
    throw new NadirUsageError(`size must be a whole number from 1 to 5000, got ${size}`);
  return new URLSearchParams({
    transactionToken: token,
    point: pointParameter(aoi.point),
    radius: String(aoi.radius),
    size: `${size}x${size}`,
  });
}

function tilePath(request: TileRequest): string {
  const type = tileType(request.type);
  const { z, x, y } = checkTile(request.tile);
  const format = oneOf('format', request.format, TILE_FORMATS);
  const survey =
    request.surveyId === undefined ? '' : `/surveys/${encodeURIComponent(checkSurveyId(request.surveyId))}`;
  return `/tiles/v3${survey}/${type}/${z}/${x}/${y}.${format}`;
}

function tileParameters(request: TileRequest): URLSearchParams {
  const params = new URLSearchParams();
  dateFilterParameters(request, params);
  tagFilterParameters(request, params);
  if (request.mosaic !== undefined) {
    if (request.surveyId !== undefined)
      throw new NadirUsageError('mosaic applies to location tiles, not to one survey');
    params.set('mosaic', oneOf('mosaic', request.mosaic, ['latest', 'earliest']));
  }
  return params;
}
