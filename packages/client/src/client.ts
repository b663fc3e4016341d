/**
 * NadirClient: every public endpoint of a nadir server (or the commercial API it is compatible
 * with), on `fetch` alone, so it runs in Node 20 and in browsers. Retries and rate-limit waits
 * are retry.ts's; transaction tokens are kept in a TokenStore and reused for their 30 days.
 */
import { type Aoi, checkAoi } from './area.js';
import { type DsmChangeFiguresRequest, type DsmChangeTileRequest, dsmChangeTilePath } from './change.js';
import { NadirApiError, NadirUsageError, TransactionTokenError } from './errors.js';
import * as gis from './gis.js';
import { type CoverageOptions, coverageParameters, oneOf } from './query.js';
import { lendSignal, releasingWhenRead } from './request-signal.js';
import {
  type CallOptions,
  type ImageryRequest,
  imageryParameters,
  imageryPath,
  type TileRequest,
  type Transport,
  tileParameters,
  tilePath,
} from './requests.js';
import { DEFAULT_RETRY_POLICY, type RetryContext, type RetryPolicy, type RetryWait, sendWithRetry } from './retry.js';
import * as stac from './stac.js';
import { MemoryTokenStore, TOKEN_LIFETIME_MS, type TokenStore, tokenScope, tokenServes } from './token-store.js';
import type {
  CoverageResponse,
  DsmChangeFigures,
  HealthResponse,
  ReadyResponse,
  Survey,
  VersionResponse,
} from './types.js';
import { type Clock, type Sleep, timerSleep } from './waiting.js';

export type { CallOptions, ImageryRequest, TileRequest } from './requests.js';

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

export class NadirClient {
  readonly baseUrl: string;
  readonly #apiKey: string;
  readonly #fetch: typeof fetch;
  readonly #tokens: TokenStore;
  readonly #clock: Clock;
  readonly #retry: RetryContext;
  readonly #keyInHeader: boolean;
  readonly #transport: Transport;
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
    this.#transport = {
      baseUrl: this.baseUrl,
      apiKey: this.#apiKey,
      get: (url, params, withKey, signal) => this.#get(url, params, withKey, signal),
    };
  }

  /** The last rate-limit headers a tile answer carried. */
  get rateLimit(): RateLimitState | undefined {
    return this.#rateLimit;
  }

  /** `path` under baseUrl, or an absolute URL the server handed out (a STAC `next` link). */
  async #get(path: string, params: URLSearchParams, withKey: boolean, signal?: AbortSignal): Promise<Response> {
    const url = new URL(/^https?:/.test(path) ? path : `${this.baseUrl}${path}`);
    // The key goes to this server only: a link elsewhere would hand it to whoever is there.
    if (url.origin !== new URL(this.baseUrl).origin)
      throw new NadirUsageError(`the server linked to ${url.origin}, not ${new URL(this.baseUrl).origin}`);
    // A link repeats the key when it came in the query; it is set again as this client sends it.
    url.searchParams.delete('apikey');
    for (const [name, value] of params) url.searchParams.set(name, value);
    const headers: Record<string, string> = {};
    if (withKey && this.#keyInHeader) headers.authorization = `Apikey ${this.#apiKey}`;
    else if (withKey) url.searchParams.set('apikey', this.#apiKey);
    const href = url.href;
    const lent = lendSignal(signal);
    try {
      const response = await sendWithRetry(
        () => this.#fetch(href, { headers, ...(lent.signal ? { signal: lent.signal } : {}) }),
        this.#retry,
        signal,
      );
      return signal ? releasingWhenRead(response, lent.release) : response;
    } catch (error) {
      lent.release();
      throw error;
    }
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
   * One tile, or undefined where there is no imagery (404 NO_IMAGERY). When the last answer said
   * the rate-limit window is used up, waits for its reset first instead of collecting a 429.
   */
  async tile(request: TileRequest, options: CallOptions = {}): Promise<TileAnswer | undefined> {
    return this.#tileAt(tilePath(request), tileParameters(request), options.signal);
  }

  async #tileAt(path: string, params: URLSearchParams, signal?: AbortSignal): Promise<TileAnswer | undefined> {
    const known = this.#rateLimit;
    const now = this.#clock();
    if (known && known.remaining <= 0 && known.resetAt > now) {
      this.#retry.onWait?.({ why: 'rate-limited', ms: known.resetAt - now, attempt: 0 });
      await this.#retry.sleep(known.resetAt - now, signal);
    }
    let response: Response;
    try {
      response = await this.#get(path, params, true, signal);
    } catch (error) {
      if (!(error instanceof NadirApiError)) throw error;
      // A tile without imagery counts against the limit too: its headers keep the pacing right.
      if (error.headers && error.status !== 429) this.#noteRateLimit(error.headers);
      if (error.code === 'NO_IMAGERY') return undefined;
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

  /** `DsmChange.json`: lost and gained area and volume, billed as any image of the AOI (its token). */
  async dsmChangeFigures(request: DsmChangeFiguresRequest, options: CallOptions = {}): Promise<DsmChangeFigures> {
    const { after, ...rest } = request;
    const response = await this.imagery({ ...rest, surveyId: after, type: 'DsmChange', format: 'json' }, options);
    return (await response.json()) as DsmChangeFigures;
  }

  /** A change tile (PNG, transparent where unchanged), or undefined where there are not two surveys. */
  dsmChangeTile(request: DsmChangeTileRequest, options: CallOptions = {}): Promise<TileAnswer | undefined> {
    const { path, params } = dsmChangeTilePath(request);
    return this.#tileAt(path, params, options.signal);
  }

  /** `.../DsmChange/{z}/{x}/{y}.png?...&apikey=...` for a map library's overlay. */
  dsmChangeTileUrlTemplate(request: Omit<DsmChangeTileRequest, 'tile'>): string {
    const { params } = dsmChangeTilePath({ ...request, tile: { z: 0, x: 0, y: 0 } });
    params.set('apikey', this.#apiKey);
    return `${this.baseUrl}/tiles/v3/DsmChange/{z}/{x}/{y}.png?${params}`;
  }

  /** TileJSON 3.0.0 of a tile layer (with filters) or of one survey's layer. */
  tileJson(request: gis.TileJsonRequest, options: CallOptions = {}): Promise<gis.TileJson> {
    return gis.tileJson(this.#transport, request, options);
  }

  wmtsCapabilitiesUrl(filters: gis.WmtsFilters = {}): string {
    return gis.wmtsCapabilitiesUrl(this.#transport, filters);
  }

  wmtsCapabilities(filters: gis.WmtsFilters = {}, options: CallOptions = {}): Promise<string> {
    return gis.wmtsCapabilities(this.#transport, filters, options);
  }

  /** A WMTS RESTful tile: the location tile of the layer as of `time`, as the tile endpoint answers it. */
  wmtsTile(request: gis.WmtsTileRequest, options: CallOptions = {}): Promise<TileAnswer | undefined> {
    const { path, params } = gis.wmtsTilePath(request);
    return this.#tileAt(path, params, options.signal);
  }

  stacLanding(options: CallOptions = {}): Promise<stac.StacLanding> {
    return stac.stacLanding(this.#transport, options);
  }

  stacConformance(options: CallOptions = {}): Promise<{ conformsTo: string[] }> {
    return stac.stacConformance(this.#transport, options);
  }

  stacCollections(options: CallOptions = {}): Promise<{ collections: stac.StacCollection[]; links: stac.StacLink[] }> {
    return stac.stacCollections(this.#transport, options);
  }

  stacCollection(id = 'surveys', options: CallOptions = {}): Promise<stac.StacCollection> {
    return stac.stacCollection(this.#transport, id, options);
  }

  stacItem(surveyId: string, options: CallOptions = {}): Promise<stac.StacItem> {
    return stac.stacItem(this.#transport, surveyId, options);
  }

  /** Every item of the `surveys` collection matching the options, newest first, across pages. */
  stacItems(options: stac.StacSearchOptions = {}): AsyncGenerator<stac.StacItem> {
    return stac.stacItemsOf(stac.stacPages(this.#transport, '/stac/v1/collections/surveys/items', options));
  }

  /** Every item of a search, newest first, following `next` links to the last page. */
  stacSearch(options: stac.StacSearchOptions = {}): AsyncGenerator<stac.StacItem> {
    return stac.stacItemsOf(this.stacSearchPages(options));
  }

  /** The search's pages as the server sends them (numberMatched, links). */
  stacSearchPages(options: stac.StacSearchOptions = {}): AsyncGenerator<stac.StacItemCollection> {
    return stac.stacPages(this.#transport, '/stac/v1/search', options);
  }

  #noteRateLimit(headers: Headers): void {
    const limit = Number(headers.get('x-ratelimit-limit'));
    const remaining = Number(headers.get('x-ratelimit-remaining'));
    const reset = Number(headers.get('x-ratelimit-reset'));
    if (![limit, remaining, reset].every((n) => Number.isFinite(n)) || !headers.has('x-ratelimit-limit')) return;
    this.#rateLimit = { limit, remaining, resetAt: reset * 1000 };
  }
}
