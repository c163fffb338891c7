import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // The README example imports the package by its published name; tests run it from source.
    alias: { spendgate: fileURLToPath(new URL('./src/index.ts', import.meta.url)) },
  },
  test: {
    include: ['test/**/*.test.ts'],
    // Property tests run 10,000 cases against json-rules-engine; a slow shared CI core needs room.
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
