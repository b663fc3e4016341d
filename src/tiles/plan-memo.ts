/**
 * Plans (and their ETags) of tiles already asked for. Map clients ask for the same tiles over and
 * over; planning is a polygon test per survey and the ETag a SHA-256, small costs that add up at
 * thousands of tiles a second. A plan is only valid for the candidate list it was made from: the
 * list of a neighbourhood is one cached array until the catalogue changes (tile-candidates.ts), so
 * plans are keyed by that array's identity and a new catalogue answer never meets an old plan.
 */
import { Doorkeeper } from '../cache/doorkeeper.js';
import { LruCache } from '../cache/lru.js';
import type { TileCoord } from '../geo/web-mercator.js';
import { planTile, type TilePlan, tileEtagSeed } from './planner.js';
import type { AssetCandidate } from './tile-renderer.js';

export interface MemoPlan {
  plan: TilePlan<AssetCandidate>;
  /** What the ETag is made from (planner.ts). */
  seed: string;
  /** ETags already computed from the seed, by variant (layer and format). */
  etags: Map<string, string>;
}

export function freshPlan(tile: TileCoord, candidates: readonly AssetCandidate[]): MemoPlan {
  const plan = planTile(tile, candidates);
  return { plan, seed: tileEtagSeed(plan), etags: new Map() };
}

export class PlanMemo {
  readonly #listIds = new WeakMap<readonly AssetCandidate[], number>();
  readonly #plans: LruCache<MemoPlan>;
  /** A plan is kept from its tile's second request (doorkeeper.ts: most tiles an origin draws are asked for once). */
  readonly #asked: Doorkeeper;
  #nextListId = 0;

  /** `maxPlans`: a plan is about a kilobyte. */
  constructor(maxPlans = 65_536) {
    this.#plans = new LruCache({ maxEntries: maxPlans });
    this.#asked = new Doorkeeper(maxPlans);
  }

  plan(tile: TileCoord, candidates: readonly AssetCandidate[]): MemoPlan {
    let listId = this.#listIds.get(candidates);
    if (listId === undefined) {
      listId = this.#nextListId++;
      this.#listIds.set(candidates, listId);
    }
    const key = `${listId}|${tile.z}/${tile.x}/${tile.y}`;
    let memo = this.#plans.get(key);
    if (!memo) {
      memo = freshPlan(tile, candidates);
      if (this.#asked.secondSighting(key)) this.#plans.set(key, memo);
    }
    return memo;
  }
}
