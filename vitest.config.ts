import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // The README examples import the packages by their published names; tests run them from
    // source (the core package's exports are a subset of the whole package's).
    alias: {
      '@spendgate/core': fileURLToPath(new URL('./src/index.ts', import.meta.url)),
      spendgate: fileURLToPath(new URL('./src/index.ts', import.meta.url)),
    },
  },
  test: {
    include: ['test/**/*.test.ts'],
    // Property tests run 10,000 cases against json-rules-engine; a slow shared CI core needs room.
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
