/**
 * The SurveyCatalogue contract, run on every engine: SQLite and PostgreSQL/PostGIS (a real
 * server, started for this file). The same cases, the same expected answers.
 */
import { after, afterEach, describe } from 'node:test';
import { storeEngines } from '../support/store-engines.js';
import { bruteForceCases } from './contract/brute-force.js';
import { changeCases } from './contract/changes.js';
import { searchCases } from './contract/search.js';
import { storageCases } from './contract/storage.js';
import { catalogueSubject } from './contract/subject.js';
import { groupMaintenanceCases } from './contract/walk-groups.js';

for (const engine of storeEngines()) {
  describe(`SurveyCatalogue on ${engine.name}`, { skip: engine.skip }, () => {
    const subject = catalogueSubject(engine);
    afterEach(() => subject.closeTestStores());
    after(async () => {
      await subject.closeAll();
      await engine.stop();
    });
    storageCases(subject);
    searchCases(subject);
    bruteForceCases(subject);
    changeCases(subject);
    groupMaintenanceCases(subject);
  });
}
