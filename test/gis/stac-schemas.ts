/**
 * The STAC 1.0.0 JSON schemas and the STAC API 1.0.0 response schemas, checked with ajv, offline.
 *
 * Vendored under test/gis/schemas/ (no network in tests, and npm's stac-node-validator downloads
 * its schemas at run time):
 * - stac-1.0.0/: item, catalog and collection JSON schemas of radiantearth/stac-spec v1.0.0, as
 *   radiantearth/stac-api-spec v1.0.0 (commit 604ade61) vendors them under stac-spec/, unchanged.
 * - geojson/: Feature.json and Geometry.json of geojson/schema, built by its own bin/format.js.
 * - stac-api-1.0.0/: the `components` of stac-api-spec v1.0.0's OpenAPI files (core/commons.yaml,
 *   core/openapi.yaml, fragments/itemcollection/openapi.yaml, ogcapi-features/openapi-features.yaml)
 *   converted from YAML to JSON, with `.yaml` references renamed `.json`; nothing else changed.
 *
 * `iri` and `iri-reference` (used by STAC for hrefs) are not in ajv-formats: they are checked as
 * what a client does with them, a URL that parses (absolute, or relative to a base). Templates
 * such as `{z}/{x}/{y}` would parse too, so the tests also check that no href holds a brace.
 * ajv-formats' `url` (used by the STAC API's asset hrefs) refuses loopback and private addresses
 * by design, and a test server is on 127.0.0.1: it is replaced by the same parse, limited to the
 * schemes it allows. `uri` stays ajv-formats' strict check, except that the {z}/{x}/{y}/{s}
 * placeholders of a web-map-links `xyz` href (a URL template by that extension's definition) are
 * expanded first: a strict validator without that exception flags those links alone.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import formats from 'ajv-formats';

// ajv-formats is CommonJS: its function is the module itself, typed as the default export.
const addFormats = formats as unknown as typeof formats.default;

const SCHEMAS = join(import.meta.dirname, 'schemas');
const STAC = 'https://schemas.stacspec.org/v1.0.0';
const STAC_API = 'https://api.stacspec.org/v1.0.0';

function jsonFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? jsonFiles(path) : name.endsWith('.json') ? [path] : [];
  });
}

export interface StacValidators {
  item: ValidateFunction;
  collection: ValidateFunction;
  catalog: ValidateFunction;
  landingPage: ValidateFunction;
  conformance: ValidateFunction;
  collections: ValidateFunction;
  itemCollection: ValidateFunction;
  exception: ValidateFunction;
}

export function stacValidators(): StacValidators {
  // strict off: the OpenAPI documents carry `example`, `discriminator` and other non-JSON-Schema words.
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  const parses = (text: string) => URL.canParse(text, 'http://relative.invalid/');
  ajv.addFormat('iri', (text: string) => URL.canParse(text));
  ajv.addFormat('iri-reference', parses);
  ajv.addFormat('url', (text: string) => /^(https?|ftp):\/\/[^\s]+$/i.test(text) && URL.canParse(text));
  // ajv-formats' strict `uri`, but a web-map-links `xyz` href is a tile URL template by that
  // extension's definition: its {z}, {x}, {y} (and {s}) placeholders are expanded before the check.
  // The tests assert that braces appear in no other href (checkHrefs).
  const strictUri = ajv.formats.uri;
  if (typeof strictUri !== 'function') throw new Error("ajv-formats' uri is no longer a function");
  const isUri = (text: string): boolean => Boolean((strictUri as (text: string) => boolean)(text));
  ajv.addFormat('uri', (text: string) => isUri(text.replace(/\{[zxys]\}/g, '0')));
  for (const path of jsonFiles(SCHEMAS)) ajv.addSchema(JSON.parse(readFileSync(path, 'utf8')));
  const get = (id: string) => {
    const validate = ajv.getSchema(id);
    if (!validate) throw new Error(`no schema ${id}`);
    return validate;
  };
  return {
    item: get(`${STAC}/item-spec/json-schema/item.json`),
    collection: get(`${STAC}/collection-spec/json-schema/collection.json`),
    catalog: get(`${STAC}/catalog-spec/json-schema/catalog.json`),
    landingPage: get(`${STAC_API}/core/openapi.json#/components/schemas/landingPage`),
    conformance: get(`${STAC_API}/core/commons.json#/components/schemas/conformanceClasses`),
    collections: get(`${STAC_API}/ogcapi-features/openapi-features.json#/components/schemas/collections`),
    itemCollection: get(`${STAC_API}/fragments/itemcollection/openapi.json#/components/schemas/itemCollection`),
    exception: get(`${STAC_API}/core/commons.json#/components/schemas/exception`),
  };
}

/** ajv's errors in one readable string, for assertion messages. */
export function schemaErrors(validate: ValidateFunction): string {
  return JSON.stringify(validate.errors?.slice(0, 5) ?? [], null, 1);
}
