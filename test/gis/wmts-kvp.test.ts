/**
 * The OGC side of the WMTS, pure: reading KVP requests (names in any case), reading a tile
 * request with the standard's exception codes, and the ExceptionReport an error becomes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  isOgcRequest,
  type OgcTileRequest,
  ogcParameters,
  ogcTileQuery,
  parseKvp,
  type WmtsTileTarget,
} from '../../src/api/gis/wmts-kvp.js';
import { isNadirError } from '../../src/errors.js';
import { exceptionReport, owsExceptionOf } from '../../src/gis/ows-exception.js';
import type { TileQuery } from '../../src/tiles/tile-query.js';

const today = () => '2026-01-01';

/** What an OGC refusal says: its code and locator (as owsExceptionOf reads the error's details). */
function refusal(work: () => unknown): [string, string | undefined] {
  try {
    work();
  } catch (error) {
    assert.ok(isNadirError(error), String(error));
    const exception = owsExceptionOf(400, { error: error.message, ...error.details });
    return [exception.exceptionCode, exception.locator];
  }
  assert.fail('not refused');
}

const TILE: OgcTileRequest = { layer: 'Vert', time: undefined, tileMatrix: '3', row: '2', col: '5', format: 'png' };

describe('WMTS KVP and OGC tile requests', () => {
  test('an OGC request names SERVICE or REQUEST, in any case', () => {
    assert.equal(isOgcRequest({ service: 'WMTS' }), true);
    assert.equal(isOgcRequest({ Request: 'GetTile' }), true);
    assert.equal(isOgcRequest({ apikey: 'k', format: 'png', since: '2025-01-01' }), false);
    assert.equal(isOgcRequest(undefined), false);
  });

  test('KVP: GetCapabilities, GetTile with names in any case, and what is refused', () => {
    const kvp = (query: Record<string, unknown>) => parseKvp(ogcParameters(query));
    assert.equal(kvp({ apikey: 'k' }), undefined, 'no REQUEST: the document');
    assert.deepEqual(kvp({ service: 'wmts', request: 'GetCapabilities' }), { request: 'GetCapabilities' });
    const tile = {
      Service: 'WMTS',
      REQUEST: 'GetTile',
      version: '1.0.0',
      layer: 'Vert:disaster',
      Style: '',
      tileMatrixSet: 'GoogleMapsCompatible',
      TileMatrix: '19',
      TileRow: '7',
      TileCol: '9',
      Format: 'image/jpeg',
      Time: '2025-04-02',
      since: '2025-01-01',
    };
    assert.deepEqual(kvp(tile), {
      request: 'GetTile',
      tile: { layer: 'Vert:disaster', time: '2025-04-02', tileMatrix: '19', row: '7', col: '9', format: 'jpg' },
    });
    const cases: [Record<string, unknown>, string, string][] = [
      [{ ...tile, TileRow: undefined }, 'MissingParameterValue', 'TILEROW'],
      [{ ...tile, Service: undefined }, 'MissingParameterValue', 'SERVICE'],
      [{ ...tile, Service: 'WMS' }, 'InvalidParameterValue', 'SERVICE'],
      [{ ...tile, version: '2.0.0' }, 'InvalidParameterValue', 'VERSION'],
      [{ ...tile, Style: 'fancy' }, 'InvalidParameterValue', 'STYLE'],
      [{ ...tile, Format: 'image/gif' }, 'InvalidParameterValue', 'FORMAT'],
      [{ ...tile, tileMatrixSet: 'WorldCRS84Quad' }, 'InvalidParameterValue', 'TILEMATRIXSET'],
      [{ ...tile, REQUEST: 'GetFeatureInfo' }, 'OperationNotSupported', 'REQUEST'],
      [{ ...tile, LAYER: 'Vert' }, 'InvalidParameterValue', 'LAYER'],
      [{ ...tile, layer: ['Vert', 'Vert'] }, 'InvalidParameterValue', 'LAYER'],
      [{ ...tile, layer: 'Vert\u0000' }, 'InvalidParameterValue', 'LAYER'],
    ];
    for (const [query, code, locator] of cases) {
      const defined = Object.fromEntries(Object.entries(query).filter(([, value]) => value !== undefined));
      assert.deepEqual(
        refusal(() => kvp(defined)),
        [code, locator],
        JSON.stringify(defined),
      );
    }
  });

  const imagery = (target: WmtsTileTarget) => {
    assert.equal(target.kind, 'imagery');
    return target.query as TileQuery;
  };

  test('a tile request: the Default when TIME is absent, empty or the unfilled {Time}; a date as until', () => {
    for (const time of [undefined, '', '{Time}', 'current']) {
      const { target, tag, date } = ogcTileQuery({ ...TILE, time }, {}, today);
      const query = imagery(target);
      assert.deepEqual(
        [query.tile, query.format, query.filter.until, tag, date],
        [{ z: 3, x: 5, y: 2 }, 'png', undefined, undefined, undefined],
      );
    }
    const dated = ogcTileQuery({ ...TILE, layer: 'Vert:disaster:hurricane', time: '2025-04-02' }, {}, today);
    assert.deepEqual(
      [imagery(dated.target).filter.until, imagery(dated.target).filter.tags?.include, dated.tag, dated.date],
      ['2025-04-02', ['disaster:hurricane'], 'disaster:hurricane', '2025-04-02'],
    );
    const earlier = ogcTileQuery({ ...TILE, time: '2025-04-02' }, { until: '2025-01-01' }, today);
    assert.equal(imagery(earlier.target).filter.until, '2025-01-01', 'the earlier of until and Time');
  });

  test('product layers: TrueOrtho as imagery, DetailDsm relief and hillshade as heights (PNG only)', () => {
    const ortho = ogcTileQuery({ ...TILE, layer: 'TrueOrtho', time: '2025-04-02' }, {}, today);
    assert.deepEqual(
      [imagery(ortho.target).type, imagery(ortho.target).filter.until, ortho.type],
      ['TrueOrtho', '2025-04-02', 'TrueOrtho'],
    );
    const relief = ogcTileQuery({ ...TILE, layer: 'DetailDsm-relief' }, { since: '2024-01-01' }, today);
    assert.equal(relief.target.kind, 'heights');
    assert.deepEqual(
      relief.target.kind === 'heights' ? [relief.target.query.style, relief.target.query.since, relief.type] : [],
      ['relief', '2024-01-01', 'DetailDsm'],
    );
    assert.throws(() => ogcTileQuery({ ...TILE, layer: 'DetailDsm-hillshade', format: 'jpg' }, {}, today), /png/);
    assert.throws(() => ogcTileQuery({ ...TILE, layer: 'DetailDsm-terrain-rgb' }, {}, today), /LAYER must be one of/);
  });

  test('a tile request refused with the codes of 07-057r7', () => {
    const cases: [Partial<OgcTileRequest>, Record<string, string>, string, string][] = [
      [{ layer: 'North' }, {}, 'InvalidParameterValue', 'LAYER'],
      [{ layer: 'Vert:a,b' }, {}, 'InvalidParameterValue', 'LAYER'],
      [{ layer: 'Vert:disaster' }, { include: 'disaster' }, 'InvalidParameterValue', 'include'],
      [{ time: 'yesterday' }, {}, 'InvalidParameterValue', 'TIME'],
      [{ tileMatrix: '99' }, {}, 'InvalidParameterValue', 'TILEMATRIX'],
      [{ tileMatrix: '-1' }, {}, 'InvalidParameterValue', 'TILEMATRIX'],
      [{ row: '8' }, {}, 'TileOutOfRange', 'TILEROW'],
      [{ col: '8' }, {}, 'TileOutOfRange', 'TILECOL'],
      [{ col: '1.5' }, {}, 'InvalidParameterValue', 'TILECOL'],
      [{}, { since: 'last week' }, 'InvalidParameterValue', 'since'],
    ];
    for (const [tile, filter, code, locator] of cases) {
      assert.deepEqual(
        refusal(() => ogcTileQuery({ ...TILE, ...tile }, filter, today)),
        [code, locator],
        JSON.stringify([tile, filter]),
      );
    }
  });

  test('the ExceptionReport of an error: code, locator and status by the tables', () => {
    assert.deepEqual(owsExceptionOf(400, { error: 'Missing required parameter since', parameter: 'since' }), {
      status: 400,
      exceptionCode: 'MissingParameterValue',
      locator: 'since',
      text: 'Missing required parameter since',
    });
    assert.deepEqual(owsExceptionOf(400, { error: 'y must be...', parameter: 'y' }).locator, 'TILEROW');
    assert.equal(owsExceptionOf(400, { error: 'x', exceptionCode: 'OperationNotSupported' }).status, 400);
    assert.deepEqual(owsExceptionOf(401, { error: 'The API key is not valid', code: 'API_KEY_INVALID' }), {
      status: 401,
      exceptionCode: 'NoApplicableCode',
      locator: undefined,
      text: 'The API key is not valid',
    });
    const xml = exceptionReport({
      status: 400,
      exceptionCode: 'InvalidParameterValue',
      locator: 'TIME',
      text: 'TIME <2000> & "more"',
    });
    assert.match(
      xml,
      /^<\?xml version="1.0" encoding="UTF-8"\?>\n<ExceptionReport xmlns="http:\/\/www.opengis.net\/ows\/1.1"/,
    );
    assert.match(
      xml,
      /<Exception exceptionCode="InvalidParameterValue" locator="TIME"><ExceptionText>TIME &lt;2000&gt; &amp; &quot;more&quot;<\/ExceptionText><\/Exception>/,
    );
  });
});
