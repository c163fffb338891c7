import type * as ServeModule from '../src/cli/serve.js';
import type * as EnvModule from '../src/config/env.js';
import { z } from 'zod';
import { ROLES, type Role } from '../src/cli/roles.js';

/**
 * The HTTP benches' service process: `spendgate serve` with all roles (SG_BENCH_ROLE=api or
 * worker: that role alone, as `serve --role` runs it; bench:fleet), as src/cli/main.ts starts
 * it (the same `serve`, settings from the environment), plus two routes behind the same
 * authentication and rate-limit hooks, which the real CLI cannot add:
 * - POST /v1/bench/noop answers `{"ok":true}` and does nothing else: the baseline of what the
 *   platform (parsing, authentication, rate limits in the card network's class, logging,
 *   metrics) costs before any authorization work;
 * - GET /v1/bench/authorize-stats answers the store's batch counts (batches, fallbacks).
 *
 * SG_BENCH_FROM_DIST=1 runs the compiled service (dist/, after `npm run build`, as `npm start`
 * does); otherwise the sources, through tsx.
 */

// tsx turns source maps on for the whole process; `node dist/cli/main.js` runs without them,
// and with them every stack trace read costs a source map lookup.
process.setSourceMapsEnabled(false);

const root = process.env.SG_BENCH_FROM_DIST === '1' ? '../dist' : '../src';
const { serve } = (await import(`${root}/cli/serve.js`)) as typeof ServeModule;
const { loadConfig } = (await import(`${root}/config/env.js`)) as typeof EnvModule;

const role = (process.env.SG_BENCH_ROLE ?? 'all') as Role;
if (!ROLES.includes(role)) throw new Error(`SG_BENCH_ROLE must be one of ${ROLES.join(', ')}`);

try {
  await serve(loadConfig(), role, (api, store) => {
    // Counted in the card network's rate-limit class, as the authorize callback is (a variable,
    // not a literal: `networkCallback` is new in src/http/rate-limits.ts, and without it the
    // class follows the key alone).
    const noopConfig = { requiredScope: null, networkCallback: true };
    // Any body, parsed and not validated, as before: without a body schema the server now
    // refuses every body (src/http/empty-body.ts), and the baseline answered 400s.
    const noopSchema = { body: z.unknown(), hide: true };
    api.post('/v1/bench/noop', { config: noopConfig, schema: noopSchema }, (_request, reply) =>
      reply.send({ ok: true }),
    );
    api.get('/v1/bench/authorize-stats', { config: { requiredScope: null } }, (_request, reply) =>
      reply.send(store.authorizeStats()),
    );
  });
} catch (error: unknown) {
  console.error(error);
  process.exit(1);
}
