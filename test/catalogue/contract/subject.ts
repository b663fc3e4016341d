import type { SurveyCatalogue } from '../../../src/catalogue/catalogue.js';
import type { Clock } from '../../../src/clock.js';
import type { Stores } from '../../../src/stores/open-stores.js';
import { testClock } from '../../support/clock.js';
import type { StoreEngine } from '../../support/store-engines.js';

/** What a contract case is given: catalogues on the engine under test. */
export interface CatalogueSubject {
  engine: StoreEngine['name'];
  /** An empty catalogue of its own (on `clock`, default the tests' clock), closed after the test. */
  fresh(clock?: Clock): Promise<SurveyCatalogue>;
  /** The same, kept until the whole suite ends (for a `before`). */
  lasting(): Promise<SurveyCatalogue>;
  /** A second handle on the database of `catalogue`, as another server (or the CLI) has. */
  another(catalogue: SurveyCatalogue): Promise<SurveyCatalogue>;
  /** Closes what `fresh` and `another` opened (afterEach). */
  closeTestStores(): Promise<void>;
  /** Closes everything (after). */
  closeAll(): Promise<void>;
}

export function catalogueSubject(engine: StoreEngine): CatalogueSubject {
  const forTest: Stores[] = [];
  const forSuite: Stores[] = [];
  const storesOf = new Map<SurveyCatalogue, Stores>();
  const open = async (into: Stores[], opening: Promise<Stores>) => {
    const stores = await opening;
    into.push(stores);
    storesOf.set(stores.catalogue, stores);
    return stores.catalogue;
  };
  const closeEach = async (list: Stores[]) => {
    for (const stores of list.splice(0)) await stores.close();
  };
  return {
    engine: engine.name,
    fresh: (clock = testClock().now) => open(forTest, engine.open(clock)),
    lasting: () => open(forSuite, engine.open(testClock().now)),
    another(catalogue) {
      const stores = storesOf.get(catalogue);
      if (!stores) throw new Error('not a catalogue of this subject');
      return open(forTest, engine.reopen(stores, testClock().now));
    },
    closeTestStores: () => closeEach(forTest),
    async closeAll() {
      await closeEach(forTest);
      await closeEach(forSuite);
    },
  };
}
