import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventually } from '../../support/eventually.js';
import { survey } from '../helpers.js';
import type { CatalogueSubject } from './subject.js';

/** The change marker: what every server's caches are checked against. */
export function changeCases(subject: CatalogueSubject): void {
  describe('change marker', () => {
    it('moves at once for its own puts and deletes', async () => {
      const catalogue = await subject.fresh();
      const start = await catalogue.changeMarker();
      await catalogue.put(survey('s1'));
      const afterPut = await catalogue.changeMarker();
      assert.notEqual(afterPut, start);
      await catalogue.delete('s1');
      assert.notEqual(await catalogue.changeMarker(), afterPut);
    });

    it('moves on another server within 2 s when a survey is put, replaced or deleted there', async () => {
      const server = await subject.fresh();
      const ingest = await subject.another(server);
      const steps: [string, () => Promise<unknown>][] = [
        ['put', () => ingest.put(survey('s1'))],
        ['replaced', () => ingest.put(survey('s1', { version: 2 }))],
        ['deleted', () => ingest.delete('s1')],
      ];
      for (const [what, change] of steps) {
        const before = await server.changeMarker();
        await change();
        await eventually(what, async () => (await server.changeMarker()) !== before);
      }
      assert.equal(await server.get('s1'), undefined);
      assert.equal(await server.reserveVersion('s1'), 3, 'version counters are shared');
    });
  });
}
