import type { AccountStore } from '../../../src/accounts/index.js';
import type { Clock } from '../../../src/clock.js';
import type { Stores } from '../../../src/stores/open-stores.js';
import type { StoreEngine } from '../../support/store-engines.js';

/** What a contract case is given: account stores on the engine under test. */
export interface AccountSubject {
  engine: StoreEngine['name'];
  /** An empty store of its own on `clock`, closed after the test. */
  fresh(clock: Clock): Promise<AccountStore>;
  /** A second handle on the database of `store`, as another server (or the CLI) has. */
  another(store: AccountStore, clock: Clock): Promise<AccountStore>;
  closeTestStores(): Promise<void>;
}

export function accountSubject(engine: StoreEngine): AccountSubject {
  const opened: Stores[] = [];
  const storesOf = new Map<AccountStore, Stores>();
  const open = async (opening: Promise<Stores>) => {
    const stores = await opening;
    opened.push(stores);
    storesOf.set(stores.accounts, stores);
    return stores.accounts;
  };
  return {
    engine: engine.name,
    fresh: (clock) => open(engine.open(clock)),
    another(store, clock) {
      const stores = storesOf.get(store);
      if (!stores) throw new Error('not a store of this subject');
      return open(engine.reopen(stores, clock));
    },
    async closeTestStores() {
      for (const stores of opened.splice(0)) await stores.close();
    },
  };
}
