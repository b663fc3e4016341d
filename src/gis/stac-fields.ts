/**
 * The STAC API fields extension on an item: which dotted paths it keeps. Only exclusions: the
 * whole item less them. Otherwise the default set (DEFAULT_FIELDS) and the inclusions, less the
 * exclusions; where an inclusion and an exclusion meet, the more specific path decides
 * (`properties` excluded and `properties.datetime` included keeps only that property); on the
 * same path an inclusion asked for wins, and an exclusion beats the default set. Pure.
 */

/**
 * The fields extension's choice: the dotted paths to include and to exclude. `include`
 * present (even empty) means the default set (DEFAULT_FIELDS) and these.
 */
export interface FieldsChoice {
  include?: string[];
  exclude: string[];
}

/** What an item keeps when `fields` names only some (STAC API fields extension). */
export const DEFAULT_FIELDS = [
  'type',
  'stac_version',
  'stac_extensions',
  'id',
  'collection',
  'geometry',
  'bbox',
  'links',
  'assets',
  'properties.datetime',
];

type Json = Record<string, unknown>;

interface Rule {
  path: string[];
  keep: boolean;
  /** On a tie of lengths: an inclusion asked for (2) beats an exclusion (1), which beats the default set (0). */
  strength: number;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether `prefix` is `path` or an ancestor of it. */
function startsWith(path: readonly string[], prefix: readonly string[]): boolean {
  return prefix.length <= path.length && prefix.every((part, i) => path[i] === part);
}

/** The rule that decides `path`: the longest one at it or above it, the strongest on a tie. */
function decidingRule(rules: readonly Rule[], path: readonly string[]): Rule | undefined {
  let best: Rule | undefined;
  for (const rule of rules) {
    if (!startsWith(path, rule.path)) continue;
    if (
      !best ||
      rule.path.length > best.path.length ||
      (rule.path.length === best.path.length && rule.strength > best.strength)
    ) {
      best = rule;
    }
  }
  return best;
}

function pick(value: Json, path: string[], rules: readonly Rule[], keepByDefault: boolean): Json {
  const kept: Json = {};
  for (const [key, child] of Object.entries(value)) {
    const here = [...path, key];
    const rule = decidingRule(rules, here);
    const keep = rule ? rule.keep : keepByDefault;
    // A rule below this one changes part of it: go in (objects only; a list is kept or not whole).
    const deeper =
      isObject(child) && rules.some((other) => other.path.length > here.length && startsWith(other.path, here));
    if (deeper) {
      const inner = pick(child as Json, here, rules, keep);
      if (keep || Object.keys(inner).length > 0) kept[key] = inner;
    } else if (keep) {
      kept[key] = child;
    }
  }
  return kept;
}

export function applyFields(item: Json, choice: FieldsChoice | undefined): Json {
  if (!choice) return item;
  const split = (text: string) => text.split('.');
  const rules: Rule[] = choice.exclude.map((path) => ({ path: split(path), keep: false, strength: 1 }));
  if (choice.include === undefined) return pick(item, [], rules, true);
  for (const path of DEFAULT_FIELDS) rules.push({ path: split(path), keep: true, strength: 0 });
  for (const path of choice.include) rules.push({ path: split(path), keep: true, strength: 2 });
  return pick(item, [], rules, false);
}
