/** The seven products of a survey and which renderer makes each (used on the main thread and in workers). */

import type { AssetName } from './manifest.js';
import type { PixelGrid, RasterKind, StripSink } from './raster-output.js';
import { renderDsm, renderTrueOrtho } from './render-ortho.js';
import { renderPanorama } from './render-panorama.js';
import { renderVert } from './render-vert.js';
import type { Scene } from './scene.js';
import type { DemoSurvey, Point } from './surveys.js';

/** Ground sample distances of the products, metres. */
export const DEMO_GSD: Record<AssetName, number> = {
  TrueOrtho: 0.15,
  Vert: 0.15,
  DetailDsm: 0.3,
  North: 0.2,
  South: 0.2,
  East: 0.2,
  West: 0.2,
};

export const ASSET_KIND: Record<AssetName, RasterKind> = {
  TrueOrtho: 'rgba',
  Vert: 'rgba',
  DetailDsm: 'dsm',
  North: 'rgba',
  South: 'rgba',
  East: 'rgba',
  West: 'rgba',
};

/** Most expensive first, so parallel workers finish at about the same time. */
export const RENDER_ORDER: readonly AssetName[] = ['Vert', 'North', 'South', 'East', 'West', 'TrueOrtho', 'DetailDsm'];

export function renderAsset(
  asset: AssetName,
  scene: Scene,
  survey: DemoSurvey,
  footprint: readonly Point[],
  out: PixelGrid,
  sink: StripSink,
): Promise<void> {
  switch (asset) {
    case 'DetailDsm':
      return renderDsm(scene, footprint, out, sink);
    case 'TrueOrtho':
      return renderTrueOrtho(scene, footprint, out, sink);
    case 'Vert':
      return renderVert(scene, survey, footprint, out, sink);
    default:
      return renderPanorama(scene, asset, footprint, out, sink);
  }
}
