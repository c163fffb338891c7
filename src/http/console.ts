import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { errorBody } from './error-body.js';

/*
 * The console (/console): a static single-page app built by `npm run build` (Vite, sources in
 * console/) into dist/console, served by the API process with no key (it signs in with one in
 * the page, kept in the tab's session storage) under a strict Content-Security-Policy: every
 * script, style, image and connection from this origin only, no inline script, framed by no one.
 * The hosted card display (/card-display, same origin) is the one frame it may hold.
 */

/** dist/console, from src/http (tests, tsx) and from dist/http (the build) alike. */
export const CONSOLE_ROOT = fileURLToPath(new URL('../../dist/console/', import.meta.url));

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "frame-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "manifest-src 'self'",
].join('; ');

export function registerConsole(app: FastifyInstance, root: string = CONSOLE_ROOT): void {
  if (!existsSync(`${root}/index.html`)) {
    // A checkout whose console is not built: say so rather than a bare 404.
    app.get('/console*', { schema: { hide: true } }, async (request, reply) =>
      reply
        .code(503)
        .send(
          errorBody(
            'service_unavailable',
            request.id,
            'The console is not built: run `npm run build`, then start the server again.',
          ),
        ),
    );
    return;
  }
  // The address people type: on to the page's folder, which its relative assets need.
  app.get('/console', { schema: { hide: true } }, async (_request, reply) =>
    reply.redirect('/console/', 301),
  );
  void app.register(fastifyStatic, {
    root,
    prefix: '/console/',
    index: 'index.html',
    decorateReply: false,
    setHeaders(response, path) {
      void response.header('content-security-policy', CONSOLE_CSP);
      void response.header('x-content-type-options', 'nosniff');
      void response.header('referrer-policy', 'no-referrer');
      // Vite names every asset by its content's hash: cached for good; the page never.
      const hashed = path.includes('/assets/');
      void response.header(
        'cache-control',
        hashed ? 'public, max-age=31536000, immutable' : 'no-cache',
      );
    },
  });
}
