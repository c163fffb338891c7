import { describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE } from '../src/core/index.js';
import { EVENT_TYPES } from '../src/store/outbox.js';
import { documentedErrors, documentedEventTypes } from './support/reference-doc.js';

/**
 * docs/reference.md is what clients read; the catalogue and the event list are what the code
 * does. Either may change first, and this test fails until the other follows. (The comparison
 * with the upstream contract is .ci/contract-check.ts, run by CI where the contract exists.)
 */
describe('docs/reference.md', () => {
  it('lists exactly the codes of the error catalogue, each with its status, type and message', () => {
    const documented = documentedErrors();
    expect(documented.size).toBeGreaterThan(30);
    expect([...documented.keys()]).toEqual(Object.keys(ERROR_CATALOGUE));
    for (const [code, entry] of Object.entries(ERROR_CATALOGUE)) {
      expect({ code, ...documented.get(code) }).toEqual({
        code,
        status: entry.status,
        type: entry.type,
        message: entry.message,
      });
    }
  });

  it('lists exactly the event types, in the order of the code', () => {
    expect(documentedEventTypes()).toEqual([...EVENT_TYPES]);
    expect(EVENT_TYPES.length).toBeGreaterThan(15);
  });
});
