import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RedisConnection } from '../redis.js';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { assert, SpendgateError } from '../core/index.js';
import type { RateLimitSettings } from '../config/env.js';
import type { Authenticated } from './auth.js';
import { ChunkedRateCounter } from './chunked-rate-counter.js';
import { withinMs } from './deadline.js';
import { RATE_LIMIT_KEY_CLASSES, type Metrics } from './metrics.js';

export const RATE_LIMIT_WINDOW_SECONDS = 1;
/** Past this, a Redis answer is too late to wait for: the process's own count decides. */
const REDIS_MS_MAX = 100;

type KeyClass = keyof RateLimitSettings;

/** What the last count said about this request's key, for the headers and GET /v1/rate-limits. */
export interface RateLimitState {
  readonly limit: number;
  readonly remaining: number;
  readonly resetMs: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    rateLimit: RateLimitState | null;
  }
  interface FastifyContextConfig {
    /** Never refuse this route because Redis is unreachable (the authorize callback). */
    rateLimitFailOpen?: boolean;
    /** Set by this module on the card network's callbacks (`NETWORK_CALLBACK_ROUTES`). */
    networkCallback?: boolean;
  }
}

/**
 * The card network's per-transaction callbacks, the routes the high class exists for: every
 * message of a card transaction's life (contract v1.2, section 16), as the network sends each
 * one per transaction. Not settlements: a clearing batch carries up to 10,000 captures in one
 * request, so the network sends few. Marked on their route config at registration
 * (`networkCallback`), and checked to exist when the server is ready: a renamed route must not
 * silently throttle the network.
 */
const NETWORK_CALLBACK_ROUTES: ReadonlySet<string> = new Set([
  'POST /v1/authorizations',
  'POST /v1/authorizations/:id/capture',
  'POST /v1/authorizations/:id/reverse',
  'POST /v1/authorizations/:id/increment',
  'POST /v1/authorizations/advice',
  'POST /v1/captures',
  'POST /v1/refunds',
]);

function keyClass(auth: Authenticated, request: FastifyRequest): KeyClass {
  if (
    request.routeOptions.config.networkCallback === true &&
    auth.scopes.size === 1 &&
    auth.scopes.has('authorizations:write')
  ) {
    return 'authorizationsPerSecond';
  }
  return auth.scope.mode === 'live' ? 'livePerSecond' : 'testPerSecond';
}

function stateOf(result: RateLimiterRes, limit: number): RateLimitState {
  return {
    limit,
    remaining: Math.max(0, limit - result.consumedPoints),
    resetMs: Math.max(0, result.msBeforeNext),
  };
}

/** Thrown inside the count to leave it at once; the hook turns it into the 429. */
class RateLimited extends Error {
  constructor(readonly state: RateLimitState) {
    super('rate limited');
  }
}

function refuse(state: RateLimitState): never {
  throw new RateLimited(state);
}

function setHeaders(reply: FastifyReply, state: RateLimitState): void {
  void reply.header('RateLimit-Limit', String(state.limit));
  void reply.header('RateLimit-Remaining', String(state.remaining));
  void reply.header('RateLimit-Reset', String(Math.ceil(state.resetMs / 1000)));
}

export interface RateLimitOptions {
  readonly redis: RedisConnection | null;
  /** REDIS_PREFIX: the counts of two deployments sharing one Redis never meet. */
  readonly redisPrefix: string;
  readonly settings: RateLimitSettings;
  /** Counts each 429 by key class; none: refusals are not counted (tests of the limiter). */
  readonly refusals?: Metrics['rateLimitRefusals'];
}

/**
 * Rate limits (contract section 6): a fixed one-second window per API key, counted in Redis so
 * that every server process shares one count. Three classes, each with its own limit: live,
 * test, and the card network's callbacks (a key whose only scope is `authorizations:write`,
 * on a route that needs that scope). The high class exists for the callbacks alone: the same
 * key on any other route (two-factor, account, lists) counts in its mode's class, so a leaked
 * network key cannot, say, guess at 10,000 requests per second.
 *
 * Counted in `onRequest`, right after authentication and before the body is read: a flood of
 * large bodies is refused before any of them is parsed.
 *
 * The card network's class is counted in chunks (chunked-rate-counter.ts): one Redis round
 * trip per 1% of its limit instead of one per callback, still one count for every process.
 *
 * When Redis is down or slow, the count falls back to one kept in this process (so a flood is
 * still bounded), except on routes marked `rateLimitFailOpen`: the card network's callbacks,
 * where the network must get a decision, and money it moved must be recorded, whatever Redis
 * does.
 */
export function registerRateLimits(app: FastifyInstance, options: RateLimitOptions): void {
  const classes = Object.keys(options.settings) as KeyClass[];
  for (const name of classes) {
    assert(
      Number.isInteger(options.settings[name]) && options.settings[name] > 0,
      `rate limit ${name} is a positive integer`,
    );
  }
  const count = sharedCounter(options, classes);
  const countNetwork = networkCounter(app, options);
  markNetworkCallbacks(app);

  app.decorateRequest('rateLimit', null);
  // Runs after the authentication hook (an onRequest hook registered before it), so the key
  // is known, and before the body is read.
  app.addHook('onRequest', async (request, reply) => {
    const auth = request.auth;
    if (auth === null) return;
    const name = keyClass(auth, request);
    try {
      request.rateLimit =
        name === 'authorizationsPerSecond'
          ? countNetwork(auth.keyId)
          : await count(request, name, auth.keyId);
    } catch (error) {
      if (!(error instanceof RateLimited)) throw error;
      options.refusals?.inc({ key_class: RATE_LIMIT_KEY_CLASSES[name] });
      setHeaders(reply, error.state);
      void reply.header('Retry-After', String(Math.max(1, Math.ceil(error.state.resetMs / 1000))));
      throw new SpendgateError(
        'rate_limit_exceeded',
        `Too many requests: this key may make ${error.state.limit} per second.`,
      );
    }
    if (request.rateLimit !== null) setHeaders(reply, request.rateLimit);
  });
}

/** The card network's class: its own, chunked count, which throws RateLimited past the limit. */
function networkCounter(
  app: FastifyInstance,
  options: RateLimitOptions,
): (keyId: string) => RateLimitState {
  const network = new ChunkedRateCounter(
    options.redis,
    `${options.redisPrefix}:rate:chunked:authorizationsPerSecond`,
    options.settings.authorizationsPerSecond,
    (reachable) => {
      if (reachable) app.log.info('rate limits of the card network counted in Redis again');
      else app.log.warn('Redis unreachable: the card network rate limit counted per process');
    },
  );
  return (keyId: string): RateLimitState => {
    const counted = network.consume(keyId, Date.now());
    const state = { limit: counted.limit, remaining: counted.remaining, resetMs: counted.resetMs };
    return counted.allowed ? state : refuse(state);
  };
}

/**
 * Every other class: counted in Redis, or in this process while Redis does not answer (null on
 * a fail-open route instead); throws RateLimited past the limit.
 */
function sharedCounter(
  options: RateLimitOptions,
  classes: readonly KeyClass[],
): (request: FastifyRequest, name: KeyClass, keyId: string) => Promise<RateLimitState | null> {
  const shared = new Map<KeyClass, RateLimiterRedis>();
  const local = new Map<KeyClass, RateLimiterMemory>();
  // The card network's class has its own, chunked count (networkCounter).
  for (const name of classes.filter((name) => name !== 'authorizationsPerSecond')) {
    const points = options.settings[name];
    if (options.redis !== null) {
      shared.set(
        name,
        new RateLimiterRedis({
          storeClient: options.redis,
          keyPrefix: `${options.redisPrefix}:rate:${name}`,
          points,
          duration: RATE_LIMIT_WINDOW_SECONDS,
          // A Redis that is reconnecting answers at once with an error, not after a queue.
          rejectIfRedisNotReady: true,
        }),
      );
    }
    local.set(name, new RateLimiterMemory({ points, duration: RATE_LIMIT_WINDOW_SECONDS }));
  }

  let degraded = false;
  return async (
    request: FastifyRequest,
    name: KeyClass,
    keyId: string,
  ): Promise<RateLimitState | null> => {
    const limit = options.settings[name];
    const sharedLimiter = shared.get(name);
    try {
      // Not a fault: without Redis, the per-process fallback below counts, as when it is down.
      if (sharedLimiter === undefined) throw new Error('no Redis configured');
      const result = await withinMs(sharedLimiter.consume(keyId), REDIS_MS_MAX);
      if (degraded) request.log.info('rate limits counted in Redis again');
      degraded = false;
      return stateOf(result, limit);
    } catch (error) {
      if (error instanceof RateLimiterRes) return refuse(stateOf(error, limit));
      if (!degraded && sharedLimiter !== undefined) {
        request.log.warn({ err: error }, 'Redis unreachable: rate limits counted per process');
      }
      degraded = sharedLimiter !== undefined;
    }
    if (request.routeOptions.config.rateLimitFailOpen === true) return null;
    const localLimiter = local.get(name);
    assert(localLimiter !== undefined, 'every class has a local limiter');
    try {
      return stateOf(await localLimiter.consume(keyId), limit);
    } catch (error) {
      if (error instanceof RateLimiterRes) return refuse(stateOf(error, limit));
      throw error;
    }
  };
}

/**
 * Marks the card network's callbacks as their routes are added, and checks when the server is
 * ready that every one of them was.
 */
function markNetworkCallbacks(app: FastifyInstance): void {
  const callbacks = new Set<string>();
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      const name = `${method} ${route.url}`;
      if (!NETWORK_CALLBACK_ROUTES.has(name)) continue;
      callbacks.add(name);
      route.config = { ...route.config, networkCallback: true };
    }
  });
  app.addHook('onReady', (done) => {
    assert(
      callbacks.size === NETWORK_CALLBACK_ROUTES.size,
      'every network callback route is registered under the rate limits',
    );
    done();
  });
}
