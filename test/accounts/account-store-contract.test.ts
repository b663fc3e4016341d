/**
 * The AccountStore contract, run on every engine: SQLite and PostgreSQL (a real server, started
 * for this file). The same cases, the same expected answers.
 */
import { after, afterEach, describe } from 'node:test';
import { storeEngines } from '../support/store-engines.js';
import { accountCases } from './contract/accounts.js';
import { apiKeyCases } from './contract/api-keys.js';
import { raceCases } from './contract/races.js';
import { accountSubject } from './contract/subject.js';
import { usageCases } from './contract/usage.js';

for (const engine of storeEngines()) {
  describe(`AccountStore on ${engine.name}`, { skip: engine.skip }, () => {
    const subject = accountSubject(engine);
    afterEach(() => subject.closeTestStores());
    after(() => engine.stop());
    accountCases(subject);
    apiKeyCases(subject);
    usageCases(subject);
    raceCases(subject);
  });
}
