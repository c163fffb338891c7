import type { FastifyInstance } from 'fastify';
import type { AuthorizeSettings } from '../../config/env.js';
import type { Store } from '../../store/store.js';
import type { Metrics } from '../metrics.js';
import type { StandInRecords } from '../stand-in-records.js';
import { ProcessorDispatcher } from './dispatch.js';
import type { ProcessorLookups } from './lookups.js';
import { LITHIC_ROUTE } from './lithic-route.js';
import { MARQETA_ROUTE } from './marqeta-route.js';
import { registerProcessorRoute } from './message-route.js';
import { STRIPE_ROUTE } from './stripe-route.js';

/**
 * The processors' own doors (contract v1.2, section 17), beside the /v1 key plugin: a
 * processor authenticates by its signature, not an API key. One plugin of their own, so that
 * its raw-body parser and pass-through validator reach these routes and no other; and one
 * dispatcher for every adapter (the Lithic and Marqeta routes register here too).
 */
export function registerProcessorMessageRoutes(
  app: FastifyInstance,
  store: Store,
  settings: AuthorizeSettings,
  metrics: Metrics,
  standIn: StandInRecords,
  lookups: ProcessorLookups,
): void {
  void app.register((scoped, _options, done) => {
    const dispatcher = new ProcessorDispatcher(
      store,
      settings,
      scoped.log,
      standIn,
      metrics.decisions,
      lookups,
    );
    // The body as sent: a signature is over bytes, and any parse before it could change them.
    scoped.removeAllContentTypeParsers();
    scoped.addContentTypeParser(
      'application/json',
      { parseAs: 'buffer' },
      (_request, body, done) => {
        done(null, body);
      },
    );
    // Nothing to validate before the signature: each adapter reads the verified body itself.
    scoped.setValidatorCompiler(() => (value: unknown) => ({ value }));
    const dependencies = { lookups, dispatcher, messages: metrics.processorMessages };
    for (const route of [STRIPE_ROUTE, LITHIC_ROUTE, MARQETA_ROUTE])
      registerProcessorRoute(scoped, dependencies, route);
    done();
  });
}
