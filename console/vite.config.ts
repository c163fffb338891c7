import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/*
 * The console's build (`npm run build`): console/ into dist/console, every asset named by its
 * hash and served from /console/ by the API process (src/http/console.ts). No CDN, no inline
 * script (the page's CSP allows only its own origin's files).
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  publicDir: false,
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    // Kept apart from the page: a CSP of 'self' refuses an inlined data: script or style.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 400,
  },
});
