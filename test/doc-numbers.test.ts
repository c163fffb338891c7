import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compilePolicy } from '../src/core/index.js';
import { AUTHORIZE_SPARE_LANE_AFTER_MS } from '../src/store/authorize/engine.js';
import {
  PAUSE_BATCHES_MAX,
  PAUSE_BATCHES_MIN,
  STALE_SHARE_MAX,
  WINDOW_BATCHES,
} from '../src/store/authorize/known-state.js';

/**
 * Numbers the design documents quote from the code, held equal to the code (issue 39: the
 * known state's pause, the spare lane's timer and the compiler's functions had drifted), as
 * readme.test.ts does for the status list.
 */
const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');
const grouped = (value: number) => value.toLocaleString('en-US');
const WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];

describe('numbers the documents quote', () => {
  it("ARCHITECTURE.md's batches, known state and spare lane are the code's", () => {
    const architecture = read('ARCHITECTURE.md').replace(/\s+/g, ' ');
    expect(architecture).toContain(`set aside for ${grouped(PAUSE_BATCHES_MIN)} batches`);
    expect(architecture).toContain(`(up to ${grouped(PAUSE_BATCHES_MAX)} batches)`);
    expect(architecture).toContain(`after ${String(AUTHORIZE_SPARE_LANE_AFTER_MS)} ms`);
    expect(architecture).toContain(`held up ${String(AUTHORIZE_SPARE_LANE_AFTER_MS)} ms`);
    expect(architecture).toContain(
      `more than one batch in ${WORDS[STALE_SHARE_MAX] ?? String(STALE_SHARE_MAX)} of a window of ${String(WINDOW_BATCHES)} goes stale`,
    );
  });

  it("the compiler's design note names every function it generates", () => {
    const compiled = compilePolicy({ rules: [] }) as unknown as Record<string, unknown>;
    const generated = Object.keys(compiled).filter((name) => typeof compiled[name] === 'function');
    const design = read('src/core/policy/DESIGN.md').replace(/\s+/g, ' ');
    expect(design).toContain(`into ${WORDS[generated.length] ?? '?'} plain synchronous`);
    for (const name of generated) expect(design).toContain(`\`${name}\``);
  });
});
