/**
 * CQL2 (OGC 21-065) for the STAC API filter extension: the JSON encoding (the text encoding read
 * into it by cql2-text.ts) checked against the queryables of a survey item and compiled into a
 * test on an item's values. What it takes: comparisons (=, <>, <, <=, >, >=), AND, OR, NOT,
 * LIKE, BETWEEN, IN, IS NULL (basic and advanced comparison operators), S_INTERSECTS (basic
 * spatial functions, with WKT, GeoJSON and BBOX literals), T_INTERSECTS (TIMESTAMP, DATE and
 * INTERVAL literals) and the array functions A_CONTAINS, A_CONTAINEDBY, A_EQUALS, A_OVERLAPS.
 * Anything else is a 400 naming `filter`. Pure.
 */
import { isIsoDate } from '../geo/dates.js';
import {
  bad,
  type Cql2Item,
  type Cql2Language,
  type Cql2Test,
  MAX_DEPTH,
  MAX_FILTER_LENGTH,
  type Queryable,
} from './cql2-rules.js';
import { cql2TextToJson } from './cql2-text.js';
import { boxGeometry, type SearchArea, searchAreaMeets, searchAreaOf } from './stac-geometry.js';

export type { Cql2Item, Cql2Language, Cql2Test, Queryable, QueryableKind } from './cql2-rules.js';
export { cql2TextToJson, MAX_FILTER_LENGTH };

// ------------------------------------------------------------------------------------------
// The JSON encoding, checked and compiled.

type Operand =
  | { kind: 'property'; name: string; queryable: Queryable }
  | { kind: 'string'; value: string }
  | { kind: 'number'; value: number }
  | { kind: 'boolean'; value: boolean }
  | { kind: 'instant'; value: number }
  | { kind: 'date'; value: string }
  | { kind: 'interval'; start: number; end: number }
  | { kind: 'geometry'; area: SearchArea }
  | { kind: 'array'; items: Operand[] };

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

function instantMs(text: string, what: string): number {
  const ms = RFC3339.test(text) && isIsoDate(text.slice(0, 10)) ? Date.parse(text.toUpperCase()) : Number.NaN;
  if (!Number.isFinite(ms))
    throw bad(`${what} must be an RFC 3339 date-time, got ${JSON.stringify(text.slice(0, 60))}`);
  return ms;
}

function dateValue(text: string): string {
  if (!isIsoDate(text)) throw bad(`DATE must be YYYY-MM-DD, got ${JSON.stringify(text.slice(0, 60))}`);
  return text;
}

const DAY_MS = 86_400_000;

/** A DATE as the instants of its UTC day. */
function dateSpan(date: string): [number, number] {
  const start = Date.parse(`${date}T00:00:00Z`);
  return [start, start + DAY_MS - 1];
}

function intervalBound(value: unknown, end: boolean): number {
  if (value === '..') return end ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
  if (typeof value === 'object' && value !== null) {
    if ('timestamp' in value) return intervalBound((value as { timestamp: unknown }).timestamp, end);
    if ('date' in value) return intervalBound((value as { date: unknown }).date, end);
  }
  if (typeof value !== 'string') throw bad('INTERVAL bounds are dates, date-times or ".."');
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return dateSpan(dateValue(value))[end ? 1 : 0];
  return instantMs(value, 'an INTERVAL bound');
}

class JsonChecker {
  private nodes = 0;
  constructor(private readonly queryables: Readonly<Record<string, Queryable>>) {}

  private count(depth: number): void {
    if (++this.nodes > 2000) throw bad('has more than 2000 parts');
    if (depth > MAX_DEPTH) throw bad(`expressions nest more than ${MAX_DEPTH} deep`);
  }

  operand(value: unknown, depth: number): Operand {
    this.count(depth);
    if (typeof value === 'string') return { kind: 'string', value };
    if (typeof value === 'number' && Number.isFinite(value)) return { kind: 'number', value };
    if (typeof value === 'boolean') return { kind: 'boolean', value };
    if (Array.isArray(value)) return { kind: 'array', items: value.map((item) => this.operand(item, depth + 1)) };
    if (typeof value !== 'object' || value === null) throw bad(`${JSON.stringify(value)} is not a value`);
    const object = value as Record<string, unknown>;
    if (typeof object.property === 'string') {
      // STAC clients write `properties.gsd` as often as `gsd`.
      const name = object.property.startsWith('properties.') ? object.property.slice(11) : object.property;
      const queryable = Object.hasOwn(this.queryables, name) ? this.queryables[name] : undefined;
      if (!queryable) {
        throw bad(
          `no queryable ${JSON.stringify(object.property.slice(0, 80))}; the queryables are ${Object.keys(this.queryables).join(', ')}`,
        );
      }
      return { kind: 'property', name, queryable };
    }
    if (typeof object.timestamp === 'string')
      return { kind: 'instant', value: instantMs(object.timestamp, 'TIMESTAMP') };
    if (typeof object.date === 'string') return { kind: 'date', value: dateValue(object.date) };
    if (Array.isArray(object.interval)) {
      if (object.interval.length !== 2) throw bad('an INTERVAL has two bounds');
      const start = intervalBound(object.interval[0], false);
      const end = intervalBound(object.interval[1], true);
      if (start > end) throw bad("an INTERVAL's start is after its end");
      return { kind: 'interval', start, end };
    }
    if (Array.isArray(object.bbox)) {
      const numbers = object.bbox;
      if (!(numbers.length === 4 || numbers.length === 6) || !numbers.every((n) => typeof n === 'number')) {
        throw bad('BBOX takes 4 numbers (or 6 with heights)');
      }
      const [minX, minY, maxX, maxY] = (
        numbers.length === 4 ? numbers : [numbers[0], numbers[1], numbers[3], numbers[4]]
      ) as number[];
      const area = searchAreaOf(boxGeometry({ minX, minY, maxX, maxY } as never));
      if (typeof area === 'string' || (minY as number) > (maxY as number)) {
        throw bad('BBOX must be minLon,minLat,maxLon,maxLat in WGS84 degrees');
      }
      return { kind: 'geometry', area };
    }
    if (typeof object.type === 'string') {
      const area = searchAreaOf(value);
      if (typeof area === 'string') throw bad(`a geometry ${area}`);
      return { kind: 'geometry', area };
    }
    if (typeof object.op === 'string') throw bad(`${object.op} is a test, not a value`);
    throw bad(`${JSON.stringify(value).slice(0, 80)} is not a value`);
  }

  expression(value: unknown, depth = 0): Cql2Test {
    this.count(depth);
    if (typeof value === 'boolean') return () => value;
    if (
      typeof value !== 'object' ||
      value === null ||
      Array.isArray(value) ||
      typeof (value as { op?: unknown }).op !== 'string'
    ) {
      throw bad(`expected a test ({"op": ..., "args": [...]}), got ${JSON.stringify(value)?.slice(0, 80)}`);
    }
    const { op, args } = value as { op: string; args?: unknown };
    if (!Array.isArray(args)) throw bad(`${op} needs args, a list`);
    const name = op.toLowerCase();
    const arity = (n: number) => {
      if (args.length !== n) throw bad(`${op} takes ${n} argument${n === 1 ? '' : 's'}, got ${args.length}`);
    };
    switch (name) {
      case 'and':
      case 'or': {
        if (args.length < 2) throw bad(`${op} takes at least 2 arguments`);
        const tests = args.map((arg) => this.expression(arg, depth + 1));
        return name === 'and' ? (item) => tests.every((t) => t(item)) : (item) => tests.some((t) => t(item));
      }
      case 'not': {
        arity(1);
        const test = this.expression(args[0], depth + 1);
        return (item) => !test(item);
      }
      case '=':
      case '<>':
      case '<':
      case '<=':
      case '>':
      case '>=': {
        arity(2);
        return comparison(name, this.operand(args[0], depth + 1), this.operand(args[1], depth + 1));
      }
      case 'between': {
        arity(3);
        const [x, low, high] = args.map((arg) => this.operand(arg, depth + 1)) as [Operand, Operand, Operand];
        const above = comparison('>=', x, low);
        const below = comparison('<=', x, high);
        return (item) => above(item) && below(item);
      }
      case 'in': {
        arity(2);
        if (!Array.isArray(args[1])) throw bad('IN takes a list');
        const x = this.operand(args[0], depth + 1);
        const tests = args[1].map((item) => comparison('=', x, this.operand(item, depth + 2)));
        return (item) => tests.some((t) => t(item));
      }
      case 'like': {
        arity(2);
        const x = this.operand(args[0], depth + 1);
        const pattern = this.operand(args[1], depth + 1);
        if (pattern.kind !== 'string') throw bad('LIKE takes a quoted pattern');
        const read = scalarReader(x, 'string', 'LIKE');
        const regex = likeRegex(pattern.value);
        return (item) => {
          const text = read(item);
          return typeof text === 'string' && regex.test(text);
        };
      }
      case 'isnull': {
        arity(1);
        const x = this.operand(args[0], depth + 1);
        if (x.kind !== 'property') return () => false;
        return (item) => {
          const found = item.values[x.name];
          return found === undefined || found === null;
        };
      }
      case 's_intersects': {
        arity(2);
        const [a, b] = [this.operand(args[0], depth + 1), this.operand(args[1], depth + 1)];
        const [property, literal] = a.kind === 'property' ? [a, b] : [b, a];
        if (property.kind !== 'property' || property.queryable.kind !== 'geometry' || literal.kind !== 'geometry') {
          throw bad('S_INTERSECTS compares the property geometry with a geometry (WKT, GeoJSON or BBOX)');
        }
        return (item) => searchAreaMeets(literal.area, item.geometry);
      }
      case 't_intersects': {
        arity(2);
        const a = timeReader(this.operand(args[0], depth + 1));
        const b = timeReader(this.operand(args[1], depth + 1));
        return (item) => {
          const [x, y] = [a(item), b(item)];
          return x !== undefined && y !== undefined && x[0] <= y[1] && y[0] <= x[1];
        };
      }
      case 'a_contains':
      case 'a_containedby':
      case 'a_equals':
      case 'a_overlaps': {
        arity(2);
        const a = arrayReader(this.operand(args[0], depth + 1), op);
        const b = arrayReader(this.operand(args[1], depth + 1), op);
        return (item) => {
          const [x, y] = [a(item), b(item)];
          if (!x || !y) return false;
          const has = (list: string[], value: string) => list.includes(value);
          if (name === 'a_contains') return y.every((value) => has(x, value));
          if (name === 'a_containedby') return x.every((value) => has(y, value));
          if (name === 'a_overlaps') return x.some((value) => has(y, value));
          return x.every((value) => has(y, value)) && y.every((value) => has(x, value));
        };
      }
      default:
        throw bad(
          `no operator ${JSON.stringify(op.slice(0, 40))}: this server takes and, or, not, =, <>, <, <=, >, >=, like, between, in, isNull, s_intersects, t_intersects, a_contains, a_containedBy, a_equals, a_overlaps`,
        );
    }
  }
}

type ScalarKind = 'string' | 'number' | 'boolean' | 'instant' | 'date';

/** The kind an operand compares as, and how to read its value from an item. */
function scalarOf(operand: Operand): { kind: ScalarKind; read: (item: Cql2Item) => unknown } | undefined {
  switch (operand.kind) {
    case 'string':
    case 'number':
    case 'boolean':
    case 'instant':
    case 'date':
      return { kind: operand.kind, read: () => operand.value };
    case 'property': {
      const { kind } = operand.queryable;
      if (kind === 'string' || kind === 'number' || kind === 'instant' || kind === 'date') {
        return { kind, read: (item) => item.values[operand.name] };
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

function describe(operand: Operand): string {
  return operand.kind === 'property' ? `${operand.name} (${operand.queryable.kind})` : `a ${operand.kind}`;
}

function scalarReader(operand: Operand, kind: ScalarKind, op: string): (item: Cql2Item) => unknown {
  const scalar = scalarOf(operand);
  if (!scalar || scalar.kind !== kind) throw bad(`${op} takes a ${kind}, not ${describe(operand)}`);
  return scalar.read;
}

function comparison(op: string, left: Operand, right: Operand): Cql2Test {
  let a = scalarOf(left);
  let b = scalarOf(right);
  if (!a || !b) throw bad(`${op} compares values, not ${describe(a ? right : left)}`);
  // A date-time property against a quoted date-time: read as the TIMESTAMP it names.
  const asInstant = (side: Operand) => {
    if (side.kind !== 'string') return undefined;
    const ms = instantMs(side.value, 'a date-time');
    return { kind: 'instant' as const, read: () => ms };
  };
  if (a.kind === 'instant' && b.kind === 'string') b = asInstant(right) ?? b;
  if (b.kind === 'instant' && a.kind === 'string') a = asInstant(left) ?? a;
  // A date property against a quoted date: the DATE it names.
  const asDate = (side: Operand) => {
    if (side.kind !== 'string') return undefined;
    const date = dateValue(side.value);
    return { kind: 'date' as const, read: () => date };
  };
  if (a.kind === 'date' && b.kind === 'string') b = asDate(right) ?? b;
  if (b.kind === 'date' && a.kind === 'string') a = asDate(left) ?? a;
  if (a.kind !== b.kind) throw bad(`${op} cannot compare ${describe(left)} with ${describe(right)}`);
  if (a.kind === 'boolean' && op !== '=' && op !== '<>') throw bad(`${op} does not order booleans`);
  const [readA, readB] = [a.read, b.read];
  // Evaluated once when both are literals: constant values.
  const test = (x: unknown, y: unknown): boolean => {
    if (x === undefined || x === null || y === undefined || y === null) return false;
    const [p, q] = [x as number | string, y as number | string];
    switch (op) {
      case '=':
        return p === q;
      case '<>':
        return p !== q;
      case '<':
        return p < q;
      case '<=':
        return p <= q;
      case '>':
        return p > q;
      default:
        return p >= q;
    }
  };
  return (item) => test(readA(item), readB(item));
}

function timeReader(operand: Operand): (item: Cql2Item) => [number, number] | undefined {
  switch (operand.kind) {
    case 'instant':
      return () => [operand.value, operand.value];
    case 'date': {
      const span = dateSpan(operand.value);
      return () => span;
    }
    case 'interval':
      return () => [operand.start, operand.end];
    case 'property': {
      const { kind } = operand.queryable;
      if (operand.queryable.spans) return (item) => item.span;
      if (kind === 'instant') {
        return (item) => {
          const ms = item.values[operand.name];
          return typeof ms === 'number' ? [ms, ms] : undefined;
        };
      }
      if (kind === 'date') {
        return (item) => {
          const date = item.values[operand.name];
          return typeof date === 'string' ? dateSpan(date) : undefined;
        };
      }
      break;
    }
  }
  throw bad(`T_INTERSECTS takes times (a time property, TIMESTAMP, DATE or INTERVAL), not ${describe(operand)}`);
}

function arrayReader(operand: Operand, op: string): (item: Cql2Item) => string[] | undefined {
  if (operand.kind === 'array') {
    const values = operand.items.map((item) => {
      if (item.kind !== 'string') throw bad(`${op} takes lists of quoted texts`);
      return item.value;
    });
    return () => values;
  }
  if (operand.kind === 'property' && operand.queryable.kind === 'strings') {
    return (item) => {
      const found = item.values[operand.name];
      return Array.isArray(found) ? found : undefined;
    };
  }
  throw bad(`${op} takes lists (a list property or ('a', 'b')), not ${describe(operand)}`);
}

/** A CQL2 LIKE pattern: `%` any run, `_` one character, `\` escapes the next. */
function likeRegex(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === '\\' && i + 1 < pattern.length) source += (pattern[++i] as string).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    else if (c === '%') source += '.*';
    else if (c === '_') source += '.';
    else source += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 's');
}

/**
 * A filter as a test on items: `text` in `language` (cql2-text, or cql2-json as JSON text), or
 * CQL2 JSON already parsed (a POST body's), over these queryables.
 */
export function compileCql2(
  filter: unknown,
  language: Cql2Language,
  queryables: Readonly<Record<string, Queryable>>,
): Cql2Test {
  let json = filter;
  if (typeof filter === 'string') {
    if (filter.length > MAX_FILTER_LENGTH) throw bad(`at most ${MAX_FILTER_LENGTH} characters`);
    if (language === 'cql2-text') json = cql2TextToJson(filter);
    else {
      try {
        json = JSON.parse(filter);
      } catch {
        throw bad('is not JSON (filter-lang is cql2-json)');
      }
    }
  } else if (language === 'cql2-text') {
    throw bad('with filter-lang cql2-text is a text');
  } else if (JSON.stringify(filter).length > MAX_FILTER_LENGTH) {
    throw bad(`at most ${MAX_FILTER_LENGTH} characters`);
  }
  return new JsonChecker(queryables).expression(json);
}
