import type { FastifyInstance, FastifyRequest } from 'fastify';
import { SpendgateError, type Mode, type Scope } from '../core/index.js';
import type { ApiScope } from '../store/ops/accounts.js';
import type { Store } from '../store/store.js';

/**
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
}

export function registerAuth(app: FastifyInstance, options: AuthOptions): void {
  app.decorateRequest('auth', null);
  app.addHook('preHandler', async (request: FastifyRequest) => {
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
    const result = await options.store.authenticateApiKey(match[1]);
    if (result.status === 'expired')
      throw new SpendgateError('expired_api_key', 'The API key has expired.');
    if (result.status !== 'ok' || !options.modes.has(result.key.mode)) {
      throw new SpendgateError('invalid_api_key', 'The API key is invalid.');
    }
    const scopes = new Set(result.key.scopes);
    const required = config.requiredScope ?? null;
    if (required !== null && !scopes.has(required)) {
      throw new SpendgateError('insufficient_scope', `This request needs the scope ${required}.`);
    }
    request.auth = {
      scope: { accountId: result.key.accountId, mode: result.key.mode },
      keyId: result.key.id,
      scopes,
    };
  });
}

/** The authenticated caller of a route that requires a key (asserted: the hook ran). */
export function authOf(request: FastifyRequest): Authenticated {
  if (request.auth === null) throw new Error('route reached without authentication');
  return request.auth;
}
