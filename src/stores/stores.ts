import type { AccountStore } from '../accounts/index.js';
import type { SurveyCatalogue } from '../catalogue/catalogue.js';
import type { EngineGuardOptions } from '../db/engine-guard.js';

/** The catalogue, the accounts and usage on the configured engine, migrated. */
export interface Stores {
  catalogue: SurveyCatalogue;
  accounts: AccountStore;
  /** The schema version of each store after migrating. */
  schema: Record<string, number>;
  close(): Promise<void>;
}

/** What an engine's outage guard tells (composition.ts logs it, and counts its calls when metrics are on). */
export type StoreEvents = Pick<EngineGuardOptions, 'onOpen' | 'onClose' | 'onCall'>;
