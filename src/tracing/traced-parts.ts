/**
 * The parts a request's trace has child spans for, each the part itself with spans around the
 * calls that matter: catalogue queries, survey-file reads, GDAL renders, and the tile core's own
 * timed steps. The composition root builds these only when tracing is on.
 */
import type { Source } from '@cogeotiff/core';
import type { SurveyCatalogue } from '../catalogue/catalogue.js';
import { delegateTo } from '../metrics/delegate.js';
import { RasterEngine } from '../raster/index.js';
import { readsInto, type SurveyStorage } from '../storage/storage.js';
import type { TileObserver } from '../tiles/tile-responder.js';
import type { Tracing } from './tracing.js';

/** The catalogue's queries (not its change marker, asked on every tile: it is a memory read). */
const CATALOGUE_QUERIES = ['get', 'search', 'walk', 'groups', 'extents', 'count'] as const;

export function tracedCatalogue(catalogue: SurveyCatalogue, tracing: Tracing, system: string): SurveyCatalogue {
  const traced = delegateTo(catalogue) as unknown as Record<string, unknown>;
  for (const name of CATALOGUE_QUERIES) {
    const query = traced[name] as (...args: unknown[]) => Promise<unknown>;
    traced[name] = (...args: unknown[]) =>
      tracing.child(`catalogue.${name}`, { 'db.system.name': system, 'db.operation.name': name }, () => query(...args));
  }
  return traced as unknown as SurveyCatalogue;
}

/** Byte-range reads of survey files (the tile reader's COG reads). */
export function tracedStorage(storage: SurveyStorage, tracing: Tracing, backend: string): SurveyStorage {
  const traceSource = (source: Source): Source => {
    const attributes = (offset: number, length: number | undefined) => ({
      'nadir.storage.backend': backend,
      'nadir.storage.offset': offset,
      ...(length === undefined ? {} : { 'nadir.storage.length': length }),
    });
    const traced: Source & { fetchInto?: (offset: number, into: Uint8Array) => Promise<number> } = {
      url: source.url,
      get metadata() {
        return source.metadata;
      },
      fetch: (offset, length, options) =>
        tracing.child('storage.read', attributes(offset, length), () => source.fetch(offset, length, options)),
      close: source.close ? () => source.close?.() ?? Promise.resolve() : undefined,
    };
    if (readsInto(source)) {
      traced.fetchInto = (offset, into) =>
        tracing.child('storage.read', attributes(offset, into.byteLength), () => source.fetchInto(offset, into));
    }
    return traced;
  };
  return { ...delegateTo(storage), source: (location: string) => traceSource(storage.source(location)) };
}

/** GDAL's work: imagery and change renders, height reads. */
export class TracedRasterEngine extends RasterEngine {
  #tracing: Tracing | undefined;

  /** Set once built (the engine's own constructor takes only its options). */
  traceWith(tracing: Tracing): this {
    this.#tracing = tracing;
    return this;
  }

  override renderAoi(...args: Parameters<RasterEngine['renderAoi']>): ReturnType<RasterEngine['renderAoi']> {
    const [request] = args;
    return this.#span('gdal.render_aoi', { 'nadir.raster.format': String(request.format) }, () =>
      super.renderAoi(...args),
    );
  }

  override renderChange(...args: Parameters<RasterEngine['renderChange']>): ReturnType<RasterEngine['renderChange']> {
    return this.#span('gdal.render_change', {}, () => super.renderChange(...args));
  }

  override heightsOn(...args: Parameters<RasterEngine['heightsOn']>): ReturnType<RasterEngine['heightsOn']> {
    return this.#span('gdal.read_heights', {}, () => super.heightsOn(...args));
  }

  #span<T>(name: string, attributes: Record<string, string>, work: () => Promise<T>): Promise<T> {
    return this.#tracing ? this.#tracing.child(name, attributes, work) : work();
  }
}

/** The tile core's steps (catalogue lookup, render: decode, compose, encode) as child spans. */
export function tileSteps(tracing: Tracing): TileObserver {
  return {
    answered: (answer) =>
      tracing.stepsJustEnded('tile', answer.timings, { 'http.response.status_code': answer.status }),
    refused: () => undefined,
    failed: () => undefined,
  };
}

/** Both observers, or the one there is. */
export function bothObservers(a: TileObserver | undefined, b: TileObserver | undefined): TileObserver | undefined {
  if (!a || !b) return a ?? b;
  return {
    answered: (answer) => {
      a.answered(answer);
      b.answered(answer);
    },
    refused: () => {
      a.refused();
      b.refused();
    },
    failed: (error) => {
      a.failed(error);
      b.failed(error);
    },
  };
}
