import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { setHeapGrowingPercent } from '../src/cli/heap-growth.js';
import { HEAP_GROWING_PERCENT_MAX } from '../src/config/env.js';

describe('setHeapGrowingPercent', () => {
  it("sets V8's heap growing flag, and leaves V8 its own choice at 0", () => {
    const set: string[] = [];
    setHeapGrowingPercent(300, (flags) => set.push(flags));
    setHeapGrowingPercent(0, (flags) => set.push(flags));
    expect(set).toEqual(['--heap-growing-percent=300']);
  });

  it('refuses a percent outside 0 and the maximum', () => {
    const set: string[] = [];
    for (const percent of [HEAP_GROWING_PERCENT_MAX + 1, -1, 12.5]) {
      expect(() => {
        setHeapGrowingPercent(percent, (flags) => set.push(flags));
      }).toThrow(/heap growing/);
    }
    expect(set).toEqual([]);
  });

  it("names a flag this Node's V8 has, so that an upgrade that drops it fails here", () => {
    // setFlagsFromString ignores a flag it does not know, after a line on stderr nobody reads.
    const options = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' });
    expect(options).toMatch(/^\s*--heap-growing-percent\b/m);
  });
});
