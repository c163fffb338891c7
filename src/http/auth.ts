import type { FastifyInstance, FastifyRequest } from 'fastify';
import { SpendgateError, assert, type Mode, type Scope } from '../core/index.js';
import { hashApiKey } from '../store/secrets/index.js';
import type { ApiScope, Store } from '../store/store.js';

/*
 * Authentication (contract section 2): `Authorization: Bearer <key>` on every /v1 route but
 * the OpenAPI document. A key names one account and one mode; its scopes gate each route.
 * A key of a mode the deployment does not serve is `invalid_api_key`, as an unknown one is.
 * The key itself never reaches a log: the logger redacts the header, and errors never echo it.
 */

export interface Authenticated {
  readonly scope: Scope;
  readonly keyId: string;
  readonly scopes: ReadonlySet<ApiScope>;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set for every authenticated route; routes without authentication never read it. */
    auth: Authenticated | null;
  }
  interface FastifyContextConfig {
    /** The scope a route needs; `null` when any valid key will do. */
    requiredScope?: ApiScope | null;
    /** Routes that need no key at all (health, the OpenAPI document). */
    public?: boolean;
  }
}

const BEARER = /^Bearer ([A-Za-z0-9_-]{1,200})$/;

export interface AuthOptions {
  readonly store: Store;
  /** The modes this deployment serves (SPENDGATE_MODES). */
  readonly modes: ReadonlySet<Mode>;
  /** How long an accepted key is remembered; 0 looks every request up. */
  readonly keyCacheMs: number;
}

/**
 * Accepted keys are remembered for `keyCacheMs` (5 s by default): the key lookup is the one
 * database read every request pays, and the card network's callbacks come by the thousand per
 * second. The price: a revoked key keeps working for up to that long in each process (README
 * says so). Unknown, revoked and expired keys are never remembered, and a remembered key is
 * forgotten at its expiry. Bounded: past the entry limit, the oldest entry goes.
 */
export const KEY_CACHE_MS_DEFAULT = 5_000;
const KEY_CACHE_ENTRIES_MAX = 10_000;

/** What a request learns from its key, built once per accepted key (all of it read-only). */
class AcceptedKeys {
  readonly #entries = new Map<string, { caller: Authenticated; untilMs: number }>();
  constructor(private readonly ttlMs: number) {}

  get(hash: string, nowMs: number): Authenticated | null {
    const entry = this.#entries.get(hash);
    if (entry === undefined) return null;
    if (entry.untilMs > nowMs) return entry.caller;
    this.#entries.delete(hash);
    return null;
  }

  set(hash: string, caller: Authenticated, expiresAtMs: number | null, nowMs: number): void {
    if (this.ttlMs === 0) return;
    if (this.#entries.size >= KEY_CACHE_ENTRIES_MAX) {
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) this.#entries.delete(oldest.value);
    }
    this.#entries.set(hash, {
      caller,
      untilMs: Math.min(nowMs + this.ttlMs, expiresAtMs ?? Infinity),
    });
  }
}

export function registerAuth(app: FastifyInstance, options: AuthOptions): void {
  const cache = new AcceptedKeys(options.keyCacheMs);
  /** The key's caller, or the refusal a client may see (unknown and revoked look alike). */
  const accepted = async (presented: string): Promise<Authenticated> => {
    const hash = hashApiKey(presented);
    const cached = cache.get(hash, Date.now());
    if (cached !== null) return cached;
    const result = await options.store.authenticateApiKey(presented);
    if (result.status === 'expired')
      throw new SpendgateError('expired_api_key', 'The API key has expired.');
    if (result.status !== 'ok' || !options.modes.has(result.key.mode)) {
      throw new SpendgateError('invalid_api_key', 'The API key is invalid.');
    }
    const key = result.key;
    const caller: Authenticated = {
      scope: { accountId: key.accountId, mode: key.mode },
      keyId: key.id,
      scopes: new Set(key.scopes),
    };
    cache.set(hash, caller, key.expiresAtMs, Date.now());
    return caller;
  };
  app.decorateRequest('auth', null);
  // onRequest: before the body is read, so that a request without a valid key costs no
  // parsing or validation, and is refused as 401 whatever its body. The hot path pays no more
  // than before: one cached lookup.
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const config = request.routeOptions.config;
    // Unknown routes reach the not-found handler without authenticating (404 before 401).
    if (config.public === true || request.routeOptions.url === undefined) return;
    const header = request.headers.authorization;
    if (header === undefined || header === '') {
      throw new SpendgateError(
        'missing_api_key',
        'Send your API key as Authorization: Bearer <key>.',
      );
    }
    const match = BEARER.exec(header);
    if (match?.[1] === undefined)
      throw new SpendgateError('invalid_api_key', 'The API key is invalid.');
    request.auth = await accepted(match[1]);
  });
}

/**
 * The scope check, as a hook of its own so that it runs after the rate limit (registered
 * between the two): a key hammering a route outside its scopes is counted like any other,
 * and its refusals carry the RateLimit headers.
 */
export function registerScopeCheck(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    const required = request.routeOptions.config.requiredScope ?? null;
    // Fails closed: a route that names a scope is never served without a caller that has it.
    if (required === null || request.auth?.scopes.has(required) === true) {
      done();
      return;
    }
    done(new SpendgateError('insufficient_scope', `This request needs the scope ${required}.`));
  });
}

/** The authenticated caller of a route that requires a key (asserted: the hook ran). */
export function authOf(request: FastifyRequest): Authenticated {
  assert(request.auth !== null, 'a route that reads its caller is reached only authenticated');
  return request.auth;
}
