import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, paths } from './api-types.js';

/*
 * A typed client of spendgate's REST interface (`@spendgate/client`, `npm run pack:client`):
 * openapi-fetch over the types openapi-typescript writes from docs/openapi.json
 * (`npm run openapi`, api-types.ts). Paths, path and query parameters, bodies and answers are
 * checked at compile time, so a change of the API that breaks a client breaks its build; every
 * operation's error answer is the contract's error body (section 3).
 *
 * Depends on openapi-fetch alone: it runs in Node 20+, in browsers and in workers.
 */

export type { components, operations, paths } from './api-types.js';

export type SpendgateClient = Client<paths>;

/** The contract's error body (section 3): `code`, `message`, `param`, `type`. */
export type SpendgateErrorBody = components['schemas']['Error']['error'];

export interface SpendgateClientOptions {
  /** Where the API is served, e.g. `http://127.0.0.1:3000`. */
  readonly baseUrl: string;
  /** An API key (`sk_test_...`, `sk_live_...`), sent as a bearer token on every request. */
  readonly apiKey: string;
  /** A fetch of your own (tests, a proxy); the platform's by default. */
  readonly fetch?: typeof globalThis.fetch;
}

/** A client bound to one API and key. */
export function createSpendgateClient(options: SpendgateClientOptions): SpendgateClient {
  const client = createClient<paths>({
    baseUrl: options.baseUrl,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
  const authorize: Middleware = {
    onRequest({ request }) {
      request.headers.set('authorization', `Bearer ${options.apiKey}`);
      return request;
    },
  };
  client.use(authorize);
  return client;
}

/** An answer other than 2xx, with the contract's error body. */
export class SpendgateApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: SpendgateErrorBody,
    readonly requestId: string | null,
  ) {
    super(`${body.code}: ${body.message}`);
    this.name = 'SpendgateApiError';
  }
}

/**
 * The success body of a call, or a thrown SpendgateApiError:
 * `const vault = dataOf(await client.GET('/v1/vaults/{id}', { params: { path: { id } } }))`.
 */
export function dataOf<T>(answer: {
  readonly data?: T;
  readonly error?: unknown;
  readonly response: Response;
}): T {
  if (answer.data !== undefined) return answer.data;
  const requestId = answer.response.headers.get('request-id');
  // Not the contract's body (a proxy's page, say): the status alone, as a server error.
  const body: SpendgateErrorBody = (answer.error as { error?: SpendgateErrorBody } | undefined)
    ?.error ?? {
    type: 'server_error',
    code: 'internal_error',
    message: `The server answered ${String(answer.response.status)}.`,
    requestId: requestId ?? '',
  };
  throw new SpendgateApiError(answer.response.status, body, requestId);
}
